"""What one instance's run did, folded from its lines in one pass (README, "Looking at a run").

Memory does not grow with the number of lines: percentiles come from counts per tenth of a percent (the lines carry
one decimal, so they are exact), the median interval from counts per millisecond.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from orca.sample.parse.sample_line import LineFields

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
class TrafficSummary:
    """Disk io or network: bytes moved over the run (rate × `dt`, line by line) and the highest rates."""

    first_total: int
    """`io.read` or `net.in` bytes."""
    second_total: int
    """`io.write` or `net.out` bytes."""
    first_peak: int
    second_peak: int


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


@dataclass(frozen=True, slots=True)
class InstanceSummary:
    """One instance (one file or object of lines)."""

    name: str
    host: str
    """The newest line's host."""
    cores: int | None
    first_t: float
    last_t: float
    lines: int
    gaps: int
    """Intervals between consecutive lines over twice the median `dt`: the sampler was stopped, or starved."""
    median_dt: float
    cpu: CpuSummary | None
    memory: MemorySummary | None
    disk: DiskSummary | None
    io: TrafficSummary | None
    net: TrafficSummary | None
    pressure: PressureSummary | None
    containers: tuple[ContainerSummary, ...]
    self_cpu_seconds: float
    """The sampler's own CPU over the run."""
    overhead_percent: float | None
    """`self_cpu_seconds` over the time the lines cover (the sum of `dt`), as a percent of one core."""

    @property
    def duration(self) -> float:
        return self.last_t - self.first_t


class _Histogram:
    """Counts of values kept at a fixed resolution: exact percentiles of one-decimal values in bounded memory."""

    __slots__ = ("counts", "scale", "total")

    def __init__(self, scale: int) -> None:
        self.counts: dict[int, int] = {}
        self.scale = scale
        """Values are kept to 1 / scale."""
        self.total = 0

    def add(self, value: float) -> None:
        key = round(value * self.scale)
        self.counts[key] = self.counts.get(key, 0) + 1
        self.total += 1

    def percentile(self, percent: float) -> float:
        """The nearest-rank percentile; 0.0 when empty."""
        rank = max(1, math.ceil(self.total * percent / 100))
        seen = 0
        for key in sorted(self.counts):
            seen += self.counts[key]
            if seen >= rank:
                return key / self.scale
        return 0.0

    def maximum(self) -> float:
        return max(self.counts, default=0) / self.scale

    def count_over(self, limit: float) -> int:
        return sum(count for key, count in self.counts.items() if key / self.scale > limit)


class _Fold:
    """The running state of one instance's summary; `add` one checked line at a time."""

    def __init__(self) -> None:
        self.lines = 0
        self.host = ""
        self.cores: int | None = None
        self.first_t = math.inf
        self.last_t = -math.inf
        self.previous_t: float | None = None
        self.dts = _Histogram(1000)
        self.steps = _Histogram(1000)
        self.covered = 0.0
        self.busy = _Histogram(10)
        self.busy_sum = 0.0
        self.busiest = _Histogram(10)
        self.used_peak: tuple[int, int] | None = None
        """(`used`, `total`) of the line with the most used."""
        self.swap_peak = 0
        self.rss_peak = 0
        self.used_percent_peak = 0.0
        self.disk: DiskSummary | None = None
        self.traffic: dict[str, list[float]] = {}
        self.pressure_sums = [0.0, 0.0, 0.0]
        self.pressure_counts = [0, 0, 0]
        self.container_mem: dict[str, int] = {}
        self.container_oom: dict[str, tuple[int, int]] = {}
        """Per container: (the last `oom_kill` seen, the rise so far)."""
        self.self_cpu = 0.0
        self.last_self_cpu: float | None = None

    def add(self, line: LineFields) -> None:
        self.lines += 1
        t, dt = line["t"], line["dt"]
        self.host = line["host"]
        self.cores = line.get("cores", self.cores)
        self.first_t = min(self.first_t, t)
        self.last_t = max(self.last_t, t)
        if self.previous_t is not None:
            self.steps.add(abs(t - self.previous_t))
        self.previous_t = t
        self.dts.add(dt)
        self.covered += dt
        cpu = line.get("cpu")
        if cpu is not None:
            busy = cpu["user"] + cpu["system"] + cpu["steal"]
            self.busy.add(busy)
            self.busy_sum += busy
            self.busiest.add(cpu["busiest"])
        mem = line.get("mem")
        if mem is not None:
            self._add_memory(mem["total"], mem["used"], mem["swap_used"], mem["rss"])
        disks = line.get("disk")
        if disks:
            for disk in disks:
                size = disk["used"] + disk["free"]
                percent = 100.0 * disk["used"] / size if size > 0 else 0.0
                if self.disk is None or percent > self.disk.peak_percent:
                    self.disk = DiskSummary(disk["path"], percent)
        io, net = line.get("io"), line.get("net")
        if io is not None:
            self._add_traffic("io", io["read"], io["write"], dt)
        if net is not None:
            self._add_traffic("net", net["in"], net["out"], dt)
        pressure = line.get("pressure")
        if pressure is not None:
            for index, share in enumerate((pressure.get("cpu"), pressure.get("memory"), pressure.get("io"))):
                if share is not None:
                    self.pressure_sums[index] += share
                    self.pressure_counts[index] += 1
        containers = line.get("containers")
        if containers:
            for entry in containers:
                self._add_container(entry["name"], entry["mem"], entry.get("oom_kill"))
        self_cpu = line.get("self_cpu")
        if self_cpu is not None:
            previous = self.last_self_cpu
            # A sampler that started again counts from 0: its whole value is new CPU.
            self.self_cpu += self_cpu if previous is None or self_cpu < previous else self_cpu - previous
            self.last_self_cpu = self_cpu

    def _add_memory(self, total: int, used: int, swap_used: int, rss: int) -> None:
        if self.used_peak is None or used > self.used_peak[0]:
            self.used_peak = (used, total)
        if total > 0:
            self.used_percent_peak = max(self.used_percent_peak, 100.0 * used / total)
        self.swap_peak = max(self.swap_peak, swap_used)
        self.rss_peak = max(self.rss_peak, rss)

    def _add_traffic(self, kind: str, first: int, second: int, dt: float) -> None:
        totals = self.traffic.get(kind)
        if totals is None:
            totals = self.traffic[kind] = [0.0, 0.0, 0.0, 0.0]
        totals[0] += first * dt
        totals[1] += second * dt
        totals[2] = max(totals[2], first)
        totals[3] = max(totals[3], second)

    def _add_container(self, name: str, mem: int, oom_kill: int | None) -> None:
        self.container_mem[name] = max(self.container_mem.get(name, 0), mem)
        if oom_kill is None:
            return
        seen = self.container_oom.get(name)
        if seen is None:
            self.container_oom[name] = (oom_kill, 0)
        else:
            last, rise = seen
            self.container_oom[name] = (oom_kill, rise + (oom_kill - last if oom_kill >= last else oom_kill))

    def summary(self, name: str) -> InstanceSummary | None:
        if self.lines == 0:
            return None
        median_dt = self.dts.percentile(50)
        gaps = self.steps.count_over(2 * median_dt)
        return InstanceSummary(
            name=name,
            host=self.host,
            cores=self.cores,
            first_t=self.first_t,
            last_t=self.last_t,
            lines=self.lines,
            gaps=gaps,
            median_dt=median_dt,
            cpu=self._cpu(),
            memory=self._memory(),
            disk=self.disk,
            io=self._traffic("io"),
            net=self._traffic("net"),
            pressure=self._pressure(),
            containers=tuple(
                ContainerSummary(name, peak, self.container_oom.get(name, (0, 0))[1])
                for name, peak in sorted(self.container_mem.items())
            ),
            self_cpu_seconds=self.self_cpu,
            overhead_percent=100.0 * self.self_cpu / self.covered if self.covered > 0 else None,
        )

    def _cpu(self) -> CpuSummary | None:
        if self.busy.total == 0:
            return None
        return CpuSummary(
            mean=self.busy_sum / self.busy.total,
            p95=self.busy.percentile(PERCENTILE),
            max=self.busy.maximum(),
            busiest_p95=self.busiest.percentile(PERCENTILE),
        )

    def _memory(self) -> MemorySummary | None:
        if self.used_peak is None:
            return None
        return MemorySummary(
            total=self.used_peak[1],
            used_peak=self.used_peak[0],
            used_peak_percent=self.used_percent_peak,
            swap_peak=self.swap_peak,
            rss_peak=self.rss_peak,
        )

    def _traffic(self, kind: str) -> TrafficSummary | None:
        totals = self.traffic.get(kind)
        if totals is None:
            return None
        return TrafficSummary(round(totals[0]), round(totals[1]), int(totals[2]), int(totals[3]))

    def _pressure(self) -> PressureSummary | None:
        if not any(self.pressure_counts):
            return None
        means = [total / count if count else None for total, count in zip(self.pressure_sums, self.pressure_counts,
                                                                           strict=True)]
        return PressureSummary(cpu=means[0], memory=means[1], io=means[2])


def summarise(name: str, lines: Iterable[LineFields]) -> InstanceSummary | None:
    """The summary of one instance's checked lines, in the order written; None when there is none.

    >>> from orca.sample.parse.sample_line import fields
    >>> text = ['{"v":1,"t":10.0,"dt":5.0,"host":"a","cpu":{"user":10.0,"system":2.0,"iowait":9.0,"steal":0.0,'
    ...         '"busiest":30.0},"self_cpu":0.1}',
    ...         '{"v":1,"t":15.0,"dt":5.0,"host":"a","cpu":{"user":30.0,"system":4.0,"iowait":0.0,"steal":0.0,'
    ...         '"busiest":80.0},"self_cpu":0.2}']
    >>> summary = summarise("a.jsonl", [fields(line) for line in text])
    >>> summary.cpu, summary.duration, summary.overhead_percent
    (CpuSummary(mean=23.0, p95=34.0, max=34.0, busiest_p95=80.0), 5.0, 2.0)
    """
    fold = _Fold()
    for line in lines:
        fold.add(line)
    return fold.summary(name)
