"""The machine's files, read into the parsers' snapshots. Every reader takes its root (docs/behaviour.md §7) and
returns a `Result`: the snapshot, or a `ParseError` naming the file and why it could not be read or parsed, so
that one misbehaving source only nulls its own section (docs/behaviour.md §3.10) and the shell can say why."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from returns.result import Failure, Result, Success

from orca.sample.compute.memory import MEMINFO_KEYS
from orca.sample.compute.snapshot import DiskReading
from orca.sample.parse import block, meminfo
from orca.sample.parse.errors import ParseError
from orca.sample.parse.meminfo import MemInfo
from orca.sample.shell.bounded import KeptFiles, read_or_none
from orca.sample.shell.report import reason_of

T = TypeVar("T")


KERNEL_FILES_KEPT_AT_MOST = 32
_KERNEL_FILES = KeptFiles(KERNEL_FILES_KEPT_AT_MOST)
"""The kernel files read every line, kept open: one set for the process (the files are the same for every
Sampler, and pread keeps them safe across threads), bounded, living as long as the process."""


_GIVEN: dict[str, bytes | OSError] = {}
"""Kernel files read before the readers loaded (the command's baseline, docs/behaviour.md §2.2): path -> what the read
gave, each used once in place of a read, only inside `reading_given` and by its thread."""
_GIVEN_TO = [0]
"""The thread inside `reading_given`."""


def read_kernel_file(path: str) -> str:
    """The text of a kernel file read every line, through a kept descriptor; `OSError` when it cannot be read."""
    if _GIVEN and path in _GIVEN and threading.get_ident() == _GIVEN_TO[0]:
        given = _GIVEN.pop(path)
        if isinstance(given, OSError):
            raise given
        return given.decode("utf-8", errors="replace")
    return _KERNEL_FILES.read(path).decode("utf-8", errors="replace")


def kernel_files_bytes(paths: tuple[str, ...]) -> dict[str, bytes | OSError]:
    """Each of the kernel files `paths` -> its bytes, or the `OSError` reading it raised: read through kept
    descriptors, in one call."""
    return _KERNEL_FILES.read_each(paths)


def reading_given(texts: Mapping[str, bytes | OSError], take: Callable[[], T]) -> T:
    """`take()`, with each kernel file of `texts` given from there (once) instead of read: readings taken earlier,
    parsed by the same readers as every line's. Another thread reading meanwhile reads the files themselves."""
    _GIVEN_TO[0] = threading.get_ident()
    _GIVEN.update(texts)
    try:
        return take()
    finally:
        _GIVEN.clear()


def read_parsed(path: str, parse: Callable[[str], Result[T, ParseError]]) -> Result[T, ParseError]:
    """The kernel file at `path`, parsed; a failure to read or to parse names `path` itself (a fixture root's
    file, not the kernel's name for it)."""
    try:
        text = read_kernel_file(path)
    except OSError as error:
        return Failure(ParseError(path, reason_of(error)))
    parsed = parse(text)
    if isinstance(parsed, Success):  # the usual case: no failure to rename, no closure made for it
        return parsed
    return Failure(ParseError(path, parsed.failure().reason))


def parsed_file(
    proc: str, name: str, parse: Callable[[str], Result[T, ParseError]]
) -> Callable[[], Result[T, ParseError]]:
    """A reader of `<proc>/<name>` parsed by `parse` (`read_parsed`), its path joined once: it runs every line."""
    return functools.partial(read_parsed, os.path.join(proc, name), parse)


parse_wanted_meminfo: Callable[[str], Result[MemInfo, ParseError]] = functools.partial(meminfo.parse, keys=MEMINFO_KEYS)
"""/proc/meminfo's keys that `mem` reads, and no others."""


def read_block_links(sys: str = "/sys") -> dict[str, str] | None:
    """Name -> link target of each entry of `<sys>/block`; None when the directory cannot be listed."""
    directory = os.path.join(sys, "block")
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    links: dict[str, str] = {}
    for name in names:
        try:
            links[name] = os.readlink(os.path.join(directory, name))
        except OSError:
            continue  # vanished, or not a link: it names no device
    return links


def read_whole_disks(sys: str = "/sys") -> frozenset[str] | None:
    """The whole physical disks of `<sys>/block` (docs/behaviour.md §3.6); None without a list (the skip list
    applies then).

    A list with no physical disk at all (a container's partial /sys) is no list either: counting nothing would
    hide all disk traffic, while the skip list still leaves out loop, ram, zram, dm and md devices."""
    links = read_block_links(sys)
    disks = None if links is None else block.whole_disks(links)
    return disks or None


def read_device_numbers(sys: str, disks: frozenset[str]) -> frozenset[str] | None:
    """The `MAJ:MIN` of each of `disks` (`<sys>/block/<disk>/dev`); None when none can be read."""
    numbers: set[str] = set()
    for disk in disks:
        data = read_or_none(os.path.join(sys, "block", disk, "dev"))
        number = None if data is None else block.device_number(data.decode("ascii", errors="replace"))
        if number is not None:
            numbers.add(number)
    return frozenset(numbers) or None


def existing_ancestor(path: str) -> str:
    """`path` itself when it exists, else its nearest existing ancestor (docs/behaviour.md §3.5: a directory not
    made yet)."""
    current = os.path.abspath(path)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def read_disk(path: str) -> DiskReading:
    """`stat` and `statvfs` of `path` (or of its nearest existing ancestor), reported under `path`; `OSError`
    when neither can be measured."""
    try:
        st_dev, measured = os.stat(path).st_dev, path  # it exists: the usual case, one call fewer
    except OSError:
        measured = existing_ancestor(path)
        st_dev = os.stat(measured).st_dev
    vfs = os.statvfs(measured)
    return DiskReading(path, st_dev, vfs.f_blocks, vfs.f_bfree, vfs.f_bavail, vfs.f_frsize)


def read_disks(dirs: Sequence[str]) -> Result[tuple[DiskReading, ...], ParseError]:
    """One reading per directory that can be measured; a failure when there were directories and none could be."""
    readings: list[DiskReading] = []
    failure: ParseError | None = None
    for path in dirs:
        try:
            readings.append(read_disk(path))
        except (OSError, ValueError) as error:
            failure = failure or ParseError(path, reason_of(error))
    if failure is not None and not readings:
        return Failure(failure)
    return Success(tuple(readings))
