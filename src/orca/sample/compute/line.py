"""The values of one line (docs/behaviour.md §3): what the pure core computes and the encoder writes."""

from __future__ import annotations

from dataclasses import dataclass

from orca.sample.records import quick_init


@quick_init
@dataclass(frozen=True, slots=True)
class CpuShare:
    """The documented API's `CpuShare`: percentages of all cores' time between two readings (docs/behaviour.md §3.3)."""

    user: float
    system: float
    iowait: float
    steal: float
    busiest: float


@quick_init
@dataclass(frozen=True, slots=True)
class Mem:
    """docs/behaviour.md §3.4, in bytes."""

    total: int
    used: int
    available: int
    cache: int
    swap_total: int
    swap_used: int
    rss: int


@quick_init
@dataclass(frozen=True, slots=True)
class Disk:
    """docs/behaviour.md §3.5, in bytes."""

    path: str
    total: int
    used: int
    free: int


@dataclass(frozen=True, slots=True)
class IoRate:
    """docs/behaviour.md §3.6, bytes per second."""

    read: int
    write: int


@dataclass(frozen=True, slots=True)
class NetRate:
    """docs/behaviour.md §3.7, bytes per second."""

    received: int
    """Written as `in`."""
    sent: int
    """Written as `out`."""


@quick_init
@dataclass(frozen=True, slots=True)
class ContainerEntry:
    """One element of `containers` (docs/behaviour.md §3.8, extension fields included)."""

    name: str
    mem: int
    cpu: float
    """Percent of one core over `dt`, from `cpu.stat` `usage_usec`; 0.0 on a container's first line."""
    mem_nocache: int
    oom_kill: int | None
    """Left out of the line when None, as is each field below."""
    throttled: float | None = None
    """Percent of the CPU bandwidth periods in `dt` in which the container was throttled."""
    mem_max: int | None = None
    """`memory.max` in bytes; None also when there is no limit."""
    pids: int | None = None
    io: IoRate | None = None
    """Bytes per second read from and written to the whole disks."""
    net: NetRate | None = None
    """Bytes per second received and sent in the container's own network namespace."""


@quick_init
@dataclass(frozen=True, slots=True)
class PressureShare:
    """Percent of `dt` in which some task stalled, per resource; a None resource is left out (docs/behaviour.md
    §3.9)."""

    cpu: float | None
    memory: float | None
    io: float | None


@quick_init
@dataclass(frozen=True, slots=True)
class Line:
    """One line's values. A None section is written `null` (docs/behaviour.md §3.10), except as noted."""

    t: float
    dt: float
    host: str
    cores: int | None
    cpu: CpuShare | None
    mem: Mem | None
    disk: tuple[Disk, ...] | None
    io: IoRate | None
    net: NetRate | None
    containers_enabled: bool
    """Without --cgroup the line has no `containers` key at all."""
    containers: tuple[ContainerEntry, ...] | None
    self_cpu: float
    pressure: PressureShare | None
    """None: no `pressure` key (a kernel without pressure stall information)."""
