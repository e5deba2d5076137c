"""What one instance's run did (docs/metrics.md): the records a summary is made of. Their field names are
the keys of `orca metrics --json`."""

from __future__ import annotations

from dataclasses import dataclass

from orca.sample.readback.summary.cgroup import CgroupSummary
from orca.sample.readback.summary.run import RunSummary

PERCENTILE = 95


@dataclass(frozen=True, slots=True)
class CpuSummary:
    """Busy is `user` + `system` + `steal` (everything but idle and iowait, as `busiest` counts a core)."""

    mean: float
    p95: float
    """The nearest-rank 95th percentile: the smallest value at least 95 % of the lines are at or below."""
    max: float
    busiest_p95: float
    """The 95th percentile of `busiest`, the busiest single core."""


@dataclass(frozen=True, slots=True)
class MemorySummary:
    total: int
    """`mem.total` of the line with the most used."""
    used_peak: int
    used_peak_percent: float
    """The largest 100 × `used` / `total` of any line."""
    swap_peak: int
    rss_peak: int
    """The run's own processes' resident bytes at their largest."""


@dataclass(frozen=True, slots=True)
class DiskSummary:
    path: str
    peak_percent: float
    """The fullest file system at its fullest: 100 × `used` / (`used` + `free`), as `df` counts Use%."""


@dataclass(frozen=True, slots=True)
class IoSummary:
    """Disk io: bytes moved over the run (rate × `dt`, line by line) and the highest rates, in bytes per second."""

    read: int
    write: int
    read_peak: int
    write_peak: int


@dataclass(frozen=True, slots=True)
class NetSummary:
    """Network traffic, as `IoSummary` counts it; `--json` writes `received` as `in` and `sent` as `out`, as the line
    does (`as_json.JSON_NAMES`)."""

    received: int
    sent: int
    received_peak: int
    sent_peak: int


@dataclass(frozen=True, slots=True)
class PressureSummary:
    """Means over the lines that have each resource; None for one never present."""

    cpu: float | None
    memory: float | None
    io: float | None


@dataclass(frozen=True, slots=True)
class ContainerSummary:
    name: str
    mem_peak: int
    oom_kills: int
    """How much `oom_kill` rose during the run (a counter that goes back counts from its new value)."""
    mem_max: int | None = None
    """The newest memory limit seen (`mem_max`); None when no line had one."""
    pids_peak: int | None = None
    throttled_mean: float | None = None
    """The mean of `throttled` over the lines that have it."""


@dataclass(frozen=True, slots=True)
class InstanceSummary:
    """One instance: the lines of one host and one run (one `start`) in one file or object."""

    name: str
    """The file, `-` or object the lines came from."""
    host: str
    start: float | None
    """The lines' `start` (Unix seconds): which run of that host they are; None for lines of an older sampler."""
    cores: int | None
    """The newest line's `cores`."""
    first_t: float
    last_t: float
    lines: int
    gaps: int
    """Intervals between consecutive lines over twice the median `dt`: the sampler was stopped, or starved."""
    median_dt: float
    run: RunSummary | None
    """The run's own processes and, with `-- COMMAND`, what ran and how it ended; None without a `run` section."""
    cgroup: CgroupSummary | None
    """The run against its cgroup's limits; None without a `cgroup` section."""
    cpu: CpuSummary | None
    memory: MemorySummary | None
    disk: DiskSummary | None
    io: IoSummary | None
    net: NetSummary | None
    pressure: PressureSummary | None
    containers: tuple[ContainerSummary, ...]
    self_cpu_seconds: float
    """The sampler's own CPU over the run."""
    overhead_percent: float | None
    """`self_cpu_seconds` over the time the lines cover (the sum of `dt`), as a percent of one core."""
    containers_omitted: int = 0
    """Containers not in `containers`, which holds those with the highest memory peak (at most 1,000)."""
    containers_omitted_estimated: bool = False
    """Whether `containers_omitted` is an estimate (off by about 1 %), as it is past thousands of names."""

    @property
    def duration(self) -> float:
        return self.last_t - self.first_t
