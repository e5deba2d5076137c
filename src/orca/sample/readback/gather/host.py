"""The host's sections of the line, gathered (`section.py`): `cpu`, `mem` and `disk`. Their figures are the host's,
but for `mem.rss`, the run's own resident memory, which the run's text row and chart panel show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orca.sample.line_format import Count, Percent, Sample
from orca.sample.readback.exact import Histogram
from orca.sample.readback.gather.section import MEAN, NEWEST, PEAK, Bounds, Column, Row, Whole, present

PERCENTILE = 95


@dataclass(frozen=True, slots=True)
class CpuSummary:
    """The host's CPU, in percent of all its cores. Busy is `user` + `system` + `steal` (everything but idle and
    iowait, as `busiest` counts a core)."""

    mean_all_cores_percent: Percent
    p95_all_cores_percent: Percent
    """The nearest-rank 95th percentile: the smallest value at least 95 % of the lines are at or below."""
    max_all_cores_percent: Percent
    busiest_core_p95_percent: Percent
    """The 95th percentile of `busiest`, the busiest single core's busy percent."""


class CpuSection:
    """`cpu`: busy shares counted for exact percentiles; each point's mean of user, system, iowait and busiest."""

    key = "cpu"
    columns = (Column("cpu_user", MEAN, tenths=True), Column("cpu_system", MEAN, tenths=True),
               Column("cpu_iowait", MEAN, tenths=True), Column("cpu_busiest", MEAN, tenths=True))
    keyed = False
    __slots__ = ("busiest", "busy")

    def __init__(self) -> None:
        self.busy = Histogram(1)
        self.busiest = Histogram(1)

    def add(self, lines: Sequence[Sample]) -> None:
        shares = present([line.cpu for line in lines])
        self.busy.add_many([cpu.user + cpu.system + cpu.steal for cpu in shares])
        self.busiest.add_many([cpu.busiest for cpu in shares])

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        rows = []
        for begin, end in bounds:
            user = system = iowait = busiest = 0.0
            count = 0
            for line in lines[begin:end]:
                cpu = line.cpu
                if cpu is not None:
                    user += cpu.user
                    system += cpu.system
                    iowait += cpu.iowait
                    busiest += cpu.busiest
                    count += 1
            rows.append((user, count, system, count, iowait, count, busiest, count))
        return rows

    def merge(self, later: CpuSection) -> None:
        self.busy.merge(later.busy)
        self.busiest.merge(later.busiest)

    def summary(self) -> dict[str, Any]:
        if self.busy.total == 0:
            return {"cpu": None}
        return {"cpu": CpuSummary(self.busy.weighted_sum() / self.busy.total, self.busy.percentile(PERCENTILE),
                                  self.busy.maximum(), self.busiest.percentile(PERCENTILE))}


@dataclass(frozen=True, slots=True)
class MemorySummary:
    total: Count
    """`mem.total` of the line with the most used."""
    used_peak: Count
    used_peak_percent: Percent
    """The largest 100 × `used` / `total` of any line."""
    swap_peak: Count
    rss_peak: Count
    """The run's own processes' resident bytes at their largest (`mem.rss`)."""


def _no_memory() -> Row:
    """The row of lines without a `mem`."""
    return None, None, None, None


class MemorySection:
    """`mem`: the most used (the first line with it, and its total), the highest share used, the most swap and
    `rss`; each point's highest used, cache and rss, and its newest total."""

    key = "memory"
    columns = (Column("mem_used", PEAK), Column("mem_cache", PEAK), Column("mem_rss", PEAK),
               Column("mem_total", NEWEST))
    keyed = False
    __slots__ = ("rss_peak", "share_peak", "swap_peak", "used_peak")

    def __init__(self) -> None:
        self.used_peak: tuple[int, int] | None = None
        """(`used`, `total`) of the first line with the most used."""
        self.share_peak = 0.0
        self.swap_peak = self.rss_peak = 0

    def add(self, lines: Sequence[Sample]) -> Whole:
        """The batch's figures; its row as one stretch made from the same records, its most used and rss."""
        known = present([line.mem for line in lines])
        if not known:
            return _no_memory
        used = [mem.used for mem in known]
        most = max(used)
        if self.used_peak is None or most > self.used_peak[0]:
            self.used_peak = (most, known[used.index(most)].total)  # the first line with the most used
        totals = [mem.total for mem in known]
        if totals.count(totals[0]) == len(totals):  # one total (the usual case): the most used is the highest share
            shares = [100.0 * most / totals[0]] if totals[0] > 0 else []
        else:
            shares = [100.0 * part / total for part, total in zip(used, totals, strict=True) if total > 0]
        self.share_peak = max([self.share_peak, *shares])
        self.swap_peak = max(self.swap_peak, max([mem.swap_used for mem in known]))
        rss = max([mem.rss for mem in known])
        self.rss_peak = max(self.rss_peak, rss)
        newest = lines[-1].mem
        return lambda: (most, max([mem.cache for mem in known]), rss, None if newest is None else newest.total)

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        rows = []
        for begin, end in bounds:
            used = cache = rss = -1
            for line in lines[begin:end]:
                mem = line.mem
                if mem is not None:
                    if mem.used > used:
                        used = mem.used
                    if mem.cache > cache:
                        cache = mem.cache
                    if mem.rss > rss:
                        rss = mem.rss
            newest = lines[end - 1].mem
            rows.append((None if used < 0 else used, None if cache < 0 else cache, None if rss < 0 else rss,
                         None if newest is None else newest.total))
        return rows

    def merge(self, later: MemorySection) -> None:
        if later.used_peak is not None and (self.used_peak is None or later.used_peak[0] > self.used_peak[0]):
            self.used_peak = later.used_peak  # the first line with the most used, as in one pass
        self.share_peak = max(self.share_peak, later.share_peak)
        self.swap_peak, self.rss_peak = max(self.swap_peak, later.swap_peak), max(self.rss_peak, later.rss_peak)

    def summary(self) -> dict[str, Any]:
        if self.used_peak is None:
            return {"memory": None}
        return {"memory": MemorySummary(self.used_peak[1], self.used_peak[0], self.share_peak, self.swap_peak,
                                        self.rss_peak)}


@dataclass(frozen=True, slots=True)
class DiskSummary:
    path: str
    peak_percent: Percent
    """The fullest file system at its fullest: 100 × `used` / (`used` + `free`), as `df` counts Use%."""


def _fullest(line: Sample) -> float | None:
    """The line's fullest file system's percent used, as `df` counts it; None without one of any size."""
    return max((100 * disk.used / size for disk in line.disk or () if (size := disk.used + disk.free) > 0),
               default=None)


class DiskSection:
    """`disk`: the fullest file system at its fullest (the first to reach it); each point's newest line's fullest."""

    key = "disk"
    columns = (Column("disk_percent", NEWEST),)
    keyed = False
    __slots__ = ("fullest",)

    def __init__(self) -> None:
        self.fullest: DiskSummary | None = None

    def add(self, lines: Sequence[Sample]) -> None:
        peak = -1.0 if self.fullest is None else self.fullest.peak_percent
        path = None
        for line in lines:
            disks = line.disk
            if disks:
                for disk in disks:
                    used = disk.used
                    size = used + disk.free
                    # Whole numbers divided, as a file system's sizes have no bound.
                    if size > 0 and 100 * used / size > peak:
                        peak, path = 100 * used / size, disk.path
        if path is not None:
            self.fullest = DiskSummary(path, peak)

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        return [(_fullest(lines[end - 1]),) for _, end in bounds]

    def merge(self, later: DiskSection) -> None:
        fullest = later.fullest
        if fullest is not None and (self.fullest is None or fullest.peak_percent > self.fullest.peak_percent):
            self.fullest = fullest

    def summary(self) -> dict[str, Any]:
        return {"disk": self.fullest}
