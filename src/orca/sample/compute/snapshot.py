"""Everything the shell reads for one line, at one moment: the input of the pure core."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from orca.sample.parse.cgroup import CpuPeriods, DeviceIo
from orca.sample.parse.diskstats import DiskStats
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.pressure import Pressure
from orca.sample.parse.proc_stat import ProcStat
from orca.sample.records import quick_init


@quick_init
@dataclass(frozen=True, slots=True)
class DiskReading:
    """One `--dirs` directory: its own path, and `stat`/`statvfs` of it (or of its nearest existing ancestor)."""

    path: str
    st_dev: int
    f_blocks: int
    f_bfree: int
    f_bavail: int
    f_frsize: int


@dataclass(frozen=True, slots=True)
class ContainerNet:
    """The network counters of a container's namespace, read through `/proc/<pid>/net/dev` of one of its processes."""

    namespace: str
    """What tells one network namespace from another (`net:[inode]`, or the inode of its `net/dev`): counters are
    compared only within one namespace, since a container that restarts gets a new one with new counters."""
    dev: NetDev


@dataclass(frozen=True, slots=True)
class ContainerReading:
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



@quick_init
@dataclass(frozen=True, slots=True)
class Snapshot:
    """The readings a line is the difference of. A field is None when its source could not be read
    (docs/behaviour.md §3.10)."""

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
