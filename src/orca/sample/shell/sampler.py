"""`Sampler` of the documented API (docs/api.md): what a line reads, and the line maker it feeds
(docs/behaviour.md §3).

One path makes every line: the host's counters read at one moment (the kernel files' bytes through descriptors kept
open, `machine/early.py`, each parsed once) and a table of readers walked beside them (`machine/readers.py`, or
psutil's), made into a complete `Snapshot` by one pure function (`compute/snapshot.py`), and the line maker
(`compute/line_maker.py`) makes the line from the previous snapshot and this one and says which failures to tell:
a source that fails makes its section null and is told on standard error once, until it reads well again
(docs/behaviour.md §3.10).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from orca.sample.compute.line_maker import LineMaker
from orca.sample.compute.snapshot import HostReadings, Readings, Snapshot, snapshot_of
from orca.sample.shell.machine.choice import machine_readers
from orca.sample.shell.machine.fs import FS
from orca.sample.shell.machine.source import host_name
from orca.sample.shell.report import say

if TYPE_CHECKING:
    from orca.sample.compute.run import CommandEnd
    from orca.sample.parse.errors import ParseError
    from orca.sample.shell.machine.early import KernelTexts


class RunCommand(Protocol):
    """`-- COMMAND` as the sampler sees it (`shell/cli/wrap.py`): what ran, and how it ended."""

    @property
    def argv(self) -> tuple[str, ...]:
        """COMMAND and its arguments, for the first line."""

    def ended(self) -> CommandEnd | None:
        """How it ended, once it has (reaping it, without waiting), for the last line; None while it runs."""


class Sampler:
    """Takes the baseline readings when made; each `line()` is a JSON line covering the time since the last one.

    `baseline`: the command's readings, taken before it loaded the sampler (`machine/early.py`): parsed into the
    baseline in place of reading the same files again, so the first line covers the time from them.

    `command`: `-- COMMAND`, run as `root` (or not started: no `root`), with `baseline` read just before it was
    started: the run starts from no process at those readings, so the lines cover COMMAND from its first moment. The
    first line says what ran, the last line (`last_line_bytes`) how it ended.

    `close()` (or `with Sampler(...) as sampler:`) closes the descriptors it keeps between lines."""

    def __init__(
        self,
        root: int,
        argv0: str,
        dirs: Sequence[str],
        cgroup: str = "",
        names: str = "",
        *,
        proc: str = "/proc",
        sys: str = "/sys",
        reader: str = "",
        baseline: KernelTexts | None = None,
        command: RunCommand | None = None,
    ) -> None:
        self.root = root if root > 0 else None
        """The `--pid` process; None without one (root <= 0 in the documented API)."""
        self.argv0 = argv0
        self.dirs = tuple(dirs)
        self.cgroup = cgroup
        self.fs = FS(proc, sys)
        self.host = host_name()
        self._command = command
        self._run = self.root is not None or bool(argv0) or command is not None
        """The line has a `run` (--pid, --match, COMMAND)."""
        # `reader` ("proc", "psutil"), else ORCA_SAMPLE_READER, else psutil where <proc>/stat cannot be read.
        # COMMAND's run starts from nothing, at the first readings, taken just before it was started.
        self._readers = machine_readers(
            reader, self.fs, self.dirs, self.root, argv0, cgroup, names, run=self._run, from_start=command is not None
        )
        # The run's processes' CPU times are read for the baseline by path (no line takes its `rss`: `mem` is a
        # reading of the moment), and their descriptors, kept from then on, are opened after the first line's
        # kernel files.
        first = self._snapshot(*self._readers.read_baseline(baseline), start=None)
        self.started_ns = first.monotonic_ns
        """`time.monotonic_ns()` of the baseline readings: the start the loop's schedule counts from
        (docs/behaviour.md §2.2)."""
        self.start = first.wall
        """`time.time()` of the baseline readings: every line's `start`."""
        self._maker = LineMaker(first)
        _tell(self._maker.failures_to_tell(first))

    def line(self) -> str:
        """The next line (no newline): the new readings against the previous ones, which they then replace."""
        return self.line_bytes().decode()

    def line_bytes(self) -> bytes:
        """`line()` as the encoder made it, for the outputs, which write bytes."""
        return self._line(*self._readers.read())

    def last_line_bytes(self) -> bytes:
        """The line written as sampling ends: `line_bytes()`, with how COMMAND ended when it has. COMMAND is
        reaped after the readings, so that they still find it (a zombie's times are its last)."""
        host, readings = self._readers.read()
        return self._line(host, readings, None if self._command is None else self._command.ended())

    def _line(self, host: HostReadings, readings: Readings, ended: CommandEnd | None = None) -> bytes:
        command = self._command
        # The first line of a COMMAND's says what ran.
        argv = command.argv if command is not None and self._maker.lines == 0 else None
        data, failures = self._maker.line(self._snapshot(host, readings, self.start, argv, ended))
        if failures:
            _tell(failures)
        return data

    def _snapshot(
        self,
        host: HostReadings,
        readings: Readings,
        start: float | None,
        command: tuple[str, ...] | None = None,
        ended: CommandEnd | None = None,
    ) -> Snapshot:
        return snapshot_of(
            host, readings, name=self.host, start=start, containers_enabled=bool(self.cgroup), run_enabled=self._run,
            command=command, ended=ended,
        )

    def close(self) -> None:
        """Close the descriptors kept between lines (a later line would open what it needs again)."""
        self._readers.close()

    def __enter__(self) -> Sampler:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _tell(failures: Sequence[ParseError]) -> None:
    for failure in failures:
        say(f"cannot read {failure.source}: {failure.reason}")
