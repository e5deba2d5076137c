"""What a chart of a run draws: per run, the values of its lines over time, thinned to at most a few thousand points
however long the run, in memory that does not grow with it.

A point stands for the lines whose `t` falls in one slot of time, 2^k milliseconds long (k as small as keeps the
run within `2 * MAX_POINTS` slots). A point holds the mean of its lines' CPU shares, rates and pressure, the highest
of their memory and of the disk's fullness (a peak is what a memory limit meets), and the newest of the limits.
Percentages are summed in tenths and bytes as whole numbers, so the sums are exact and a fold of some lines merged
with the fold of the lines after them is the fold of all of them, however the lines were batched or cut
(`SeriesFold.merge`): a file read in parts draws the chart one reader draws. The slots are the same in every fold
(they count from the Unix epoch), and only their length k grows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise
from operator import add

from orca.sample.line_format import CommandExit, Sample
from orca.sample.readback.distinct import DistinctCount

MAX_POINTS = 1000
"""A run is drawn from at most twice this many points: a longer one's points each stand for several lines."""
MAX_CONTAINERS = 20
"""The containers a chart draws at most: those of the highest memory peak (more would fill it with a legend)."""
_KEPT_CONTAINERS = 1000
"""Containers' series kept before those but the largest are let go: a thousand at a time, not one by one."""
GAP_FACTOR = 2.0
"""Two points further apart than this many times the usual distance between points are not joined by a line (the
sampler was stopped or starved), as the summary counts a gap."""

MEANS = ("cpu_user", "cpu_system", "cpu_iowait", "cpu_busiest", "run_cpu", "pressure_cpu", "pressure_memory",
         "pressure_io", "io_read", "io_write", "net_in", "net_out")
"""Series whose point is the mean of its lines: shares of time, and rates."""
PEAKS = ("mem_used", "mem_cache", "mem_rss")
"""Series whose point is the highest of its lines: memory, whose peak is what a limit meets."""
NEWEST = ("disk_percent", "mem_total", "mem_limit", "cpu_limit")
"""Series whose point is its newest line's: the disk's fullness, which moves slowly, and the totals and limits,
settings rather than measurements."""
FIELDS = MEANS + PEAKS + NEWEST
"""Every run's series. `run_cpu` is `run.cpu`; `mem_rss` the run's resident memory; `disk_percent` the fullest file
system's, as `df` counts it; `mem_limit` the own cgroup's `mem_max`; `cpu_limit` its `cpu_max` as a percent of all
cores, the unit of `run_cpu` and `cpu.*`."""

_TENTHS = 8
"""The first `_TENTHS` of `MEANS` are percentages, summed in whole tenths (the lines carry one decimal); the rest are
bytes, summed as they are."""


class _Point:
    """What the lines of one slot add up to."""

    __slots__ = ("first", "last", "lines", "newest", "peaks", "sums")

    def __init__(self, lines: int, first: float, last: float, sums: list[int], peaks: list[float],
                 newest: list[float | None]) -> None:
        self.lines = lines
        self.first = first
        """The `t` of its first and of its last line, in the order written."""
        self.last = last
        self.sums = sums
        """Per name in `MEANS` its sum (tenths of a percent, or bytes), then per name its count of lines."""
        self.peaks = peaks
        """Per name in `PEAKS` the highest value, -1 when no line had one."""
        self.newest = newest
        """Per name in `NEWEST` its newest line's value, None when that line had none."""

    def take(self, later: _Point) -> None:
        """`later`'s lines, which come after these, taken in."""
        self.lines += later.lines
        self.last = later.last
        self.sums = list(map(add, self.sums, later.sums))
        self.peaks = list(map(max, self.peaks, later.peaks))
        self.newest = later.newest

    def values(self) -> list[float]:
        """The point's value of each of `FIELDS`, NaN where none of its lines had one."""
        count = len(MEANS)
        sums, counts = self.sums[:count], self.sums[count:]
        means = [total / (10 * lines if index < _TENTHS else lines) if lines else math.nan
                 for index, (total, lines) in enumerate(zip(sums, counts, strict=True))]
        peaks = [math.nan if value == -1 else float(value) for value in self.peaks]
        return means + peaks + [math.nan if value is None else float(value) for value in self.newest]


def _point(lines: int, first: float, newest: Sample, tenths: tuple[float, ...], sums: tuple[int, ...],
           peaks: tuple[float, ...]) -> _Point:
    """A slot's stretch of lines as a point, `newest` its last line: each sum of percentages rounded to whole tenths
    (exact, since each value has one decimal and a stretch is short enough for its float sum to be within far less
    than a tenth of the true one)."""
    mem, group, disks = newest.mem, newest.cgroup, newest.disk
    fullest = None
    if disks:
        # Whole numbers divided, as a file system's sizes have no bound.
        fullest = max((100 * disk.used / size for disk in disks if (size := disk.used + disk.free) > 0), default=None)
    cpu_limit = None
    if group is not None and group.cpu_max is not None and newest.cores:
        cpu_limit = 100 * group.cpu_max / newest.cores
    return _Point(lines, first, newest.t, [round(10 * total) for total in tenths] + list(sums), list(peaks),
                  [fullest, None if mem is None else mem.total, None if group is None else group.mem_max, cpu_limit])


@dataclass(frozen=True, slots=True)
class Series:
    """One run's values over time, ready to draw: one entry per point of `t`, NaN where its lines had no value; a
    point of NaN stands between two points too far apart to be joined (`GAP_FACTOR`)."""

    name: str
    """The file (or object) the lines came from, and the host when it holds several."""
    t: tuple[float, ...]
    """Unix seconds of each point: the middle of its first and last line."""
    values: dict[str, tuple[float, ...]]
    """Per name in `FIELDS`, one value per point of `t`."""
    containers: dict[str, tuple[float, ...]]
    """Each container's highest `mem` per point of `t`: the `MAX_CONTAINERS` of the highest peak, by name."""
    lines_per_point: int
    """The most lines a point stands for (1: every line drawn as it is)."""
    host: str = ""
    start: float | None = None
    """The sampler's start (`start`), None for lines of a sampler older than it."""
    first: float = math.nan
    """The first and the last line's `t`."""
    last: float = math.nan
    lines: int = 0
    command: tuple[str, ...] | None = None
    """What `-- COMMAND` ran (its first line's `run.command`), and how many arguments it had when more."""
    argc: int | None = None
    exit: CommandExit | None = None
    """How COMMAND ended (its last line's `run.exit`)."""
    cores: int | None = None
    """The newest `cores`."""
    containers_omitted: int = 0
    """How many other containers the lines named."""
    containers_omitted_estimated: bool = False
    """Whether `containers_omitted` is an estimate (off by about 1 %), as it is past thousands of names."""

    @property
    def origin(self) -> float:
        """The moment elapsed time counts from: the sampler's start, else the first line."""
        return self.first if self.start is None else min(self.start, self.first)


class SeriesFold:
    """Collects the points of one run's series from its lines, in the order written; see the module's docstring."""

    def __init__(self, max_points: int = MAX_POINTS) -> None:
        self._max_points = max(1, max_points)
        self._shift = 0
        """A slot is 2^shift milliseconds."""
        self._points: dict[int, _Point] = {}
        self._low = self._high = 0
        """The first and the last slot that has a point."""
        self._containers: dict[int, dict[str, int]] = {}
        """Per slot that has any, each container's highest `mem` in it."""
        self._peaks: dict[str, int] = {}
        """Each container's highest `mem`, of those kept: at most `_KEPT_CONTAINERS`, the rest let go."""
        self._let_go = DistinctCount()
        self.host = ""
        self.start: float | None = None
        self.command: tuple[str, ...] | None = None
        self.argc: int | None = None
        self.exit: CommandExit | None = None
        self.cores: int | None = None

    def add(self, line: Sample) -> None:
        self.add_lines((line,))

    def add_lines(self, lines: Sequence[Sample]) -> None:
        """The next lines of the run, in the order written: each stretch of consecutive lines in one slot folded
        into a point (`_stretch`), which goes into the slot's."""
        if not lines:
            return
        if not self._points:
            self.host, self.start = lines[0].host, lines[0].start
        rest = iter(lines)
        line: Sample | None = next(rest)
        while line is not None:
            shift = self._shift  # read again after each point: taking one may have made the slots longer
            slot = int(line.t * 1000) >> shift
            line, point, containers = self._stretch(line, rest, float(slot << shift), float((slot + 1) << shift))
            self._take(slot, point, containers)

    def _stretch(  # one loop, written out, on purpose
        self, first_line: Sample, rest: Iterator[Sample], begin: float, end: float
    ) -> tuple[Sample | None, _Point, dict[str, int]]:
        """`first_line` and the lines of `rest` after it in its slot (from millisecond `begin` to before `end`) as a
        point and their containers' peaks; and the next line of `rest`, None at its end. Each value is read once, into
        locals: a million-line run is drawn at the pace of this loop, so it calls nothing per line."""
        user = system = iowait = busiest = run_cpu = p_cpu = p_memory = p_io = 0.0
        n_cpu = n_run = n_p_cpu = n_p_memory = n_p_io = 0
        read = write = received = sent = n_io = n_net = 0
        used = cache = rss = -1
        containers: dict[str, int] = {}
        cores = self.cores
        lines_in, newest, following = 0, first_line, None
        for line in chain((first_line,), rest):
            ms = line.t * 1000
            if ms >= end or ms < begin:
                following = line
                break
            lines_in += 1
            newest = line
            if line.cores is not None:
                cores = line.cores
            cpu = line.cpu
            if cpu is not None:
                user += cpu.user
                system += cpu.system
                iowait += cpu.iowait
                busiest += cpu.busiest
                n_cpu += 1
            mem = line.mem
            if mem is not None:
                if mem.used > used:
                    used = mem.used
                if mem.cache > cache:
                    cache = mem.cache
                if mem.rss > rss:
                    rss = mem.rss
            io = line.io
            if io is not None:
                read += io.read
                write += io.write
                n_io += 1
            net = line.net
            if net is not None:
                received += net.received
                sent += net.sent
                n_net += 1
            pressure = line.pressure
            if pressure is not None:
                stalled_cpu, stalled_memory, stalled_io = pressure.cpu, pressure.memory, pressure.io
                if stalled_cpu is not None:
                    p_cpu += stalled_cpu
                    n_p_cpu += 1
                if stalled_memory is not None:
                    p_memory += stalled_memory
                    n_p_memory += 1
                if stalled_io is not None:
                    p_io += stalled_io
                    n_p_io += 1
            run = line.run
            if run is not None:
                if run.cpu is not None:
                    run_cpu += run.cpu
                    n_run += 1
                if run.command is not None and self.command is None:
                    self.command, self.argc = run.command, run.argc
                if run.exit is not None:
                    self.exit = run.exit
            entries = line.containers
            if entries:
                for entry in entries:
                    mem_now = entry.mem
                    if mem_now > containers.get(entry.name, -1):
                        containers[entry.name] = mem_now
        self.cores = cores
        return following, _point(
            lines_in, first_line.t, newest, (user, system, iowait, busiest, run_cpu, p_cpu, p_memory, p_io),
            (read, write, received, sent, n_cpu, n_cpu, n_cpu, n_cpu, n_run, n_p_cpu, n_p_memory, n_p_io, n_io, n_io,
             n_net, n_net), (used, cache, rss)), containers

    def _take(self, slot: int, later: _Point, containers: dict[str, int]) -> None:
        """`later` (of lines that come after those the slot holds) into the slot's point."""
        point = self._points.get(slot)
        if point is not None:
            point.take(later)
        elif self._points:
            self._points[slot] = later
            self._low, self._high = min(self._low, slot), max(self._high, slot)
        else:
            self._points[slot] = later
            self._low = self._high = slot
        if containers:
            held = self._containers.setdefault(slot, {})
            peaks = self._peaks
            for name, mem in containers.items():
                if held.get(name, -1) < mem:
                    held[name] = mem
                if peaks.get(name, -1) < mem:
                    peaks[name] = mem
            if len(peaks) > _KEPT_CONTAINERS:
                self._bound()
        while self._high - self._low >= 2 * self._max_points:
            self._halve()

    def _halve(self) -> None:
        """Slots twice as long: each two consecutive slots' points merged into one."""
        self._shift += 1
        self._low >>= 1
        self._high >>= 1
        points, containers = self._points, self._containers
        self._points, self._containers = {}, {}
        for slot in sorted(points):
            point = self._points.get(slot >> 1)
            if point is None:
                self._points[slot >> 1] = points[slot]
            else:
                point.take(points[slot])
        for slot, each in containers.items():
            held = self._containers.setdefault(slot >> 1, {})
            for name, mem in each.items():
                if held.get(name, -1) < mem:
                    held[name] = mem

    def merge(self, later: SeriesFold) -> None:
        """Take in the fold of the lines that follow these; `later` is not to be used again."""
        if not later._points:
            return
        if not self._points:  # nothing here yet: the later fold as it is
            self._shift, self._low, self._high = later._shift, later._low, later._high
            self.host, self.start = later.host, later.start
        while self._shift < later._shift:
            self._halve()
        while later._shift < self._shift:
            later._halve()
        # Both as long as the two together need, first: a slot of `later` must not change length under the merge.
        while max(self._high, later._high) - min(self._low, later._low) >= 2 * self._max_points:
            self._halve()
            later._halve()
        for slot in sorted(later._points):
            self._take(slot, later._points[slot], later._containers.get(slot, {}))
        self._let_go.merge(later._let_go)
        if self.command is None:
            self.command, self.argc = later.command, later.argc
        self.exit = later.exit if later.exit is not None else self.exit
        self.cores = later.cores if later.cores is not None else self.cores

    def _largest(self) -> list[str]:
        return sorted(self._peaks, key=lambda name: (-self._peaks[name], name))[:MAX_CONTAINERS]

    def _bound(self) -> None:
        """Only the `MAX_CONTAINERS` of the highest peak kept, so memory does not grow with the containers."""
        gone = set(self._peaks) - set(self._largest())
        self._let_go.add_all(gone)
        for name in gone:
            del self._peaks[name]
        for held in self._containers.values():
            for name in gone & held.keys():
                del held[name]

    def series(self, name: str) -> Series:
        slots = sorted(self._points)
        points = [self._points[slot] for slot in slots]
        breaks = _breaks(points)
        times: list[float] = []
        rows: list[list[float]] = []
        held: list[dict[str, int]] = []
        for index, (slot, point) in enumerate(zip(slots, points, strict=True)):
            if index in breaks:  # a point of nothing between, so no line joins the two
                times.append((points[index - 1].last + point.first) / 2)
                rows.append([math.nan] * len(FIELDS))
                held.append({})
            times.append((point.first + point.last) / 2)
            rows.append(point.values())
            held.append(self._containers.get(slot, {}))
        names = sorted(self._largest())
        named = self._let_go.copy()
        named.add_all(self._peaks)
        return Series(
            name=name,
            t=tuple(times),
            values={field: tuple(row[index] for row in rows) for index, field in enumerate(FIELDS)},
            containers={container: tuple(float(one.get(container, math.nan)) for one in held) for container in names},
            lines_per_point=max((point.lines for point in points), default=1),
            host=self.host,
            start=self.start,
            first=min((point.first for point in points), default=math.nan),
            last=max((point.last for point in points), default=math.nan),
            lines=sum(point.lines for point in points),
            command=self.command,
            argc=self.argc,
            exit=self.exit,
            cores=self.cores,
            containers_omitted=named.count() - len(names),
            containers_omitted_estimated=not named.exact,
        )


def _breaks(points: Sequence[_Point]) -> set[int]:
    """The indexes of the points too far from the one before to be joined to it: more than `GAP_FACTOR` times the
    median distance between consecutive points (from the last line of one to the first of the next)."""
    distances = [later.first - point.last for point, later in pairwise(points)]
    if len(distances) < 2:
        return set()
    usual = sorted(distances)[(len(distances) - 1) // 2]
    return {index + 1 for index, distance in enumerate(distances) if distance > max(0.0, GAP_FACTOR * usual)}
