"""What one instance's run did, folded from its lines in one pass (README, "Looking at a run").

Memory does not grow with the number of lines: percentiles and the median interval come from counts of each distinct
value (the lines carry one decimal for percentages and three for times, so a run of any length repeats a bounded
set of values), which makes them exact.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import le, sub
from typing import TypeVar

from orca.sample.parse.sample_line import (
    CheckedLine,
    LineFields,
    MemLine,
    PressureLine,
    line_of,
)

PERCENTILE = 95
BATCH_LINES = 1024
"""Lines `summarise` folds at a time."""


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
    mem_max: int | None = None
    """The newest memory limit seen (`mem_max`); None when no line had one."""
    pids_peak: int | None = None
    throttled_mean: float | None = None
    """The mean of `throttled` over the lines that have it."""


@dataclass(frozen=True, slots=True)
class InstanceSummary:
    """One instance: the lines of one host in one file or object."""

    name: str
    """The file, `-` or object the lines came from."""
    host: str
    cores: int | None
    """The newest line's `cores`."""
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

    def add_many(self, values: Sequence[float]) -> None:
        if not values:
            return
        first, count = values[0], len(values)
        if values[-1] == first and values.count(first) == count:
            self.counts[first] += count  # one value all along (a steady interval): no hashing per value
        else:
            self.counts.update(values)
        self.total += count

    def percentile(self, percent: float) -> float:
        """The nearest-rank percentile; 0.0 when empty."""
        rank = max(1, math.ceil(self.total * percent / 100))
        seen = 0
        for value in sorted(self.counts):
            seen += self.counts[value]
            if seen >= rank:
                return round(value, self.places)
        return 0.0

    def merge(self, later: _Histogram) -> None:
        self.counts.update(later.counts)
        self.total += later.total

    def weighted_sum(self) -> float:
        """The sum of every value counted, the same however the values were batched or merged.

        >>> histogram = _Histogram(1)
        >>> histogram.add_many([0.1, 0.2, 0.1])
        >>> histogram.weighted_sum()
        0.4
        """
        return math.fsum(value * count for value, count in sorted(self.counts.items()))

    def maximum(self) -> float:
        return round(max(self.counts, default=0.0), self.places)

    def count_over(self, limit: float) -> int:
        return sum(count for value, count in self.counts.items() if round(value, self.places) > limit)


_T = TypeVar("_T", int, float)


def _rise_terms(start: _T, values: Sequence[_T]) -> list[_T]:
    """The terms whose sum is how far a counter went over `values` from `start`; a value below the one before is a
    counter that started again (a new sampler, a new container of that name), from 0: its whole value is new.

    >>> _rise_terms(0, [1, 3, 3, 1, 2]), _rise_terms(5, [5, 6])
    ([1, 0, 3, -1, 3, -3, 1, 2, -1], [6, -5])
    """
    if values and start <= values[0] and all(map(le, values, values[1:])):
        return [values[-1], -start]  # the usual case: it never went back
    terms: list[_T] = []
    last = start
    for value in values:
        terms.append(value)
        if value >= last:
            terms.append(-last)
        last = value
    return terms


def _rise(start: _T, values: Sequence[_T]) -> _T:
    """How far a counter went over `values` from `start` (`_rise_terms`).

    >>> _rise(0, [1, 3, 3, 1, 2]), _rise(5, [5, 6])
    (5, 1)
    """
    return sum(_rise_terms(start, values), start - start)


def _add_rise(total: _ExactSum, start: float, values: Sequence[float]) -> None:
    """`_rise(start, values)` added to `total` as the terms it is made of, so that a rise split in two at any value
    (the end of one part of a file, the start of the next) adds up to exactly the rise taken whole."""
    for term in _rise_terms(start, values):
        total.add(term)


class _ExactSum:
    """A sum of floats kept exactly, as Shewchuk's non-overlapping partials (what `math.fsum` keeps): the same terms
    give the same total however they are grouped, so folds of a file's parts merged add up as one fold's.

    >>> total = _ExactSum()
    >>> for term in (0.1, 0.2, -0.3, 1e100, 1.0, -1e100):
    ...     total.add(term)
    >>> total.value(), 0.1 + 0.2 - 0.3
    (1.0, 5.551115123125783e-17)
    """

    __slots__ = ("partials",)

    def __init__(self) -> None:
        self.partials: list[float] = []

    def add(self, term: float) -> None:
        partials = self.partials
        kept = 0
        for partial in partials:
            high, low = (term, partial) if abs(term) >= abs(partial) else (partial, term)
            total = high + low
            error = low - (total - high)
            if error:
                partials[kept] = error
                kept += 1
            term = total
        partials[kept:] = [term]

    def merge(self, later: _ExactSum) -> None:
        for partial in later.partials:
            self.add(partial)

    def value(self) -> float:
        return math.fsum(self.partials)


class _Traffic:
    """Disk io or network so far: bytes moved (rate × `dt`) each way, and the highest rates."""

    __slots__ = ("first", "first_peak", "second", "second_peak")

    def __init__(self) -> None:
        self.first, self.second = _ExactSum(), _ExactSum()
        self.first_peak = self.second_peak = 0.0

    def add(self, first: float, second: float, first_peak: float, second_peak: float) -> None:
        self.first.add(first)
        self.second.add(second)
        self.first_peak, self.second_peak = first_peak, second_peak

    def merge(self, later: _Traffic) -> None:
        self.first.merge(later.first)
        self.second.merge(later.second)
        self.first_peak, self.second_peak = max(self.first_peak, later.first_peak), max(self.second_peak,
                                                                                          later.second_peak)

    def summary(self) -> TrafficSummary:
        return TrafficSummary(round(self.first.value()), round(self.second.value()), int(self.first_peak),
                              int(self.second_peak))


class _ContainerFold:
    """One container's figures so far."""

    __slots__ = ("first_oom_kill", "mem_max", "mem_peak", "oom_kills", "pids_peak", "throttled", "throttled_count",
                 "throttled_sum")

    def __init__(self) -> None:
        self.mem_peak = 0
        self.oom_kills: list[int] = []
        """The `oom_kill` values of the batch being read, then only the last one."""
        self.first_oom_kill: int | None = None
        """The first `oom_kill` value: where a fold of the lines before these would take the count up."""
        self.mem_max: int | None = None
        self.pids_peak = -1
        self.throttled: list[float] = []
        """The `throttled` values of the batch being read."""
        self.throttled_sum = _ExactSum()
        self.throttled_count = 0

    def merge(self, later: _ContainerFold) -> None:
        """`later`'s figures (of the lines after these) taken in; how far `oom_kill` rose is counted by `_Fold`."""
        self.mem_peak = max(self.mem_peak, later.mem_peak)
        if later.oom_kills:
            self.oom_kills = later.oom_kills
        if self.first_oom_kill is None:
            self.first_oom_kill = later.first_oom_kill
        if later.mem_max is not None:
            self.mem_max = later.mem_max
        self.pids_peak = max(self.pids_peak, later.pids_peak)
        self.throttled_sum.merge(later.throttled_sum)
        self.throttled_count += later.throttled_count

    def summary(self, name: str, oom_rise: int) -> ContainerSummary:
        throttled = self.throttled_sum.value() / self.throttled_count if self.throttled_count else None
        return ContainerSummary(name, self.mem_peak, oom_rise, self.mem_max,
                                None if self.pids_peak < 0 else self.pids_peak, throttled)


class _Fold:
    """The running state of one instance's summary; `add_lines` one batch of checked lines at a time.

    One plain loop over the lines, each value read once (reading a field of a decoded line is among the cheapest
    things Python does, cheaper than taking columns out with builtins); what needs every value (the percentiles, the
    sums) is gathered per batch and counted by a builtin.

    `merge` takes in the fold of the lines that follow, folded on their own (another part of the same file): the
    result is the fold of all the lines in one pass."""

    def __init__(self) -> None:
        self.lines = 0
        self.host = ""
        self.cores: int | None = None
        self.first_t = math.inf
        self.last_t = -math.inf
        self.opening_t: float | None = None
        """The first line's `t`: a fold of the lines before these takes the step to it."""
        self.previous_t: float | None = None
        """The last line's `t`."""
        self.dts = _Histogram(3)
        self.steps = _Histogram(3)
        self.busy = _Histogram(1)
        self.busiest = _Histogram(1)
        self.used_peak: tuple[int, int] | None = None
        """(`used`, `total`) of the line with the most used."""
        self.swap_peak = 0
        self.rss_peak = 0
        self.used_percent_peak = 0.0
        self.disk: DiskSummary | None = None
        self.io: _Traffic | None = None
        self.net: _Traffic | None = None
        self.pressure_sums = [_ExactSum(), _ExactSum(), _ExactSum()]
        self.pressure_counts = [0, 0, 0]
        self.containers: dict[str, _ContainerFold] = {}
        self.oom_rises: dict[str, int] = {}
        self.first_self_cpu: float | None = None
        """The first `self_cpu`: all of it is new CPU, unless a fold of the lines before these goes on from it."""
        self.self_cpu = _ExactSum()
        """How far `self_cpu` rose after the first value."""
        self.last_self_cpu: float | None = None

    def add_lines(self, lines: Sequence[CheckedLine]) -> None:  # one loop, on purpose
        """A batch of lines, in the order written."""
        if not lines:
            return
        self.lines += len(lines)
        times = [line.t for line in lines]
        dts = [line.dt for line in lines]
        self.first_t = min(self.first_t, min(times))
        self.last_t = max(self.last_t, max(times))
        if self.previous_t is None:
            self.opening_t = times[0]
        previous = times if self.previous_t is None else [self.previous_t, *times]
        self.steps.add_many(list(map(abs, map(sub, previous[1:], previous))))
        self.previous_t = times[-1]
        self.dts.add_many(dts)
        busy: list[float] = []
        busiest: list[float] = []
        self_cpus: list[float] = []
        mems: list[MemLine] = []
        disk_peak = -1.0 if self.disk is None else self.disk.peak_percent
        disk_path = None
        # The batch's bytes moved, and the highest rates so far.
        read_total = write_total = received_total = sent_total = 0.0
        read_peak, write_peak = (0.0, 0.0) if self.io is None else (self.io.first_peak, self.io.second_peak)
        received_peak, sent_peak = (0.0, 0.0) if self.net is None else (self.net.first_peak, self.net.second_peak)
        pressures: list[PressureLine] = []
        containers = self.containers
        cores = self.cores
        for line in lines:
            if line.cores is not None:
                cores = line.cores
            cpu = line.cpu
            if cpu is not None:
                busy.append(cpu.user + cpu.system + cpu.steal)
                busiest.append(cpu.busiest)
            if line.mem is not None:
                mems.append(line.mem)
            if line.disk:
                for disk in line.disk:
                    used, size = disk.used, disk.used + disk.free
                    # `fullness`, written out: a call per disk would be a good share of the loop.
                    if size > 0 and 100.0 * used / size > disk_peak:
                        disk_peak, disk_path = 100.0 * used / size, disk.path
            # io and net written out each, into locals: a loop over the two, or a call, cost a tenth of this loop.
            dt = line.dt
            if line.io is not None:
                read, write = line.io.first, line.io.second
                read_total += read * dt
                write_total += write * dt
                if read > read_peak:
                    read_peak = read
                if write > write_peak:
                    write_peak = write
            if line.net is not None:
                received, sent = line.net.first, line.net.second
                received_total += received * dt
                sent_total += sent * dt
                if received > received_peak:
                    received_peak = received
                if sent > sent_peak:
                    sent_peak = sent
            if line.pressure is not None:
                pressures.append(line.pressure)
            if line.containers:
                for entry in line.containers:
                    fold = containers.get(entry.name)
                    if fold is None:
                        fold = containers[entry.name] = _ContainerFold()
                    if entry.mem > fold.mem_peak:
                        fold.mem_peak = entry.mem
                    if entry.oom_kill is not None:
                        fold.oom_kills.append(entry.oom_kill)
                    if entry.throttled is not None:
                        fold.throttled.append(entry.throttled)
                    if entry.mem_max is not None:
                        fold.mem_max = entry.mem_max
                    if entry.pids is not None and entry.pids > fold.pids_peak:
                        fold.pids_peak = entry.pids
            if line.self_cpu is not None:
                self_cpus.append(line.self_cpu)
        self.host, self.cores = lines[-1].host, cores
        if pressures:
            self._add_pressures(pressures)
        self.busy.add_many(busy)
        self.busiest.add_many(busiest)
        if mems:
            self._add_memory(mems)
        if disk_path is not None:
            self.disk = DiskSummary(disk_path, disk_peak)  # the first at its fullest
        if self.io is None and any(line.io is not None for line in lines):
            self.io = _Traffic()
        if self.io is not None:
            self.io.add(read_total, write_total, read_peak, write_peak)
        if self.net is None and any(line.net is not None for line in lines):
            self.net = _Traffic()
        if self.net is not None:
            self.net.add(received_total, sent_total, received_peak, sent_peak)
        for name, fold in containers.items():
            if fold.oom_kills:
                counts = fold.oom_kills
                if fold.first_oom_kill is None:
                    fold.first_oom_kill = counts[0]
                self.oom_rises[name] = self.oom_rises.get(name, 0) + _rise(counts[0], counts)
                fold.oom_kills = [counts[-1]]
            if fold.throttled:
                fold.throttled_sum.add(sum(fold.throttled))
                fold.throttled_count += len(fold.throttled)
                fold.throttled = []
        if self_cpus:
            if self.first_self_cpu is None:
                self.first_self_cpu = self_cpus[0]
            # A sampler that started again counts from 0.
            _add_rise(self.self_cpu, self_cpus[0] if self.last_self_cpu is None else self.last_self_cpu, self_cpus)
            self.last_self_cpu = self_cpus[-1]

    def merge(self, later: _Fold) -> None:
        """Take in `later`: the fold of the lines that came after this fold's (of the same host), folded on their own.
        This fold becomes the fold of both parts' lines in one pass; `later` is not to be used again."""
        if later.lines == 0:
            return
        if self.previous_t is not None and later.opening_t is not None:
            self.steps.add_many([abs(later.opening_t - self.previous_t)])  # the step across the cut
        else:
            self.opening_t = later.opening_t
        self.previous_t = later.previous_t
        self.lines += later.lines
        self.host = later.host
        if later.cores is not None:
            self.cores = later.cores
        self.first_t, self.last_t = min(self.first_t, later.first_t), max(self.last_t, later.last_t)
        for histogram, theirs in ((self.dts, later.dts), (self.steps, later.steps), (self.busy, later.busy),
                                  (self.busiest, later.busiest)):
            histogram.merge(theirs)
        if later.used_peak is not None and (self.used_peak is None or later.used_peak[0] > self.used_peak[0]):
            self.used_peak = later.used_peak  # the first line with the most used, as in one pass
        self.used_percent_peak = max(self.used_percent_peak, later.used_percent_peak)
        self.swap_peak, self.rss_peak = max(self.swap_peak, later.swap_peak), max(self.rss_peak, later.rss_peak)
        if later.disk is not None and (self.disk is None or later.disk.peak_percent > self.disk.peak_percent):
            self.disk = later.disk
        self.io, self.net = _merged_traffic(self.io, later.io), _merged_traffic(self.net, later.net)
        for total, later_total in zip(self.pressure_sums, later.pressure_sums, strict=True):
            total.merge(later_total)
        self.pressure_counts = [mine + theirs for mine, theirs in zip(self.pressure_counts, later.pressure_counts,
                                                                        strict=True)]
        self._merge_containers(later)
        if later.first_self_cpu is not None:
            if self.last_self_cpu is None:
                self.first_self_cpu = later.first_self_cpu
            else:
                _add_rise(self.self_cpu, self.last_self_cpu, [later.first_self_cpu])
            self.self_cpu.merge(later.self_cpu)
            self.last_self_cpu = later.last_self_cpu

    def _merge_containers(self, later: _Fold) -> None:
        for name, theirs in later.containers.items():
            rise = later.oom_rises.get(name, 0)
            mine = self.containers.get(name)
            if mine is None:
                self.containers[name] = theirs
            else:
                if mine.oom_kills and theirs.first_oom_kill is not None:
                    rise += _rise(mine.oom_kills[-1], [theirs.first_oom_kill])
                mine.merge(theirs)
            if rise:
                self.oom_rises[name] = self.oom_rises.get(name, 0) + rise

    def _add_memory(self, mems: list[MemLine]) -> None:
        used = [mem.used for mem in mems]
        totals = [mem.total for mem in mems]
        most = max(used)
        if self.used_peak is None or most > self.used_peak[0]:
            self.used_peak = (most, totals[used.index(most)])
        if totals.count(totals[0]) == len(totals):  # one total (the usual case): the highest share is the most used's
            shares = [100.0 * most / totals[0]] if totals[0] > 0 else []
        else:
            shares = [100.0 * part / total for part, total in zip(used, totals, strict=True) if total > 0]
        self.used_percent_peak = max([self.used_percent_peak, *shares])
        self.swap_peak = max(self.swap_peak, max([mem.swap_used for mem in mems]))
        self.rss_peak = max(self.rss_peak, max([mem.rss for mem in mems]))

    def _add_pressures(self, pressures: list[PressureLine]) -> None:
        for index, shares in enumerate((
            [pressure.cpu for pressure in pressures],
            [pressure.memory for pressure in pressures],
            [pressure.io for pressure in pressures],
        )):
            present = [share for share in shares if share is not None]
            self.pressure_sums[index].add(sum(present))
            self.pressure_counts[index] += len(present)

    def summary(self, name: str) -> InstanceSummary | None:
        if self.lines == 0:
            return None
        median_dt = self.dts.percentile(50)
        gaps = self.steps.count_over(2 * median_dt)
        self_cpu = self.self_cpu.value() + (self.first_self_cpu or 0.0)
        covered = self.dts.weighted_sum()
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
            io=None if self.io is None else self.io.summary(),
            net=None if self.net is None else self.net.summary(),
            pressure=self._pressure(),
            containers=tuple(
                fold.summary(name, self.oom_rises.get(name, 0)) for name, fold in sorted(self.containers.items())
            ),
            self_cpu_seconds=self_cpu,
            overhead_percent=100.0 * self_cpu / covered if covered > 0 else None,
        )

    def _cpu(self) -> CpuSummary | None:
        if self.busy.total == 0:
            return None
        return CpuSummary(
            mean=self.busy.weighted_sum() / self.busy.total,
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

    def _pressure(self) -> PressureSummary | None:
        if not any(self.pressure_counts):
            return None
        means = [total.value() / count if count else None
                 for total, count in zip(self.pressure_sums, self.pressure_counts, strict=True)]
        return PressureSummary(cpu=means[0], memory=means[1], io=means[2])


def _merged_traffic(earlier: _Traffic | None, later: _Traffic | None) -> _Traffic | None:
    if earlier is None or later is None:
        return later if earlier is None else earlier
    earlier.merge(later)
    return earlier


class HostFolds:
    """The folds of one source's lines, one per host in the order each first appears: a file or a log can hold
    several hosts' lines (a pod's log collected with others, files joined with `cat`).

    Parts of a source can be folded apart (by other processes) and merged in the order of their lines: the summaries
    are those of one fold over the whole source."""

    __slots__ = ("folds",)

    def __init__(self) -> None:
        self.folds: dict[str, _Fold] = {}

    def add(self, batch: Sequence[CheckedLine]) -> None:
        """The next lines, in the order written."""
        if not batch:
            return
        hosts = [line.host for line in batch]
        if hosts.count(hosts[0]) == len(hosts):  # one host, the usual case
            self._fold_of(hosts[0]).add_lines(batch)
            return
        per_host: dict[str, list[CheckedLine]] = {}
        for line, host in zip(batch, hosts, strict=True):
            per_host.setdefault(host, []).append(line)
        for host, lines in per_host.items():
            self._fold_of(host).add_lines(lines)

    def merge(self, later: HostFolds) -> None:
        """Take in the folds of the lines that follow these (see `_Fold.merge`); `later` is not to be used again."""
        for host, fold in later.folds.items():
            self._fold_of(host).merge(fold)

    def summaries(self, name: str) -> list[InstanceSummary]:
        return [summary for fold in self.folds.values() if (summary := fold.summary(name)) is not None]

    def _fold_of(self, host: str) -> _Fold:
        fold = self.folds.get(host)
        if fold is None:
            fold = self.folds[host] = _Fold()
        return fold


def summarise_hosts(name: str, batches: Iterable[Sequence[CheckedLine]]) -> list[InstanceSummary]:
    """The summaries of one source's lines, one per host in the order each first appears (see `HostFolds`)."""
    return fold_hosts(batches).summaries(name)


def fold_hosts(batches: Iterable[Sequence[CheckedLine]]) -> HostFolds:
    folds = HostFolds()
    for batch in batches:
        folds.add(batch)
    return folds


def summarise_checked(name: str, batches: Iterable[Sequence[CheckedLine]]) -> InstanceSummary | None:
    """`summarise` of lines given in batches as `many_lines` decodes them, every host's as one instance."""
    fold = _Fold()
    for batch in batches:
        fold.add_lines(batch)
    return fold.summary(name)


def summarise_batches(name: str, batches: Iterable[list[LineFields]]) -> InstanceSummary | None:
    """`summarise` of lines given in batches (as `many_fields` checks them)."""
    return summarise_checked(name, ([line_of(line) for line in batch] for batch in batches))


def summarise(name: str, lines: Iterable[LineFields]) -> InstanceSummary | None:
    """The summary of checked lines as one instance, in the order written; None when there is none.

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
