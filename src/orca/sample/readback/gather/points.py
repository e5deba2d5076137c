"""The points a run's chart is drawn from (docs/metrics.md, "The chart"): at most `2 * MAX_POINTS` slots of time
(`slots.py`), each holding per column (`section.Column`) its lines' mean, highest or newest, and per keyed column each
name's highest. Means are summed in whole tenths or whole numbers, so points merged in file order (`Points.merge`) are
one reader's, however the lines were batched or cut."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from itertools import chain, pairwise
from operator import add, le
from typing import Any

from orca.sample.readback.distinct import DistinctCount
from orca.sample.readback.gather.section import MEAN, NEWEST, PEAK, Bounds, Column
from orca.sample.readback.gather.series import Series
from orca.sample.readback.gather.slots import Slots

MAX_POINTS = 500
"""A run is drawn from at most twice this many points: a longer one's points each stand for several lines."""
MAX_KEYED = 20
"""The names a keyed series draws at most (the containers): those of the highest peak (more would fill a legend)."""
KEPT_KEYED = 1000
"""Names kept before all but the largest are let go: a thousand at a time, not one by one."""
GAP_FACTOR = 2.0
"""Two points further apart than this many times the usual distance between points are not joined by a line (the
sampler was stopped or starved), as the summary counts a gap."""


class _Point:
    """What the lines of one slot add up to: per column of each kind, in the order of the columns of that kind."""

    __slots__ = ("counts", "first", "keyed", "last", "lines", "newest", "peaks", "sums")

    def __init__(self, lines: int, first: float, last: float, values: tuple[Sequence[Any], ...],
                 keyed: list[dict[str, float]]) -> None:
        self.lines = lines
        self.first = first
        """The `t` of its first and of its last line, in the order written."""
        self.last = last
        self.sums, self.counts, self.peaks, self.newest = values
        """Per `MEAN` column its sum (in whole tenths for a column of them) and its count of lines; per `PEAK` column
        its highest (-inf for none); per `NEWEST` column its newest line's (None for none)."""
        self.keyed = keyed
        """Per keyed column, each name's highest value."""

    def take(self, later: _Point) -> None:
        """`later`'s lines, which come after these, taken in."""
        self.lines += later.lines
        self.last = later.last
        self.sums = list(map(add, self.sums, later.sums))
        self.counts = list(map(add, self.counts, later.counts))
        self.peaks = list(map(max, self.peaks, later.peaks))
        self.newest = later.newest
        for held, more in zip(self.keyed, later.keyed, strict=True):
            for name, value in more.items():
                if held.get(name, -1) < value:
                    held[name] = value


class _Keyed:
    """One keyed section's names, bounded: past `KEPT_KEYED` names only the `MAX_KEYED` of the highest peak are
    kept, and the others only counted."""

    __slots__ = ("let_go", "peaks")

    def __init__(self) -> None:
        self.peaks: dict[str, float] = {}
        self.let_go = DistinctCount()

    def note(self, values: dict[str, float]) -> set[str]:
        """Each name's value taken into its peak; the names let go, if any."""
        peaks = self.peaks
        for name, value in values.items():
            if peaks.get(name, -1) < value:
                peaks[name] = value
        if len(peaks) <= KEPT_KEYED:
            return set()
        gone = set(peaks) - set(self.largest())
        self.let_go.add_all(gone)
        for name in gone:
            del peaks[name]
        return gone

    def largest(self) -> list[str]:
        return sorted(self.peaks, key=lambda name: (-self.peaks[name], name))[:MAX_KEYED]

    def omitted(self, shown: int) -> tuple[int, bool]:
        """How many names are not drawn, and whether that count is exact."""
        named = self.let_go.copy()
        named.add_all(self.peaks)
        return named.count() - shown, named.exact


class Points:
    """The points of one run's chart, from its lines in the order written: see the module's docstring."""

    __slots__ = ("_columns", "_keyed", "_kinds", "_slots", "_tenths")

    def __init__(self, columns: Sequence[Column], keyed: int, max_points: int = MAX_POINTS) -> None:
        self._columns = tuple(columns)
        """The columns that are one series each."""
        self._slots: Slots[_Point] = Slots(2 * max(1, max_points))
        self._keyed = [_Keyed() for _ in range(keyed)]
        # Where in a stretch's row (its columns' values one after another) each kind's values are.
        at = 0
        sums: list[int] = []
        counts: list[int] = []
        peaks: list[int] = []
        newest: list[int] = []
        for column in self._columns:
            if column.kind == MEAN:
                sums.append(at)
                counts.append(at + 1)
            (peaks if column.kind == PEAK else newest if column.kind == NEWEST else []).append(at)
            at += column.width
        self._kinds = (sums, counts, peaks, newest)
        self._tenths = [column.tenths for column in self._columns if column.kind == MEAN]

    def cut(self, times: list[float]) -> Bounds:
        """The stretches of lines at `times` (the next of the run): the slots made as long as these lines and the
        points so far need, consecutive lines in one slot one stretch."""
        ordered = all(map(le, times, times[1:]))  # the usual case: then the first and the last are the ends
        self._slots.fit(int((times[0] if ordered else min(times)) * 1000),
                        int((times[-1] if ordered else max(times)) * 1000))
        ends = self._ends(times, ordered)
        return list(zip([0, *ends[:-1]], ends, strict=True))

    def take(self, times: list[float], bounds: Bounds, rows: Sequence[Sequence[Any]],
             keyed: Sequence[Sequence[dict[str, float]]]) -> None:
        """The stretches (`bounds`, as `cut` gave them) of lines at `times` as points: per section, its rows (one per
        stretch, `Section.rows`), and per keyed column, its dicts."""
        sums, counts, peaks, newest = self._kinds
        tenths = self._tenths
        shift = self._slots.shift
        held_rows = list(zip(*keyed, strict=True)) if keyed else [()] * len(bounds)
        for (begin, end), parts, held in zip(bounds, zip(*rows, strict=True), held_rows, strict=True):
            row = tuple(chain.from_iterable(parts))
            values = ([round(10 * row[at]) if tenth else row[at] for at, tenth in zip(sums, tenths, strict=True)],
                      [row[at] for at in counts], [-math.inf if row[at] is None else row[at] for at in peaks],
                      [row[at] for at in newest])
            self._take(int(times[begin] * 1000) >> shift, _Point(end - begin, times[begin], times[end - 1], values,
                                                                  list(held)))

    def _ends(self, times: list[float], ordered: bool) -> list[int]:
        """Where the stretches of lines at `times` end: consecutive lines in one slot are one stretch. Lines in the
        order of their `t` (`ordered`, the usual case) are cut where the next slot begins, found by bisection."""
        shift = self._slots.shift
        first, last = int(times[0] * 1000) >> shift, int(times[-1] * 1000) >> shift
        if 8 * (last - first) > len(times) or not ordered:  # many stretches, or out of order
            slots = [int(t * 1000) >> shift for t in times]
            return [index for index in range(1, len(slots)) if slots[index] != slots[index - 1]] + [len(slots)]
        ends = []
        begin = 0
        while begin < len(times):
            # The first line of a later slot: its milliseconds at or past where that slot starts.
            begin = bisect_left(times, float(((int(times[begin] * 1000) >> shift) + 1) << shift), begin + 1,
                                key=_milliseconds)
            ends.append(begin)
        return ends

    def _take(self, slot: int, later: _Point) -> None:
        """`later` (of lines that come after those the slot holds) into the slot's point; the keyed names let go
        taken out of every point."""
        self._slots.put(slot, later)
        for index, (kept, values) in enumerate(zip(self._keyed, later.keyed, strict=True)):
            gone = kept.note(values)
            for each in self._slots.held.values() if gone else ():
                held = each.keyed[index]
                for name in gone & held.keys():
                    del held[name]

    def merge(self, later: Points) -> None:
        """Take in the points of the lines that follow these; `later` is not used again."""
        if not later._slots.held:
            return
        self._slots.align(later._slots)
        for kept, theirs in zip(self._keyed, later._keyed, strict=True):
            kept.let_go.merge(theirs.let_go)
        for slot, point in later._slots.in_order():
            self._take(slot, point)

    def drawn(self, keyed_names: Sequence[str]) -> Series:
        """The points as series (unnamed: `fold.RunFold.series` says whose), one entry per point, a point of nothing
        between two too far apart to be joined; `keyed_names` name the keyed columns."""
        points = [point for _, point in self._slots.in_order()]
        breaks = _breaks(points)
        times: list[float] = []
        rows: list[list[float]] = []
        keyed: list[list[dict[str, float]]] = []
        for index, point in enumerate(points):
            if index in breaks:  # a point of nothing between, so no line joins the two
                times.append((points[index - 1].last + point.first) / 2)
                rows.append([math.nan] * len(self._columns))
                keyed.append([{} for _ in self._keyed])
            times.append((point.first + point.last) / 2)
            rows.append(self._row(point))
            keyed.append(point.keyed)
        named: dict[str, dict[str, tuple[float, ...]]] = {}
        omitted: dict[str, tuple[int, bool]] = {}
        for index, (column, kept) in enumerate(zip(keyed_names, self._keyed, strict=True)):
            names = sorted(kept.largest())
            named[column] = {name: tuple(float(each[index].get(name, math.nan)) for each in keyed) for name in names}
            omitted[column] = kept.omitted(len(names))
        return Series("", tuple(times), {column.name: tuple(row[index] for row in rows)
                                         for index, column in enumerate(self._columns)},
                      named, omitted, max((point.lines for point in points), default=1),
                      first=min((point.first for point in points), default=math.nan),
                      last=max((point.last for point in points), default=math.nan),
                      lines=sum(point.lines for point in points))

    def _row(self, point: _Point) -> list[float]:
        """The point's value of each column, NaN where none of its lines had one."""
        means = iter([total / (10 * count if column.tenths else count) if count else math.nan
                      for total, count, column in zip(point.sums, point.counts,
                                                      [column for column in self._columns if column.kind == MEAN],
                                                      strict=True)])
        peaks = iter([math.nan if peak == -math.inf else float(peak) for peak in point.peaks])
        newest = iter([math.nan if value is None else float(value) for value in point.newest])
        of_kind = {MEAN: means, PEAK: peaks, NEWEST: newest}
        return [next(of_kind[column.kind]) for column in self._columns]


def _breaks(points: Sequence[_Point]) -> set[int]:
    """The indexes of the points too far from the one before to be joined to it: more than `GAP_FACTOR` times the
    median distance between consecutive points (from the last line of one to the first of the next)."""
    distances = [later.first - point.last for point, later in pairwise(points)]
    if len(distances) < 2:
        return set()
    usual = sorted(distances)[(len(distances) - 1) // 2]
    return {index + 1 for index, distance in enumerate(distances) if distance > max(0.0, GAP_FACTOR * usual)}


def _milliseconds(t: float) -> float:
    return t * 1000

