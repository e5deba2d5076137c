"""Everything the shell reads for one line, at one moment: the input of the pure core.

`snapshot_of` is the one way a `Snapshot` is made, what the baseline, every line and the tests use: it parses the
kernel files' bytes as the shell read them (`KernelTexts`: `/proc/stat`, `meminfo`, `diskstats`, `net/dev` and the
three pressure files) into one record each, a file that could not be read or parsed giving None and why, and adds
what is not a kernel file's text, read at the same moment (the directories' `statvfs`, the run's resident bytes,
the containers' cgroups, the sampler's own CPU), each a `Result` (`shell/machine/source.py` makes what a reader
raised one).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol, TypeVar

import msgspec
from returns.result import Failure, Result, Success

from orca.sample.compute.memory import MEMINFO_KEYS
from orca.sample.compute.own_cgroup import CgroupReading
from orca.sample.compute.pressure import RESOURCES
from orca.sample.compute.run import CommandEnd, RunReading
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
"""The sources of a line's readings, each told about on its own when it fails (docs/behaviour.md §3.10)."""
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


class Snapshot(msgspec.Struct, frozen=True, gc=False):
    """The readings a line is the difference of (docs/behaviour.md §3). A field is None when its source could not
    be read (§3.10); `failures` says why."""

    monotonic_ns: int
    """`time.monotonic_ns()` when the readings were taken: `dt` is the difference of two."""
    wall: float
    """`time.time()`: the line's `t`."""
    host: str
    stat: ProcStat | None
    meminfo: MemInfo | None
    rss_bytes: int | None
    """The resident bytes of the run's processes (docs/behaviour.md §3.4); 0 with neither --pid nor --match."""
    disks: tuple[DiskReading, ...] | None
    diskstats: DiskStats | None
    whole_disks: frozenset[str] | None
    """The whole disks of /sys/block; None when it could not be listed (then the skip list applies)."""
    net: NetDev | None
    containers_enabled: bool
    """--cgroup was given: the line has a `containers` key."""
    containers: tuple[ContainerReading, ...] | None
    pressure: Mapping[str, Pressure] | None
    """Resource (`cpu`, `memory`, `io`) → its pressure file; None on a kernel without PSI."""
    self_cpu: float
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


def snapshot_of(
    texts: KernelTexts,
    *,
    host: str,
    rss: Result[int, ParseError] | None = Success(0),  # noqa: B008 - a frozen value
    disks: Result[tuple[DiskReading, ...], ParseError] = Success(()),  # noqa: B008 - a frozen value
    whole_disks: frozenset[str] | None = None,
    containers: Result[tuple[ContainerReading, ...], ParseError] | None = None,
    container_disks: frozenset[str] | None = None,
    self_cpu: float = 0.0,
    own_cgroup: Result[CgroupReading | None, ParseError] = Success(None),  # noqa: B008 - a frozen value
    run: Result[RunReading, ParseError] | None = None,
    start: float | None = None,
    command: tuple[str, ...] | None = None,
) -> Snapshot:
    """The snapshot of `texts` and of the other readings of the same moment: each kernel file parsed into its record,
    or None and why (naming the path it was read from); `containers` None without --cgroup, `rss` None when the run's
    processes were not read (the baseline: no line takes its `rss`). `run`, when there is a run: the reading of its
    processes, which gives the `rss` too when it has one. `start`: the sampler's, None for the baseline itself
    (whose `wall` it is).

    >>> from types import SimpleNamespace
    >>> gone = FileNotFoundError(2, "No such file or directory")
    >>> texts = SimpleNamespace(monotonic_ns=0, wall=0.0, stat=("p/stat", b"cpu  1 0 1 8\\n"), meminfo=("p/meminfo",
    ...     b"MemTotal: 8 kB\\n"), diskstats=("p/diskstats", b"nothing\\n"), net_dev=("p/net/dev", gone),
    ...     pressure=(("p/pressure/cpu", gone),) * 3)
    >>> snapshot = snapshot_of(texts, host="h")
    >>> snapshot.stat.total.idle, snapshot.meminfo.bytes_by_key, snapshot.diskstats, snapshot.net, snapshot.pressure
    (8, {'MemTotal': 8192}, None, None, None)
    >>> snapshot.failures
    {'diskstats': ParseError(source='p/diskstats', reason='no device line'), 'net': ParseError(source='p/net/dev', \
reason='No such file or directory')}
    """
    failures: dict[str, ParseError] = {}
    stat = _parsed(texts.stat, proc_stat.parse, "stat", failures)
    memory = _parsed(texts.meminfo, _WANTED_MEMINFO, "meminfo", failures)
    run_reading, rss_bytes = _run_and_rss(run, rss, failures)
    disk_readings = disks.value_or(None)
    if disk_readings is None:
        failures["disks"] = disks.failure()
    device_stats = _parsed(texts.diskstats, diskstats.parse, "diskstats", failures)
    net = _parsed(texts.net_dev, net_dev.parse, "net", failures)
    container_readings = None if containers is None else containers.value_or(None)
    if containers is not None and container_readings is None:
        failures["containers"] = containers.failure()
    pressures = _pressures(texts.pressure, failures)
    cgroup = own_cgroup.value_or(None)
    if cgroup is None and type(own_cgroup) is Failure:  # Failure is final: no ABC check on every line
        failures["cgroup"] = own_cgroup.failure()
    return Snapshot(
        monotonic_ns=texts.monotonic_ns,
        wall=texts.wall,
        host=host,
        stat=stat,
        meminfo=memory,
        rss_bytes=rss_bytes,
        disks=disk_readings,
        diskstats=device_stats,
        whole_disks=whole_disks,
        net=net,
        containers_enabled=containers is not None,
        containers=container_readings,
        pressure=pressures,
        self_cpu=self_cpu,
        container_disks=container_disks,
        own_cgroup=cgroup,
        start=texts.wall if start is None else start,
        run_enabled=run is not None,
        run=run_reading,
        command=command,
        failures=failures or NO_FAILURES,
    )


def _run_and_rss(
    run: Result[RunReading, ParseError] | None, rss: Result[int, ParseError] | None, failures: dict[str, ParseError]
) -> tuple[RunReading | None, int | None]:
    """The run's reading and resident bytes: from `run` when there is one, else `rss`; None and why on failure."""
    if run is not None:
        run_reading = run.value_or(None)
        if run_reading is None:
            failures["rss"] = run.failure()
            return None, None
        return run_reading, run_reading.rss_bytes
    rss_bytes = None if rss is None else rss.value_or(None)
    if rss_bytes is None and rss is not None:
        failures["rss"] = rss.failure()
    return None, rss_bytes


def _parsed(
    file: KernelFile, parse: _Parser[T], source: str, failures: dict[str, ParseError]
) -> T | None:
    """`file`'s record, or None with why in `failures` (the path the file was read from named in it)."""
    path, data = file
    if isinstance(data, OSError):
        failures[source] = ParseError.of(path, data)
        return None
    try:
        parsed = parse(data.decode("utf-8", errors="replace"))
    except Exception as error:  # no parser should raise: a bug nulls its section only, and is told as one
        failures[source] = ParseError.raised(path, error)
        return None
    record = parsed.value_or(None)  # a record, never None, when it parsed
    if record is None:
        failures[source] = ParseError(path, parsed.failure().reason)
    return record


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
            parsed = None if printed is not None else pressure.parse(text)
        except Exception as error:  # as in `_parsed`
            failure = failure or ParseError.raised(path, error)
            continue
        if printed is not None:
            found[resource] = printed
        elif isinstance(parsed, Success):
            found[resource] = parsed.unwrap()
        elif parsed is not None:
            failure = failure or ParseError(path, parsed.failure().reason)
    if found:
        return found
    if failure is not None:
        failures["pressure"] = failure
    return None


class _Parser(Protocol[T_co]):
    def __call__(self, text: str, /) -> Result[T_co, ParseError]: ...
