"""What the fleet chart of `orca metrics --plot` shows, as data (docs/metrics.md, "The fleet chart"): each run's
CPU and memory share per column of time (the heat maps' rows, in the table's order), the fleet's use beside what it
had, the runs named, the title and notes. A run's buckets (`usage.Buckets`) are spread over the columns in proportion
to their overlap. The drawing is `readback/shell/fleet_plot.py`'s."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from operator import add

from orca.sample.readback.chart.ticks import Ticks, elapsed_ticks
from orca.sample.readback.fleet.fields import HOST
from orca.sample.readback.fleet.flags import FAILED, GAPS, IDLE, NO_LINES, SATURATED, STRAGGLER
from orca.sample.readback.fleet.table import Table
from orca.sample.readback.fleet.usage import Buckets, Usage
from orca.sample.readback.words import count, duration, number, percent, utc

COLUMNS = 360
"""Columns of time: about a pixel or two each at the figure's width."""
NAMED_FIRST = (SATURATED, FAILED, STRAGGLER, NO_LINES, IDLE, GAPS)
"""Which flagged runs are named first when not every row's label fits."""


@dataclass(frozen=True, slots=True)
class FleetChart:
    origin: float
    """Unix seconds the time axis counts from: the fleet's first start."""
    span: float
    """Seconds from `origin` to the last line of any run."""
    labels: tuple[str, ...]
    """Each run's label, top row first: the table's order."""
    cpu: tuple[Sequence[float], ...]
    """Per run, per column, its CPU use as a percent of its CPUs (or its cgroup's limit); NaN where it had no line.
    Each row is read-only C doubles, 8 bytes a value, so a thousand runs' rows take a few MiB."""
    memory: tuple[Sequence[float], ...]
    """Per run, per column, its memory use as a percent of its total (or its cgroup's limit); NaN likewise."""
    cores_busy: tuple[float, ...]
    """Per column, the CPUs the fleet used on average over it (the runs' CPUs used, added up)."""
    cores_available: tuple[float, ...]
    """Per column, the CPUs the fleet had: each run's cgroup's limit, or its host's cores, a host that several runs
    shared counted once."""
    memory_used: tuple[float, ...]
    """Per column, the bytes of memory the fleet used on average over it."""
    memory_available: tuple[float, ...]
    candidates: tuple[tuple[int, str], ...]
    """The rows that may be named beside the heat maps, with the flag each would be named for, in the order they are
    chosen (`named`): the flagged ones by `NAMED_FIRST`, then the rest top first."""
    title: str
    notes: tuple[str, ...]
    """Who stands out, by flag: how many, and the first few labels."""
    ticks: Ticks

    @property
    def column_seconds(self) -> float:
        return self.span / COLUMNS if self.span > 0 else 1.0


def named(chart: FleetChart, fit: int) -> tuple[tuple[int, str], ...]:
    """The rows to name, top first, each with its flag ("" for none), where `fit` labels fit beside a heat map one
    above the other: every row when they are no more; else the flagged ones in `NAMED_FIRST` order, each taken only
    if it is at least `rows / fit` rows from every one taken (so that no two labels overlap), until `fit` are.

    >>> one = FleetChart(0, 1, ("a",) * 100, (), (), (), (), (), (), ((50, "failed"), (51, "idle"), (10, "idle")), "",
    ...                  (), elapsed_ticks(1))
    >>> named(one, 20)
    ((10, 'idle'), (50, 'failed'))
    """
    rows = len(chart.labels)
    if fit <= 0:
        return ()
    if rows <= fit:
        return tuple(sorted(chart.candidates))
    apart = rows / fit
    taken: list[int] = []
    chosen: list[tuple[int, str]] = []
    for index, flag in chart.candidates:
        if not flag or len(chosen) >= fit:
            break
        place = bisect_left(taken, index)
        if (place == 0 or index - taken[place - 1] >= apart) and (place == len(taken) or
                                                                  taken[place] - index >= apart):
            taken.insert(place, index)
            chosen.append((index, flag))
    return tuple(sorted(chosen))


def _spread(buckets: Buckets, origin: float, width: float, sums: list[list[float]]) -> None:
    """Each bucket's four sums added into `sums` (four lists of `COLUMNS`), in proportion to its overlap with each
    column; a bucket reaching past the axis's ends spreads over the part within them."""
    slot = buckets.slot_seconds
    end = COLUMNS * width
    for offset, values in enumerate(zip(*buckets.per_slot, strict=True)):
        if not any(values):
            continue
        begin = ((buckets.first + offset) << buckets.shift) / 1000 - origin
        low, high = max(0.0, begin), min(end, begin + slot)
        if high <= low:  # a bucket that starts at the last line's moment: the last column's
            low, high = min(low, end - width), min(low, end - width) + width
        first, last = int(low // width), min(COLUMNS - 1, math.ceil(high / width) - 1)
        for column in range(first, max(first, last) + 1):
            share = (min(high, (column + 1) * width) - max(low, column * width)) / (high - low)
            if share > 0:
                for kept, value in zip(sums, values, strict=True):
                    kept[column] += share * value


def _percents(used: list[float], available: list[float]) -> Sequence[float]:
    """100 × used / available per column, NaN where nothing was available, as read-only C doubles."""
    percents = array("d", [100 * part / whole if whole > 0 else math.nan
                           for part, whole in zip(used, available, strict=True)])
    floats: Sequence[float] = memoryview(percents.tobytes()).cast("d")
    return floats


def fleet_chart(table: Table, usages: Sequence[Usage | None]) -> FleetChart:
    """The chart of a fleet's `table`, whose runs' usages are `usages` (by row, as the table's rows are)."""
    totals = table.totals
    origin = totals.first_start or 0.0
    span = max(0.0, (totals.last_end or origin) - origin)
    width = span / COLUMNS if span > 0 else 1.0 / COLUMNS
    fleet_sums = [[0.0] * COLUMNS for _ in range(4)]
    cpu: list[Sequence[float]] = []
    memory: list[Sequence[float]] = []
    hosts: dict[tuple[str, int], list[float]] = {}
    """Per host and sum of what was had (CPUs, memory) that its runs share (not their cgroups' limits), per column,
    the most any of them had: a host counted once, however many runs it held."""
    for row in table.order:
        sums = [[0.0] * COLUMNS for _ in range(4)]
        usage = usages[row] if row < len(usages) else None
        if usage is not None and usage.buckets is not None:
            _spread(usage.buckets, origin, width, sums)
        cpu.append(_percents(sums[0], sums[1]))
        memory.append(_percents(sums[2], sums[3]))
        for index, (total, run) in enumerate(zip(fleet_sums, sums, strict=True)):
            limited = usage is None or (usage.cpu_limited if index == 1 else usage.memory_limited)
            if index in (1, 3) and not limited:
                most = hosts.setdefault((table.rows.value(HOST, row), index), [0.0] * COLUMNS)
                most[:] = map(max, most, run)
                continue
            for column, value in enumerate(run):
                total[column] += value
    for (_, index), most in hosts.items():
        fleet_sums[index] = list(map(add, fleet_sums[index], most))
    seconds = width if span > 0 else 1.0
    averaged = [tuple(value / seconds for value in total) for total in fleet_sums]
    return FleetChart(
        origin=origin,
        span=span,
        labels=tuple(table.labels(table.order)),
        cpu=tuple(cpu),
        memory=tuple(memory),
        cores_busy=averaged[0],
        cores_available=averaged[1],
        memory_used=averaged[2],
        memory_available=averaged[3],
        candidates=_candidates(table),
        title=_title(table, origin, span),
        notes=_notes(table),
        ticks=elapsed_ticks(span),
    )


def _candidates(table: Table) -> tuple[tuple[int, str], ...]:
    """Every row, with the flag it would be named for: the flagged ones by `NAMED_FIRST` (each under its first flag
    in that order), top first within a flag, then the rest top first with ""."""
    chosen: dict[int, str] = {}
    for flag in NAMED_FIRST:
        for index, row in enumerate(table.order):
            if index not in chosen and any(each.flag == flag for each in table.flags(row)):
                chosen[index] = flag
    rest = [(index, "") for index in range(len(table.order)) if index not in chosen]
    return (*chosen.items(), *rest)


def _title(table: Table, origin: float, span: float) -> str:
    totals = table.totals
    facts = [count(totals.runs, "run"), f"started {utc(origin)}", duration(span)]
    if totals.cpu_percent is not None:
        facts.append(f"CPU {percent(totals.cpu_percent)} used of {number(totals.cpu_hours_available)} CPU-hours")
    if totals.memory_percent is not None:
        facts.append(f"memory {percent(totals.memory_percent)} of {number(totals.memory_gib_hours_available)} "
                     "GiB-hours")
    return " · ".join(facts)


def _notes(table: Table, shown: int = 5) -> tuple[str, ...]:
    notes = []
    for flag in NAMED_FIRST:
        flagged = table.flagged(flag)
        if flagged:
            names = ", ".join(table.label(row) + "".join(f" ({each.why})" for each in table.flags(row)
                                                         if flag == FAILED and each.flag == FAILED)
                              for row in flagged[:shown])
            more = f" and {len(flagged) - shown:,} more" if len(flagged) > shown else ""
            notes.append(f"{flag} {len(flagged):,}: {names}{more}")
    notes += [f"host {host.host} saturated, apart from its {count(host.runs, 'run')}: "
              f"{host.why}" for host in table.hosts_saturated[:shown]]
    return tuple(notes)
