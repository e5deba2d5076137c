"""What one instance's run did, folded from its lines in one pass (README, "Looking at a run").

Memory does not grow with the number of lines: percentiles come from counts per tenth of a percent (the lines carry
one decimal, so they are exact), the median interval from counts per millisecond.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from operator import le, mul, sub

from orca.sample.compute.line import fullness
from orca.sample.parse.sample_line import (
    CheckedLine,
    ContainerLine,
    CpuLine,
    DiskLine,
    LineFields,
    MemLine,
    PressureLine,
    TrafficLine,
    line_of,
)

PERCENTILE = 95
BATCH_LINES = 1024
"""Lines folded at a time: each figure is taken over a batch at once, in memory that stays small."""


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
    """Counts of each value seen: exact percentiles in bounded memory, since the lines carry few decimals (one for
    percentages, three for times), so a run repeats a bounded set of values however long it is."""

    __slots__ = ("counts", "places", "total")

    def __init__(self, places: int) -> None:
        self.counts: Counter[float] = Counter()
        self.places = places
        """Answers are rounded to this many decimals (sums of one-decimal values carry float noise)."""
        self.total = 0

    def add_many(self, values: list[float]) -> None:
        self.counts.update(values)
        self.total += len(values)

    def percentile(self, percent: float) -> float:
        """The nearest-rank percentile; 0.0 when empty."""
        rank = max(1, math.ceil(self.total * percent / 100))
        seen = 0
        for value in sorted(self.counts):
            seen += self.counts[value]
            if seen >= rank:
                return round(value, self.places)
        return 0.0

    def maximum(self) -> float:
        return round(max(self.counts, default=0.0), self.places)

    def count_over(self, limit: float) -> int:
        return sum(count for value, count in self.counts.items() if round(value, self.places) > limit)


class _Fold:
    """The running state of one instance's summary; `add_lines` one batch of checked lines at a time."""

    def __init__(self) -> None:
        self.lines = 0
        self.host = ""
        self.cores: int | None = None
        self.first_t = math.inf
        self.last_t = -math.inf
        self.previous_t: float | None = None
        self.dts = _Histogram(3)
        self.steps = _Histogram(3)
        self.covered = 0.0
        self.busy = _Histogram(1)
        self.busy_sum = 0.0
        self.busiest = _Histogram(1)
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

    def add_lines(self, lines: list[CheckedLine]) -> None:
        """A batch of lines, in the order written: each figure over the whole batch at once."""
        if not lines:
            return
        self.lines += len(lines)
        last = lines[-1]
        self.host = last.host
        self.cores = next((count for line in reversed(lines) if (count := line.cores) is not None), self.cores)
        times = [line.t for line in lines]
        dts = [line.dt for line in lines]
        self.first_t = min(self.first_t, min(times))
        self.last_t = max(self.last_t, max(times))
        previous = times if self.previous_t is None else [self.previous_t, *times]
        self.steps.add_many(list(map(abs, map(sub, previous[1:], previous))))
        self.previous_t = times[-1]
        self.dts.add_many(dts)
        self.covered += sum(dts)
        self._add_cpu([cpu for line in lines if (cpu := line.cpu) is not None])
        self._add_memory([mem for line in lines if (mem := line.mem) is not None])
        self._add_disks([disk for line in lines if line.disk for disk in line.disk])
        self._add_traffic("io", [line.io for line in lines], dts)
        self._add_traffic("net", [line.net for line in lines], dts)
        self._add_pressure([pressure for line in lines if (pressure := line.pressure) is not None])
        self._add_containers([entry for line in lines if line.containers for entry in line.containers])
        self._add_self_cpu([value for line in lines if (value := line.self_cpu) is not None])

    def _add_cpu(self, cpus: list[CpuLine]) -> None:
        busy = [cpu.user + cpu.system + cpu.steal for cpu in cpus]
        self.busy.add_many(busy)
        self.busy_sum += sum(busy)
        self.busiest.add_many([cpu.busiest for cpu in cpus])

    def _add_memory(self, mems: list[MemLine]) -> None:
        if not mems:
            return
        used = [mem.used for mem in mems]
        most = max(used)
        if self.used_peak is None or most > self.used_peak[0]:
            self.used_peak = (most, mems[used.index(most)].total)
        shares = [100.0 * mem.used / mem.total for mem in mems if mem.total > 0]
        self.used_percent_peak = max(self.used_percent_peak, max(shares, default=0.0))
        self.swap_peak = max(self.swap_peak, max([mem.swap_used for mem in mems]))
        self.rss_peak = max(self.rss_peak, max([mem.rss for mem in mems]))

    def _add_disks(self, disks: list[DiskLine]) -> None:
        if not disks:
            return
        percents = [0.0 if (p := fullness(disk.used, disk.free)) is None else p for disk in disks]
        peak = max(percents)
        if self.disk is None or peak > self.disk.peak_percent:
            self.disk = DiskSummary(disks[percents.index(peak)].path, peak)  # the first at its fullest

    def _add_traffic(self, kind: str, rates: list[TrafficLine | None], dts: list[float]) -> None:
        """Per line: its `io` or `net` (bytes per second; None when absent) and its `dt`."""
        if None in rates:
            pairs = [(rate, dt) for rate, dt in zip(rates, dts, strict=True) if rate is not None]
            rates, dts = [rate for rate, _ in pairs], [dt for _, dt in pairs]
        if not rates:
            return
        totals = self.traffic.setdefault(kind, [0.0, 0.0, 0.0, 0.0])
        firsts = [rate.first for rate in rates if rate is not None]
        seconds = [rate.second for rate in rates if rate is not None]
        totals[0] += sum(map(mul, firsts, dts))
        totals[1] += sum(map(mul, seconds, dts))
        totals[2] = max(totals[2], max(firsts))
        totals[3] = max(totals[3], max(seconds))

    def _add_containers(self, entries: list[ContainerLine]) -> None:
        peaks, ooms = self.container_mem, self.container_oom
        for entry in entries:
            name, mem, oom_kill = entry.name, entry.mem, entry.oom_kill
            if mem > peaks.get(name, -1):
                peaks[name] = mem
            if oom_kill is None:
                continue
            seen = ooms.get(name)
            if seen is None:
                ooms[name] = (oom_kill, 0)
            elif oom_kill != seen[0]:
                last, rise = seen
                ooms[name] = (oom_kill, rise + (oom_kill - last if oom_kill >= last else oom_kill))

    def _add_pressure(self, pressures: list[PressureLine]) -> None:
        per_resource = (
            [share for pressure in pressures if (share := pressure.cpu) is not None],
            [share for pressure in pressures if (share := pressure.memory) is not None],
            [share for pressure in pressures if (share := pressure.io) is not None],
        )
        for index, shares in enumerate(per_resource):
            self.pressure_sums[index] += sum(shares)
            self.pressure_counts[index] += len(shares)

    def _add_self_cpu(self, values: list[float]) -> None:
        if not values:
            return
        previous, total = self.last_self_cpu, self.self_cpu
        if all(map(le, values, values[1:])) and (previous is None or previous <= values[0]):
            # One sampler all along (the usual case): what it used is how far its counter went.
            self.self_cpu = total + values[-1] - (0.0 if previous is None else previous)
            self.last_self_cpu = values[-1]
            return
        for value in values:
            # A sampler that started again counts from 0: its whole value is new CPU.
            total += value if previous is None or value < previous else value - previous
            previous = value
        self.self_cpu, self.last_self_cpu = total, previous

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


def summarise_checked(name: str, batches: Iterable[list[CheckedLine]]) -> InstanceSummary | None:
    """`summarise` of lines given in batches as `many_lines` decodes them."""
    fold = _Fold()
    for batch in batches:
        fold.add_lines(batch)
    return fold.summary(name)


def summarise_batches(name: str, batches: Iterable[list[LineFields]]) -> InstanceSummary | None:
    """`summarise` of lines given in batches (as `many_fields` checks them)."""
    return summarise_checked(name, ([line_of(line) for line in batch] for batch in batches))


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
    iterator = iter(lines)
    return summarise_batches(name, iter(lambda: list(islice(iterator, BATCH_LINES)), []))
