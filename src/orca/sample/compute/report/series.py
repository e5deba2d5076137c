"""What a chart of a run draws: per instance, the values of its lines over time, thinned to at most a few thousand
points however long the run (each point the mean of the lines it stands for), in memory that does not grow with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from orca.sample.compute.disks import fullness
from orca.sample.compute.report.distinct import DistinctCount
from orca.sample.line_format import Sample

MAX_POINTS = 2000
"""A run longer than this many lines is drawn from means of consecutive lines, 2, 4, 8, ... at a time."""
MAX_CONTAINERS = 20
"""The containers a chart draws at most: those of the highest memory peak (more would fill it with a legend)."""
_KEPT_CONTAINERS = 1000
"""Containers' series kept before those but the largest are let go: a thousand at a time, not one by one."""

FIELDS = (
    "cpu_user",
    "cpu_system",
    "cpu_iowait",
    "cpu_busiest",
    "mem_used",
    "mem_cache",
    "mem_rss",
    "mem_total",
    "disk_percent",
    "io_read",
    "io_write",
    "net_in",
    "net_out",
    "pressure_cpu",
    "pressure_memory",
    "pressure_io",
)
"""The series of every instance, in this order; `disk_percent` is the fullest file system's, as `df` counts it."""


@dataclass(frozen=True, slots=True)
class Series:
    """One instance's values over time; NaN where a line had no value (a chart leaves a gap there)."""

    name: str
    t: tuple[float, ...]
    values: dict[str, tuple[float, ...]]
    """Per name in `FIELDS`, one value per point of `t`."""
    containers: dict[str, tuple[float, ...]]
    """Each container's `mem`, per point of `t`: the `MAX_CONTAINERS` of the highest peak, by name."""
    lines_per_point: int
    containers_omitted: int = 0
    """How many other containers the lines named."""
    containers_omitted_estimated: bool = False
    """Whether `containers_omitted` is an estimate (off by about 1 %), as it is past thousands of names."""


class SeriesFold:
    """Collects the points of one instance's series, one decoded line at a time."""

    def __init__(self, max_points: int = MAX_POINTS) -> None:
        self._max_points = max(1, max_points)
        self._per_point = 1
        # Per point: [lines, sum of t, then per field its sum and its count].
        self._points: list[list[float]] = []
        self._containers: list[dict[str, list[float]]] = []
        self._peaks: dict[str, int] = {}
        """Each container's highest `mem`, of those kept: at most `_KEPT_CONTAINERS`, the rest let go."""
        self._let_go = DistinctCount()

    def add(self, line: Sample) -> None:
        if not self._points or self._points[-1][0] >= self._per_point:
            if len(self._points) >= 2 * self._max_points:
                self._halve()
            self._points.append([0.0, 0.0] + [0.0, 0.0] * len(FIELDS))
            self._containers.append({})
        point = self._points[-1]
        point[0] += 1
        point[1] += line.t
        # Section by section, each value once: a million-line run is drawn at the pace of this.
        cpu, mem, io, net, pressure = line.cpu, line.mem, line.io, line.net, line.pressure
        if cpu is not None:
            _add_all(point, _CPU_AT, cpu.user, cpu.system, cpu.iowait, cpu.busiest)
        if mem is not None:
            _add_all(point, _MEM_AT, mem.used, mem.cache, mem.rss, mem.total)
        if line.disk:
            fullest = max((fullness(disk.used, disk.free) or 0.0 for disk in line.disk), default=0.0)
            if any(disk.used + disk.free > 0 for disk in line.disk):
                _add_all(point, _DISK_AT, fullest)
        if io is not None:
            _add_all(point, _IO_AT, io.read, io.write)
        if net is not None:
            _add_all(point, _NET_AT, net.received, net.sent)
        if pressure is not None:
            for at, share in zip(_PRESSURE_AT, (pressure.cpu, pressure.memory, pressure.io), strict=True):
                if share is not None:
                    _add_all(point, at, share)
        containers, peaks = self._containers[-1], self._peaks
        for entry in line.containers or ():
            sums = containers.setdefault(entry.name, [0.0, 0.0])
            sums[0] += entry.mem
            sums[1] += 1
            if entry.mem >= peaks.get(entry.name, 0):
                peaks[entry.name] = entry.mem
        if len(peaks) > _KEPT_CONTAINERS:
            self._bound()

    def _largest(self) -> list[str]:
        return sorted(self._peaks, key=lambda name: (-self._peaks[name], name))[:MAX_CONTAINERS]

    def _bound(self) -> None:
        """Only the `MAX_CONTAINERS` of the highest peak kept, so memory does not grow with the containers."""
        gone = set(self._peaks) - set(self._largest())
        self._let_go.add_all(gone)
        for name in gone:
            del self._peaks[name]
        for point in self._containers:
            for name in gone & point.keys():
                del point[name]

    def _halve(self) -> None:
        """Merge consecutive pairs of points: twice the lines per point, half the points."""
        points, containers = self._points, self._containers
        self._points = [[a + b for a, b in zip(points[i], points[i + 1], strict=True)]
                        for i in range(0, len(points) - 1, 2)]
        self._containers = [_merged(containers[i], containers[i + 1]) for i in range(0, len(containers) - 1, 2)]
        if len(points) % 2:
            self._points.append(points[-1])
            self._containers.append(containers[-1])
        self._per_point *= 2

    def series(self, name: str) -> Series:
        count = len(self._points)
        values = {
            field: tuple(_mean(point[2 + 2 * index], point[3 + 2 * index]) for point in self._points)
            for index, field in enumerate(FIELDS)
        }
        names = sorted(self._largest())
        named = self._let_go.copy()
        named.add_all(self._peaks)
        return Series(
            name=name,
            t=tuple(point[1] / point[0] for point in self._points),
            values=values,
            containers={
                container: tuple(_mean(*point.get(container, (0.0, 0.0))) for point in self._containers)
                for container in names
            },
            lines_per_point=self._per_point if count else 1,
            containers_omitted=named.count() - len(names),
            containers_omitted_estimated=not named.exact,
        )


def _add_all(point: list[float], at: int, *values: float) -> None:
    """Each of `values` added to the sum at `at`, `at + 2`, ..., one more counted beside each."""
    for value in values:
        point[at] += value
        point[at + 1] += 1
        at += 2


def _at(field: str) -> int:
    """Where a field's sum is in a point (its count is next)."""
    return 2 + 2 * FIELDS.index(field)


_CPU_AT, _MEM_AT, _DISK_AT, _IO_AT, _NET_AT = map(_at, ("cpu_user", "mem_used", "disk_percent", "io_read", "net_in"))
_PRESSURE_AT = tuple(map(_at, ("pressure_cpu", "pressure_memory", "pressure_io")))


def _merged(first: dict[str, list[float]], second: dict[str, list[float]]) -> dict[str, list[float]]:
    merged = {name: list(sums) for name, sums in first.items()}
    for name, (total, count) in second.items():
        sums = merged.setdefault(name, [0.0, 0.0])
        sums[0] += total
        sums[1] += count
    return merged


def _mean(total: float, count: float) -> float:
    return total / count if count else math.nan
