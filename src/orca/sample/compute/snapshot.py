"""Everything the shell reads for one line, at one moment: the input of the pure core. Two pure steps make it.

`host_readings` parses the kernel files' bytes as the shell read them (`KernelTexts`: `/proc/stat`, `meminfo`,
`diskstats`, `net/dev` and the three pressure files), each once, into one record each; a file that could not be
read or parsed gives None and why, naming the path it was read from. The psutil reader makes the same
`HostReadings` its own way.

`snapshot_of` makes the `Snapshot` from them and from what the shell's readers read beside them at the same moment
(`Readings`: the directories' `statvfs`, the run's processes, the containers' cgroups, the own cgroup, the sampler's
own CPU; each reader's failure said by source). It is complete when made: the first line's COMMAND and the last
line's end are arguments, as the fork count that the run's reading took is a field of `/proc/stat`'s record.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

import msgspec
from returns.result import Failure, Result, Success

from orca.sample.compute.memory import MEMINFO_KEYS
from orca.sample.compute.own_cgroup import CgroupReading
from orca.sample.compute.pressure import RESOURCES
from orca.sample.compute.run import CommandEnd
from orca.sample.compute.run_reading import RunReading
from orca.sample.parse import diskstats, meminfo, net_dev, pressure, proc_stat
from orca.sample.parse.cgroup import CpuPeriods, DeviceIo
from orca.sample.parse.diskstats import DiskStats
from orca.sample.parse.errors import ParseError
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.pressure import NO_PSI_ERRNOS, Pressure
from orca.sample.parse.proc_stat import ProcStat

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

KernelFile = tuple[str, "bytes | OSError"]
"""A kernel file's path (as read: a fixture root's own) and its bytes, or the `OSError` reading it raised."""

SOURCES = ("stat", "meminfo", "rss", "disks", "diskstats", "net", "containers", "pressure", "cgroup")
"""The sources of a line's readings, each told about on its own when it fails (docs/behaviour.md §3.10), in the
order their failures are told."""
NO_FAILURES: Mapping[str, ParseError] = MappingProxyType({})
_WANTED_MEMINFO = functools.partial(meminfo.parse, keys=MEMINFO_KEYS)
"""/proc/meminfo's keys that `mem` reads, and no others."""


class KernelTexts(Protocol):
    """The kernel files a line's host readings come from, read at one moment (`shell/machine/early.py` reads them)."""

    @property
    def monotonic_ns(self) -> int:
        """`time.monotonic_ns()` just before the files were read: `dt` is the difference of two."""

    @property
    def wall(self) -> float:
        """`time.time()` at the same moment: the line's `t`."""

    @property
    def stat(self) -> KernelFile: ...
    @property
    def meminfo(self) -> KernelFile: ...
    @property
    def diskstats(self) -> KernelFile: ...
    @property
    def net_dev(self) -> KernelFile: ...
    @property
    def pressure(self) -> tuple[KernelFile, KernelFile, KernelFile]:
        """cpu, memory and io."""


class DiskReading(msgspec.Struct, frozen=True, gc=False):
    """One `--dirs` directory: its own path, and `stat`/`statvfs` of it (or of its nearest existing ancestor)."""

    path: str
    st_dev: int
    f_blocks: int
    f_bfree: int
    f_bavail: int
    f_frsize: int


class ContainerNet(msgspec.Struct, frozen=True, gc=False):
    """The network counters of a container's namespace, read through `/proc/<pid>/net/dev` of one of its processes."""

    namespace: str
    """What tells one network namespace from another (`net:[inode]`, or the inode of its `net/dev`): counters are
    compared only within one namespace, since a container that restarts gets a new one with new counters."""
    dev: NetDev


class ContainerReading(msgspec.Struct, frozen=True, gc=False):
    """One Docker container's cgroup files at one moment (docs/behaviour.md §3.8)."""

    container_id: str
    name: str
    memory_current: int
    memory_stat: Mapping[str, int]
    memory_events: Mapping[str, int] | None
    """None when `memory.events` is missing or does not parse."""
    cpu_usage_usec: int | None
    """`cpu.stat`'s `usage_usec`; None when missing."""
    cpu_periods: CpuPeriods | None = None
    """`cpu.stat`'s `nr_periods` and `nr_throttled`; None without them (the cpu controller is not enabled)."""
    memory_max: int | None = None
    """`memory.max` in bytes; None when it is `max` (no limit), missing or does not parse."""
    pids: int | None = None
    """`pids.current`; None when missing (the pids controller is not enabled) or it does not parse."""
    io: Mapping[str, DeviceIo] | None = None
    """`io.stat`: `MAJ:MIN` → bytes read and written; None when missing or it does not parse."""
    net: ContainerNet | None = None
    """None when no process of the container is visible, or its network namespace is the host's."""


class HostReadings(msgspec.Struct, frozen=True, gc=False):
    """The host's counters at one moment, and the sampler's own CPU: what every other reading of a line is taken
    beside, and what some of them follow (the run's walk the fork count, the whole disks the devices named)."""

    monotonic_ns: int
    """`time.monotonic_ns()` when they were read: `dt` is the difference of two."""
    wall: float
    """`time.time()` at the same moment: the line's `t`."""
    stat: ProcStat | None
    meminfo: MemInfo | None
    diskstats: DiskStats | None
    net: NetDev | None
    pressure: Mapping[str, Pressure] | None
    """Resource (`cpu`, `memory`, `io`) → its pressure file; None on a kernel without PSI (and through psutil)."""
    self_cpu: float
    """The sampler's own user + system CPU seconds so far."""
    failures: Mapping[str, ParseError]
    """Source (of `SOURCES`) → why its reading is None."""


class Readings(msgspec.Struct, frozen=True, gc=False):
    """What the shell's readers read beside the host's counters, as one walk of them gives it."""

    values: Mapping[str, Any]
    """`Snapshot` field → the reading (None for one that failed). Any: each reader's own type is its field's."""
    failures: Mapping[str, ParseError]
    """Source → why its reading failed."""


class Snapshot(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """The readings a line is the difference of (docs/behaviour.md §3). A field is None when its source could not
    be read (§3.10); `failures` says why."""

    monotonic_ns: int
    """`time.monotonic_ns()` when the readings were taken: `dt` is the difference of two."""
    wall: float
    """`time.time()`: the line's `t`."""
    host: str
    stat: ProcStat | None = None
    meminfo: MemInfo | None = None
    rss_bytes: int | None = None
    """The resident bytes of the run's processes (docs/behaviour.md §3.4); 0 with neither --pid nor --match."""
    disks: tuple[DiskReading, ...] | None = None
    diskstats: DiskStats | None = None
    whole_disks: frozenset[str] | None = None
    """The whole disks of /sys/block; None when it could not be listed (then the skip list applies)."""
    net: NetDev | None = None
    containers_enabled: bool = False
    """--cgroup was given: the line has a `containers` key."""
    containers: tuple[ContainerReading, ...] | None = None
    pressure: Mapping[str, Pressure] | None = None
    """Resource (`cpu`, `memory`, `io`) → its pressure file; None on a kernel without PSI."""
    self_cpu: float = 0.0
    """The sampler's own user + system CPU seconds so far."""
    container_disks: frozenset[str] | None = None
    """`MAJ:MIN` of each whole disk (`/sys/block/<disk>/dev`), for the containers' `io`; None when unknown."""
    own_cgroup: CgroupReading | None = None
    """The sampler's own cgroup against its limits (docs/behaviour.md §3.11); None under no memory or CPU limit."""
    start: float | None = None
    """The wall clock of the sampler's baseline readings, the same in each of its snapshots: the line's `start`."""
    run_enabled: bool = False
    """There is a run (--pid, --match, -- COMMAND): the line has a `run` key."""
    run: RunReading | None = None
    """The run's processes (docs/behaviour.md §3.12); None without a run, or when they could not be read."""
    command: tuple[str, ...] | None = None
    """COMMAND's argv, in the first line's snapshot only."""
    ended: CommandEnd | None = None
    """How COMMAND ended, in the last line's snapshot only."""
    failures: Mapping[str, ParseError] = msgspec.field(default_factory=dict)
    """Source (of `SOURCES`) → why its reading is None."""


def host_readings(texts: KernelTexts, self_cpu: float = 0.0) -> HostReadings:
    """The kernel files of `texts`, each parsed once into its record, or None and why (naming the path it was read
    from); and `self_cpu`, the sampler's own CPU seconds when they were read.

    >>> from types import SimpleNamespace
    >>> gone = FileNotFoundError(2, "No such file or directory")
    >>> texts = SimpleNamespace(monotonic_ns=0, wall=0.0, stat=("p/stat", b"cpu  1 0 1 8\\nprocesses 9\\n"),
    ...     meminfo=("p/meminfo", b"MemTotal: 8 kB\\n"), diskstats=("p/diskstats", b"nothing\\n"),
    ...     net_dev=("p/net/dev", gone), pressure=(("p/pressure/cpu", gone),) * 3)
    >>> host = host_readings(texts)
    >>> host.stat.total.idle, host.stat.forks, host.meminfo.bytes_by_key, host.diskstats, host.net, host.pressure
    (8, 9, {'MemTotal': 8192}, None, None, None)
    >>> host.failures
    {'diskstats': ParseError(source='p/diskstats', reason='no device line'), 'net': ParseError(source='p/net/dev', \
reason='No such file or directory')}
    """
    failures: dict[str, ParseError] = {}
    stat = _parsed(texts.stat, proc_stat.parse, "stat", failures)
    memory = _parsed(texts.meminfo, _WANTED_MEMINFO, "meminfo", failures)
    devices = _parsed(texts.diskstats, diskstats.parse, "diskstats", failures)
    net = _parsed(texts.net_dev, net_dev.parse, "net", failures)
    pressures = _pressures(texts.pressure, failures)
    return HostReadings(
        texts.monotonic_ns, texts.wall, stat, memory, devices, net, pressures, self_cpu, failures or NO_FAILURES
    )


def snapshot_of(
    host: HostReadings,
    readings: Readings,
    *,
    name: str,
    start: float | None = None,
    containers_enabled: bool = False,
    run_enabled: bool = False,
    command: tuple[str, ...] | None = None,
    ended: CommandEnd | None = None,
) -> Snapshot:
    """The snapshot of the host's readings and of `readings`, taken at the same moment, on the host `name`.

    `start`: the sampler's, None for its baseline itself (whose `wall` it is). With a run, its `rss_bytes` are the
    run reading's (None when it failed); without, 0. `command` (the first line's) and `ended` (the last line's):
    COMMAND's argv, and how it ended.

    >>> host = HostReadings(7, 1.5, None, None, None, None, None, 0.25, {})
    >>> snapshot = snapshot_of(host, Readings({"disks": ()}, {}), name="h", run_enabled=True, command=("true",))
    >>> snapshot.wall, snapshot.start, snapshot.disks, snapshot.rss_bytes, snapshot.command
    (1.5, 1.5, (), None, ('true',))
    """
    values = readings.values
    run: RunReading | None = values.get("run")
    failures = host.failures
    if readings.failures:
        every = {**failures, **readings.failures}
        failures = {source: every[source] for source in SOURCES if source in every} | every
    return Snapshot(
        monotonic_ns=host.monotonic_ns,
        wall=host.wall,
        host=name,
        stat=host.stat,
        meminfo=host.meminfo,
        diskstats=host.diskstats,
        net=host.net,
        pressure=host.pressure,
        self_cpu=host.self_cpu,
        rss_bytes=(None if run is None else run.rss_bytes) if run_enabled else 0,
        containers_enabled=containers_enabled,
        run_enabled=run_enabled,
        start=host.wall if start is None else start,
        command=command,
        ended=ended,
        failures=failures,
        **values,
    )


def _parsed(file: KernelFile, parse: _Parser[T], source: str, failures: dict[str, ParseError]) -> T | None:
    """`file`'s record, or None with why in `failures`: the `OSError` reading it gave, or the parser's failure,
    naming the path it was read from. A parser that raises (none should) fails its file only, told as the bug it
    is."""
    path, data = file
    if isinstance(data, OSError):
        failures[source] = ParseError.of(path, data)
        return None
    try:
        parsed = parse(data.decode("utf-8", errors="replace"))
    except Exception as error:
        failures[source] = ParseError.raised(path, error)
        return None
    record = parsed.value_or(None)  # a record, never None, when it parsed
    if record is None:
        failures[source] = ParseError(path, parsed.failure().reason)
    return record


def value_of(reading: Result[T, ParseError], source: str, failures: dict[str, ParseError]) -> T | None:
    """The reading, or None with why in `failures` under `source`: where a reading's failure stops travelling."""
    value = reading.value_or(None)
    if value is None and type(reading) is Failure:  # Failure is final: no ABC check on every line
        failures[source] = reading.failure()
    return value


def _pressures(files: tuple[KernelFile, ...], failures: dict[str, ParseError]) -> Mapping[str, Pressure] | None:
    """Resource → its parsed pressure file (Documentation/accounting/psi.rst); a file that fails is left out.

    None on a kernel without PSI: every file missing or unsupported (`psi=0` at boot). A failure when no file reads
    for another reason than those."""
    found: dict[str, Pressure] = {}
    failure: ParseError | None = None
    for resource, (path, data) in zip(RESOURCES, files, strict=True):
        if isinstance(data, OSError):
            if data.errno not in NO_PSI_ERRNOS:
                failure = failure or ParseError.of(path, data)
            continue
        text = data.decode("utf-8", errors="replace")
        try:
            printed = pressure.as_printed(text)  # the usual case: the kernel's own text, no `Result` made for it
            parsed_file = None if printed is not None else pressure.parse(text)
        except Exception as error:  # as in `_parsed`
            failure = failure or ParseError.raised(path, error)
            continue
        if printed is not None:
            found[resource] = printed
        elif isinstance(parsed_file, Success):
            found[resource] = parsed_file.unwrap()
        elif parsed_file is not None:
            failure = failure or ParseError(path, parsed_file.failure().reason)
    if found:
        return found
    if failure is not None:
        failures["pressure"] = failure
    return None


class _Parser(Protocol[T_co]):
    def __call__(self, text: str, /) -> Result[T_co, ParseError]: ...
