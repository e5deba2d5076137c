"""What a line reads, and from where: the host's counters at one moment, then one table of readers walked in order
(`source.py`'s `read_each`). `proc_readers` makes them for the kernel's files; the psutil reader
(`psutil_reader.py`) makes the same for a platform without /proc.

The /proc table, in the order it is read: the own cgroup (first: a plain host's limits are looked for by files it
does not keep, before the run's kept descriptors may have taken what is free), the run's processes, the
directories, the containers, and which block devices are whole disks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Protocol

from returns.result import Result, Success

from orca.sample.compute.snapshot import DiskReading, HostReadings, Readings, host_readings
from orca.sample.parse.errors import ParseError
from orca.sample.shared.bounded import KeptFiles
from orca.sample.shell.machine.early import KernelTexts, read_kernel_texts
from orca.sample.shell.machine.fs import FS
from orca.sample.shell.machine.kernel import (
    KERNEL_FILES_KEPT_AT_MOST,
    read_device_numbers,
    read_disks,
    read_whole_disks,
)
from orca.sample.shell.machine.source import Reader, read_each, self_cpu_seconds

if TYPE_CHECKING:
    from orca.sample.compute.own_cgroup import CgroupReading
    from orca.sample.compute.run_reading import RunReading

_NAME = attrgetter("name")
CGROUP_LIMITS_EVERY_NS = 60_000_000_000
"""How often a sampler under no cgroup limit looks for one again (a limit is set when a pod or unit is made)."""


class RunScanner(Protocol):
    """What reads the run's processes (`procs/scanner.py`'s, or psutil's): every line, for the baseline, and the
    reading COMMAND's run starts from."""

    def reading(
        self, root: int | None, argv0: str, forks: int | None = None, at_ns: int | None = None
    ) -> Result[RunReading, ParseError]: ...
    def baseline(self, root: int | None, argv0: str, at_ns: int | None = None) -> Result[RunReading, ParseError]: ...
    def started(self, at_ns: int) -> RunReading: ...


def _no_early_readings(early: KernelTexts) -> None:
    return None


@dataclass(frozen=True, slots=True)
class MachineReaders:
    """A line's readers: `host` reads the host's counters at one moment, `table` what is read beside them; the
    `baseline` table is walked instead for the first readings, and `early` gives the host's counters of the
    command's early readings when they can stand for the first ones. `close()` closes what they keep open."""

    host: Callable[[], HostReadings]
    table: tuple[Reader, ...]
    baseline: tuple[Reader, ...]
    closing: tuple[Callable[[], None], ...] = ()
    early: Callable[[KernelTexts], HostReadings | None] = _no_early_readings

    def read(self) -> tuple[HostReadings, Readings]:
        """The host's counters, read now, and the table's readings beside them."""
        host = self.host()
        return host, read_each(self.table, host)

    def read_baseline(self, early: KernelTexts | None = None) -> tuple[HostReadings, Readings]:
        """The first readings: the host's counters (of `early` when they can stand for them), and the baseline
        table's."""
        host = None if early is None else self.early(early)
        if host is None:
            host = self.host()
        return host, read_each(self.baseline, host)

    def close(self) -> None:
        for close in self.closing:
            close()


class WholeDisks:
    """Which block devices are whole disks (docs/behaviour.md §3.6), and with `numbers` their `MAJ:MIN` for the
    containers' `io`: /sys/block is read again only when the devices named change (a disk came or went), as its
    links cost a dozen system calls a line that would almost always give the same answer. Never fails: without a
    list, the skip list applies."""

    def __init__(self, fs: FS, numbers: bool = False) -> None:
        self._fs = fs
        self._with_numbers = numbers
        self._names: frozenset[str] | None = None
        self._whole: Result[frozenset[str] | None, ParseError] = Success(None)
        self._numbers: Result[frozenset[str] | None, ParseError] = Success(None)

    def whole(self, host: HostReadings) -> Result[frozenset[str] | None, ParseError]:
        devices = host.diskstats
        names = None if devices is None else frozenset(map(_NAME, devices.devices))
        if names is None or names != self._names:
            self._names = names
            try:
                whole = read_whole_disks(self._fs)
                numbered = whole if self._with_numbers else None
                numbers = None if numbered is None else read_device_numbers(self._fs, numbered)
            except Exception:  # no list: the skip list applies, as when /sys/block cannot be listed
                whole = numbers = None
            self._whole, self._numbers = Success(whole), Success(numbers)
        return self._whole

    def numbers(self, host: HostReadings) -> Result[frozenset[str] | None, ParseError]:
        """The whole disks' `MAJ:MIN` (`/sys/block/<disk>/dev`), as `whole` of the same readings found them."""
        return self._numbers


class OwnCgroupWatch:
    """The own cgroup's reading (docs/behaviour.md §3.11): read every line while under a limit; under none, looked
    for again once a minute (the last reading given meanwhile, a failure staying told)."""

    def __init__(self, read: Callable[[], Result[CgroupReading | None, ParseError]]) -> None:
        self._read = read
        self._last: Result[CgroupReading | None, ParseError] = Success(None)
        self._limited = False
        """The last reading found a limit."""
        self._read_ns = -CGROUP_LIMITS_EVERY_NS

    def reading(self, host: HostReadings) -> Result[CgroupReading | None, ParseError]:
        now_ns = host.monotonic_ns
        if self._limited or now_ns - self._read_ns >= CGROUP_LIMITS_EVERY_NS:
            self._last = self._read()
            self._limited = self._last.value_or(None) is not None
            self._read_ns = now_ns
        return self._last


def run_readers(
    scanner: RunScanner, name: str, root: int | None, argv0: str, *, from_start: bool = False
) -> tuple[Reader, Reader]:
    """The run's reader for every line, and for the first readings: `from_start` (COMMAND, started just after the
    first readings were taken) the run as it was then, no process yet (docs/behaviour.md §9.1). Each reading is
    taken at the moment of the host's, so the run's figures are over the line's `dt`."""

    def reading(host: HostReadings) -> Result[RunReading, ParseError]:
        # /proc/stat's count of tasks created: while it stands still, the run's tree has gained no process.
        stat = host.stat
        return scanner.reading(root, argv0, None if stat is None else stat.forks, host.monotonic_ns)

    def first(host: HostReadings) -> Result[RunReading, ParseError]:
        if from_start:
            return Success(scanner.started(host.monotonic_ns))
        return scanner.baseline(root, argv0, host.monotonic_ns)

    return Reader("run", "rss", name, reading), Reader("run", "rss", name, first)


def disk_readers(dirs: Sequence[str], whole: WholeDisks) -> tuple[Reader, Reader]:
    """The directories' `statvfs` and the whole disks: read by every platform."""

    def disks(host: HostReadings) -> Result[tuple[DiskReading, ...], ParseError]:
        return read_disks(dirs)

    return Reader("disks", "disks", "--dirs", disks), Reader("whole_disks", "whole_disks", "/sys/block", whole.whole)


def proc_readers(
    fs: FS, dirs: Sequence[str], root: int | None, argv0: str, cgroup: str, names: str, *, run: bool,
    from_start: bool = False,
) -> MachineReaders:
    """The readers of the kernel's files under `fs`: the own cgroup, the run's processes (with `run`; `from_start`:
    COMMAND's, `run_readers`), the directories, the containers (with `cgroup`). Each loads only for what it
    reads."""
    from orca.sample.shared.own_cgroup import OwnCgroup

    kernel_files = KeptFiles(KERNEL_FILES_KEPT_AT_MOST)
    own_cgroup = OwnCgroup(fs.proc)
    whole = WholeDisks(fs, numbers=bool(cgroup))
    table = [Reader("own_cgroup", "cgroup", "the own cgroup", OwnCgroupWatch(own_cgroup.read).reading)]
    baseline = list(table)
    closing: list[Callable[[], None]] = [kernel_files.close, own_cgroup.close]
    if run:
        from orca.sample.shell.procs.scanner import ProcessScanner

        scanner = ProcessScanner(fs.proc)
        every, first = run_readers(scanner, scanner.source, root, argv0, from_start=from_start)
        table.append(every)
        baseline.append(first)
        closing.append(scanner.close)
    disks, whole_disks = disk_readers(dirs, whole)
    others = [disks]
    if cgroup:
        from orca.sample.shell.machine.containers import ContainerSource

        containers = ContainerSource(cgroup, names, fs.proc)
        others.append(Reader("containers", "containers", cgroup, lambda _: containers.readings()))
        closing.append(containers.close)
    others.append(whole_disks)
    if cgroup:
        others.append(Reader("container_disks", "container_disks", "/sys/block", whole.numbers))

    def host() -> HostReadings:
        return host_readings(read_kernel_texts(fs, kernel_files.read_each), self_cpu_seconds())

    def early_host(early: KernelTexts) -> HostReadings | None:
        """The host's counters of the command's early readings (`early.py`), when they were read under `fs` and
        cover every rate the line has (the containers' files have no early readings)."""
        return None if early.fs.proc != fs.proc or cgroup else host_readings(early, self_cpu_seconds())

    return MachineReaders(host, (*table, *others), (*baseline, *others), tuple(closing), early_host)
