"""Which source of readings a sampler uses: the kernel's files under /proc, or psutil where there is no /proc.

Kept light (no psutil, no parser is imported here): the command line checks `ORCA_SAMPLE_READER` before anything
else loads, so a value that cannot be honoured is a malformed command line (exit 2), never a sampler that starts and
then writes `null`s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from orca.sample.shared.sysconf import PROC
from orca.sample.shared.sysconf import psutil_installed as psutil_installed  # the tests make it answer either way

if TYPE_CHECKING:
    from orca.sample.shell.machine.fs import FS
    from orca.sample.shell.machine.readers import MachineReaders

READER_VARIABLE = "ORCA_SAMPLE_READER"
ReaderName = Literal["proc", "psutil"]
READERS: tuple[ReaderName, ...] = ("proc", "psutil")


class ReaderUnavailable(ValueError):
    """A forced reader that is not one of `READERS`, or `psutil` where psutil is not installed."""


def proc_stat_readable(proc: str = PROC) -> bool:
    """Whether `<proc>/stat` opens and reads: a Linux /proc (or a fixture tree standing in for it)."""
    try:
        with open(os.path.join(proc, "stat"), "rb") as stat:
            return bool(stat.read(64))
    except OSError:
        return False


def forced_reader(environ: Mapping[str, str] | None = None) -> ReaderName | None:
    """`ORCA_SAMPLE_READER` when set to a usable reader; None when unset or empty (the platform decides).

    Raises ReaderUnavailable with a one-line reason for any other value, or for `psutil` without psutil."""
    value = (os.environ if environ is None else environ).get(READER_VARIABLE, "")
    if value == "":
        return None
    if value == "proc":
        return "proc"
    if value == "psutil":
        if not psutil_installed():
            raise ReaderUnavailable(f"{READER_VARIABLE}=psutil, but psutil is not installed (pip install psutil)")
        return "psutil"
    raise ReaderUnavailable(f"{READER_VARIABLE}: {value!r} is neither `proc` nor `psutil`")


def reader_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """Why `ORCA_SAMPLE_READER` cannot be honoured, or None."""
    try:
        forced_reader(environ)
    except ReaderUnavailable as problem:
        return str(problem)
    return None


def psutil_instead_of(proc: str) -> bool:
    """Whether the machine's readings come from psutil rather than from `proc`: only for the machine's own
    `/proc` (a root given in its place, such as a test's fixture tree, is read as it is), where its `stat` cannot
    be read and psutil is installed (without it the /proc readers stay, writing `null` sections)."""
    return proc == PROC and not proc_stat_readable(proc) and psutil_installed()


def choose_reader(reader: str = "", proc: str = PROC, environ: Mapping[str, str] | None = None) -> ReaderName:
    """`reader` when given, else `ORCA_SAMPLE_READER`, else psutil where `psutil_instead_of(proc)`, else `proc`.

    >>> choose_reader("proc"), choose_reader("", environ={READER_VARIABLE: "proc"})
    ('proc', 'proc')
    >>> choose_reader("", "/a/fixture/tree", environ={})
    'proc'
    """
    chosen = forced_reader({READER_VARIABLE: reader}) if reader else forced_reader(environ)
    if chosen is not None:
        return chosen
    return "psutil" if psutil_instead_of(proc) else "proc"


def machine_readers(
    reader: str, fs: FS, dirs: Sequence[str], root: int | None, argv0: str, cgroup: str, names: str, *, run: bool,
    from_start: bool = False,
) -> MachineReaders:
    """A sampler's readers: psutil's when that is the choice (see `choose_reader`), else the /proc readers. `run`:
    the line has a `run` (--pid, --match, or a COMMAND); `from_start`: COMMAND's, started just after the first
    readings were taken."""
    if choose_reader(reader, fs.proc) == "psutil":
        from orca.sample.shell.machine.psutil_reader import psutil_readers

        return psutil_readers(fs, dirs, root, argv0, run=run, from_start=from_start)
    from orca.sample.shell.machine.readers import proc_readers

    return proc_readers(fs, dirs, root, argv0, cgroup, names, run=run, from_start=from_start)
