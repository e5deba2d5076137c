"""`Sampler` of the documented API (docs/api.md): the readings a line is the difference of, and what to read
(docs/behaviour.md §3).

One path makes every line: the kernel files' bytes read through descriptors kept open (`machine/early.py`), parsed
by one pure function (`compute/snapshot.py`), the readings that are not kernel texts added, the line computed from
the previous snapshot and this one (`compute/build.py`) and encoded (`compute/encode.py`). A source that fails
makes its section null and is told on standard error once, until it reads well again (docs/behaviour.md §3.10).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Protocol

import msgspec
from returns.result import Result, Success
from toolz import pipe

from orca.sample.compute.build import build_line
from orca.sample.compute.encode import encode_line
from orca.sample.compute.snapshot import Snapshot, snapshot_of
from orca.sample.parse import proc_stat
from orca.sample.parse.errors import ParseError
from orca.sample.shell.bounded import KeptFiles
from orca.sample.shell.machine.choice import psutil_reader_for
from orca.sample.shell.machine.early import KernelTexts, read_kernel_texts
from orca.sample.shell.machine.fs import FS
from orca.sample.shell.machine.kernel import (
    KERNEL_FILES_KEPT_AT_MOST,
    read_device_numbers,
    read_disks,
    read_whole_disks,
)
from orca.sample.shell.machine.source import attempt, host_name
from orca.sample.shell.report import say

if TYPE_CHECKING:
    from orca.sample.compute.own_cgroup import CgroupReading
    from orca.sample.compute.run import CommandEnd
    from orca.sample.shell.machine.containers import ContainerSource
    from orca.sample.shell.machine.own_cgroup import OwnCgroup
    from orca.sample.shell.procs.scanner import ProcessScanner

_NAME = attrgetter("name")
_NO_LIMIT: Result[CgroupReading | None, ParseError] = Success(None)
CGROUP_LIMITS_EVERY_NS = 60_000_000_000
"""How often a sampler under no cgroup limit looks for one again (a limit is set when a pod or unit is made)."""


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

    `command`: `-- COMMAND`, run as `root` (or not started: no `root`): the first line says what ran, the last line
    (`last_line_bytes`) how it ended.

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
        self._first = command is not None
        """The next line is the first of a COMMAND's: it carries the command."""
        has_run = self.root is not None or bool(argv0) or command is not None
        # `reader` ("proc", "psutil"), else ORCA_SAMPLE_READER, else psutil where <proc>/stat cannot be read.
        self._psutil = psutil_reader_for(reader, self.root, argv0, self.dirs, cgroup, self.fs, run=has_run)
        self._kernel_files = KeptFiles(KERNEL_FILES_KEPT_AT_MOST)
        # The process scans and their parsers load only for a run to measure (--pid, --match, COMMAND).
        self._scanner: ProcessScanner | None = None
        if has_run:
            from orca.sample.shell.procs.scanner import ProcessScanner

            self._scanner = ProcessScanner(proc)
        self._rss_source = f"the run's processes in {proc}"
        self._containers: ContainerSource | None = None
        if cgroup:
            from orca.sample.shell.machine.containers import ContainerSource

            self._containers = ContainerSource(cgroup, names, proc)
        # /sys/block is read again only when /proc/diskstats names other devices (a disk came or went): its links
        # cost a dozen system calls a line that would almost always give the same answer.
        self._disk_names: frozenset[str] | None = None
        self._whole_disks: frozenset[str] | None = None
        self._container_disks: frozenset[str] | None = None
        """`MAJ:MIN` of the whole disks, for the containers' `io`: read with the whole disks, only with --cgroup."""
        # The own cgroup's limits (docs/behaviour.md §3.11): looked for once a minute while there are none, read every
        # line while there are; not with the psutil reader.
        self._own_cgroup: OwnCgroup | None = None
        if self._psutil is None:
            from orca.sample.shell.machine.own_cgroup import OwnCgroup

            self._own_cgroup = OwnCgroup(proc)
        self._cgroup: Result[CgroupReading | None, ParseError] = _NO_LIMIT
        self._cgroup_read_ns = -CGROUP_LIMITS_EVERY_NS
        self._failing: set[str] = set()
        """The sources whose failure has been told and that have not read well since."""
        self._previous = self._baseline(baseline)
        self.started_ns = self._previous.monotonic_ns
        """`time.monotonic_ns()` of the baseline readings: the start the loop's schedule counts from
        (docs/behaviour.md §2.2)."""
        self.start = self._previous.wall
        """`time.time()` of the baseline readings: every line's `start`."""

    def _baseline(self, early: KernelTexts | None) -> Snapshot:
        """The first readings: `early` when it was read under this sampler's roots and covers every rate it has
        (the psutil reader and the containers' files have no early readings), parsed now; else read now.

        The run's processes' CPU times are read for it by path: no line takes its `rss` (`mem` is a reading of the
        moment), and their descriptors, kept from then on, are opened only after the first line's kernel files."""
        if self._psutil is not None:
            snapshot = self._psutil.snapshot()
        elif early is None or early.fs.proc != self.fs.proc or self._containers is not None:
            snapshot = self._snapshot_of(read_kernel_texts(self.fs, self._kernel_files.read_each), baseline=True)
        else:
            snapshot = self._snapshot_of(early, baseline=True)
        self._tell(snapshot.failures)
        return snapshot

    def snapshot(self) -> Snapshot:
        """Everything one line needs, read now; a failure is told once until its source reads well again. Never
        raises."""
        if self._psutil is not None:
            snapshot = self._psutil.snapshot(self.start)
        else:
            snapshot = self._snapshot_of(read_kernel_texts(self.fs, self._kernel_files.read_each))
        if snapshot.failures or self._failing:
            self._tell(snapshot.failures)
        return snapshot

    def line(self) -> str:
        """The next line (no newline): the new readings against the previous ones, which they then replace."""
        return self.line_bytes().decode()

    def line_bytes(self) -> bytes:
        """`line()` as the encoder made it, for the outputs, which write bytes."""
        return self._line_of(self.snapshot())

    def last_line_bytes(self) -> bytes:
        """The line written as sampling ends: `line_bytes()`, with how COMMAND ended when it has. COMMAND is
        reaped after the readings, so that they still find it (a zombie's times are its last)."""
        current = self.snapshot()
        ended = None if self._command is None else self._command.ended()
        return self._line_of(current if ended is None else msgspec.structs.replace(current, ended=ended))

    def _line_of(self, current: Snapshot) -> bytes:
        if self._first and self._command is not None:  # the first line says what ran
            current = msgspec.structs.replace(current, command=self._command.argv)
            self._first = False
        data: bytes = pipe(current, functools.partial(build_line, self._previous), encode_line)
        self._previous = current
        return data

    def _snapshot_of(self, texts: KernelTexts, baseline: bool = False) -> Snapshot:
        """The snapshot of `texts`, with the readings that are not kernel texts taken now (but the run's processes
        for the `baseline`)."""
        containers, scanner = self._containers, self._scanner
        # The own cgroup first: a plain host's is looked for once a minute, by files it does not keep, and the
        # kept ones of the run's processes may have taken what descriptors are free by the time they are read.
        own_cgroup = self._cgroup_at(texts.monotonic_ns)
        times = os.times()
        snapshot = snapshot_of(
            texts,
            host=self.host,
            run=None if scanner is None else attempt(
                self._rss_source, scanner.baseline, self.root, self.argv0
            ) if baseline else attempt(
                self._rss_source, scanner.reading, self.root, self.argv0, _forks(texts.stat[1])
            ),
            disks=read_disks(self.dirs),
            whole_disks=self._whole_disks,
            containers=None if containers is None else attempt(self.cgroup, containers.readings),
            container_disks=self._container_disks,
            self_cpu=times.user + times.system,
            own_cgroup=own_cgroup,
            start=None if baseline else self.start,
        )
        diskstats = snapshot.diskstats
        names = None if diskstats is None else frozenset(map(_NAME, diskstats.devices))
        if names is None or names != self._disk_names:  # a disk came or went: this line counts by the new list
            self._renew_whole_disks(names)
            snapshot = msgspec.structs.replace(
                snapshot, whole_disks=self._whole_disks, container_disks=self._container_disks
            )
        return snapshot

    def _cgroup_at(self, now_ns: int) -> Result[CgroupReading | None, ParseError]:
        """The own cgroup's reading: read now under a limit, else the last one until a minute has passed (a
        plain host's limits are not looked for on every line; a failure stays told)."""
        reader = self._own_cgroup
        if reader is None:
            return _NO_LIMIT
        if self._cgroup.value_or(None) is not None or now_ns - self._cgroup_read_ns >= CGROUP_LIMITS_EVERY_NS:
            self._cgroup = attempt("the own cgroup", reader.read)
            self._cgroup_read_ns = now_ns
        return self._cgroup

    def _renew_whole_disks(self, names: frozenset[str] | None) -> None:
        """/proc/diskstats names `names`, other devices than when /sys/block was last read (or none)."""
        self._disk_names = names
        try:
            self._whole_disks = whole = read_whole_disks(self.fs)
            if self._containers is not None:
                self._container_disks = None if whole is None else read_device_numbers(self.fs, whole)
        except Exception:  # no list: the skip list applies, as when /sys/block cannot be listed
            self._whole_disks = self._container_disks = None

    def _tell(self, failures: Mapping[str, ParseError]) -> None:
        """Each failure of `failures` told, once for each source until it has read well again."""
        if self._failing:
            self._failing.intersection_update(failures)  # read well again: its next failure is told
        for source, failure in failures.items():
            if source not in self._failing:
                self._failing.add(source)
                say(f"cannot read {failure.source}: {failure.reason}")

    def close(self) -> None:
        """Close the descriptors kept between lines (a later line would open what it needs again)."""
        self._kernel_files.close()
        if self._scanner is not None:
            self._scanner.close()
        if self._containers is not None:
            self._containers.close()
        if self._own_cgroup is not None:
            self._own_cgroup.close()

    def __enter__(self) -> Sampler:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _forks(stat: bytes | OSError) -> int | None:
    """/proc/stat's count of tasks created: unchanged since the last walk, the run's tree has gained no process."""
    return None if isinstance(stat, OSError) else proc_stat.forks(stat)
