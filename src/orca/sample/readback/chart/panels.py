"""What the chart of `orca metrics --plot` shows, as data (docs/metrics.md, "The chart"): its panels top to bottom (the
run's first, then the host's), each curve's values in the unit its axis is drawn in and its colour, against elapsed
time, the panels left out because nothing moved in them, the notes, the ticks and the title. The drawing itself
(matplotlib), and the panels' heights, are `readback/shell/plot.py`'s. A rate over a line much shorter than the run's
usual interval (the line written as COMMAND ends) can read far over what ran: such a point is drawn but does not set
its panel's scale (`SHORT_SHARE`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import repeat
from operator import attrgetter

from toolz import groupby

from orca.sample.readback.chart.ticks import Ticks, elapsed_ticks
from orca.sample.readback.chart.titles import elapsed_span, labels, origins, title
from orca.sample.readback.gather.points import MAX_KEYED
from orca.sample.readback.gather.series import Series
from orca.sample.readback.words import UNITS, percent, rate, size

PERCENT, BYTES, RATE = "percent", "bytes", "rate"
"""What an axis shows: a share of a whole, bytes, or bytes per second."""
SAID = {PERCENT: percent, BYTES: size, RATE: rate}
"""How a value of each kind is said in words (a flat panel's note)."""
TOP_DRAWN = 4
"""The run's top processes drawn in its panels: the names of the highest peak (more would hide the run's own curve)."""
SHARE_MOST = 100.0
"""The most a share of a whole can be: a share pinned there is drawn, not left out as flat."""
GREY = -1
"""The colour of a reference line that belongs to no curve (a total)."""
POINTS_MARGIN = 1.1
"""How far past the last line the time axis goes when a run is drawn as points, in spans."""
SHORT_SHARE = 0.5
"""A point whose longest line covers less than this share of the run's usual interval (the median of its points'
longest) is short: its rates do not set the scale."""


@dataclass(frozen=True, slots=True)
class Curve:
    field: str
    """The series drawn, a column of the sections (`cpu_user`, `run_cpu`, ...)."""
    legend: str
    reference: bool = False
    """A reference line (a total or a limit) rather than a measurement: dashed, and never why a panel is drawn."""
    of: str = ""
    """For a limit, the field of the curve it limits (drawn in that curve's colour)."""


@dataclass(frozen=True, slots=True)
class Panel:
    name: str
    """What the notes call it."""
    label: str
    """The axis's label; `{unit}` is replaced by the unit its values are drawn in."""
    curves: tuple[Curve, ...]
    """Empty for a keyed panel (the containers'): one curve per name, from `Series.keyed[name]`."""
    kind: str = PERCENT
    run: bool = False
    """One of the run's panels."""
    shares: bool = False
    """Drawn from 0 to a little over 100: shares of a whole (the run's CPU has a scale of its own)."""
    keyed: str = ""
    """A keyed series (`top_mem`) whose `TOP_DRAWN` names of the highest peak are drawn beside `curves`, when it has
    two names or more."""
    rates: bool = False
    """Its values are over each line's `dt`: a short point's do not set its scale."""
    optional: bool = False
    """Shown only when some run has a value in it (the run's io, pressure, the containers)."""


RUN_CPU = Panel("run cpu", "run CPU\n% of one core", (
    Curve("run_cpu", "run's CPU"), Curve("cpu_limit", "CPU limit (cgroup)", reference=True, of="run_cpu")), run=True,
    keyed="top_cpu", rates=True)
RUN_MEMORY = Panel("run memory", "run memory\n{unit}", (
    Curve("mem_rss", "run's resident memory"),
    Curve("mem_limit", "memory limit (cgroup)", reference=True, of="mem_rss")), kind=BYTES, run=True, keyed="top_mem")
RUN_IO = Panel("run io", "run io\n{unit}", (Curve("run_io_read", "run's read"), Curve("run_io_write", "run's write")),
               kind=RATE, run=True, rates=True, optional=True)
RUN = (RUN_CPU, RUN_MEMORY, RUN_IO)
CPU = Panel("cpu", "host CPU\n% of all cores", (Curve("cpu_user", "user"), Curve("cpu_system", "system"),
                                               Curve("cpu_iowait", "iowait"), Curve("cpu_busiest", "busiest core")),
            shares=True)
MEMORY = Panel("memory", "host memory\n{unit}", (Curve("mem_used", "used"), Curve("mem_cache", "cache"),
                                                Curve("mem_total", "total", reference=True)), kind=BYTES)
DISK = Panel("disk", "host disk\n%", (Curve("disk_percent", "fullest file system"),), shares=True)
IO = Panel("io", "host io\n{unit}", (Curve("io_read", "read"), Curve("io_write", "write")), kind=RATE, rates=True)
NET = Panel("net", "host net\n{unit}", (Curve("net_in", "in"), Curve("net_out", "out")), kind=RATE, rates=True)
PRESSURE = Panel("pressure", "host pressure\n% stalled", (
    Curve("pressure_cpu", "cpu"), Curve("pressure_memory", "memory"), Curve("pressure_io", "io")), shares=True,
    optional=True)
CONTAINERS = Panel("containers", "containers'\nmemory {unit}", (), kind=BYTES, optional=True)
HOST = (CPU, MEMORY, DISK, IO, NET, PRESSURE, CONTAINERS)


@dataclass(frozen=True, slots=True)
class Drawn:
    """One curve of one run in a panel, as drawn."""

    instance: int
    """Which of the runs drawn."""
    index: int
    """The curve's place in the panel (its line style, when there are several runs)."""
    legend: str
    field: str
    """The series drawn, or the container's name."""
    x: tuple[float, ...]
    """Seconds since the run's start (`titles.origins`), one per point."""
    values: tuple[float, ...]
    """One per point, in the unit of its axis; NaN where the lines had no value (or a gap)."""
    colour: int
    """Its colour: a place in the colour cycle (`GREY`: grey)."""
    reference: bool = False
    short: tuple[bool, ...] = ()
    """Per point, whether it is short (`SHORT_SHARE`), in a panel of rates: drawn, but not setting the scale."""


@dataclass(frozen=True, slots=True)
class DrawnPanel:
    name: str
    label: str
    shares: bool
    run: bool
    """One of the run's panels, which take at least half the figure's height (`plot.layout`)."""
    curves: tuple[Drawn, ...]
    axis_colour: int | None
    """The colour of the axis's label and ticks: its one measured curve's; None with several."""
    top: float = 0.0
    """The highest value that sets the scale, in the unit drawn: any but a short point's."""


@dataclass(frozen=True, slots=True)
class Chart:
    title: str
    panels: tuple[DrawnPanel, ...]
    flat: tuple[str, ...]
    """Per panel left out, one entry: `net: in 0 B/s, out 0 B/s`."""
    notes: tuple[str, ...]
    """What else a person should know of what is drawn: a run of one line, runs not drawn."""
    runs: tuple[str, ...]
    """With several runs, each one's label, in its colour's place."""
    ticks: Ticks
    span: float
    """The elapsed seconds from the earliest start drawn to the last line."""
    end: float
    """Where the time axis ends: the span, or a little past it when a run is drawn as points, which would otherwise
    sit on the frame."""


def has_run(series: Sequence[Series]) -> bool:
    """Whether the lines have a run: its CPU (`run`), or its resident memory above 0 (a sampler older than `run`)."""
    return any(_finite(one.values["run_cpu"]) or any(value > 0 for value in one.values["mem_rss"]) for one in series)


def panels(series: Sequence[Series]) -> list[Panel]:
    """The panels that have values, top to bottom: the run's first when there is one; the run's io, pressure and the
    containers' memory only when some run has them. Flat ones are among them (`chart` leaves them out).

    >>> from orca.sample.readback.gather.fold import RunFold
    >>> [panel.name for panel in panels([RunFold(drawn=True).series("empty")])]
    ['cpu', 'memory', 'disk', 'io', 'net']
    """
    run = has_run(series)
    return [_containers(series) if panel is CONTAINERS else panel for panel in (*RUN, *HOST)
            if (run or not panel.run) and (not panel.optional or _measured(panel, series))]


def _measured(panel: Panel, series: Sequence[Series]) -> bool:
    if not panel.curves:  # keyed: a name drawn
        return any(one.keyed.get(panel.name) for one in series)
    return any(_finite(one.values[curve.field]) for curve in panel.curves for one in series)


def _containers(series: Sequence[Series]) -> Panel:
    """The containers' panel, its label saying when it shows only the largest of them."""
    omitted = [(one, one.omitted["containers"]) for one in series if one.omitted.get("containers", (0, True))[0]]
    if not omitted:
        return CONTAINERS
    one, (count, exact) = omitted[0]
    of = f"{'' if exact else 'about '}{count + len(one.keyed['containers']):,}" if len(series) == 1 else (
        "each instance's")
    return replace(CONTAINERS, label=f"{CONTAINERS.label} (the {MAX_KEYED} largest of {of})")


def chart(series: Sequence[Series], runs: int | None = None) -> Chart:
    """Everything the figure of `series` (the runs drawn, overlaid, of `runs` in all) shows, top to bottom."""
    measured: list[tuple[Panel, list[Drawn]]] = []
    colours = name_colours(series)
    for panel in panels(series):
        curves = drawn(panel, series, colours)
        if panel is MEMORY:
            curves = _total_shown(curves)
        if not all(curve.reference for curve in curves):  # else nothing measured to draw (an old sampler's run CPU)
            measured.append((panel, curves))
    kept = [(panel, curves) for panel, curves in measured if not _all_flat(panel, curves)]
    if not kept and measured:  # nothing moved at all: the first panel still shows when the run was
        kept = measured[:1]
    flat = [_note(panel, curves) for panel, curves in measured if (panel, curves) not in kept]
    drawn_panels = tuple(_labelled(panel, curves) for panel, curves in kept)
    span = elapsed_span(series)
    total = len(series) if runs is None else runs
    end = span * POINTS_MARGIN if any(one.lines == 1 for one in series) else span
    notes = _notes(series, total)
    if any(value > panel.top for panel in drawn_panels for curve in panel.curves
           for value, short in zip(curve.values, curve.short, strict=False) if short):
        notes.append(f"a rate over a line shorter than {SHORT_SHARE:.0%} of the usual interval is drawn but does not "
                     "set the scale: ^ marks one above it")
    return Chart(title(series, total), drawn_panels, tuple(flat), tuple(notes),
                 tuple(labels(series)) if len(series) > 1 else (), elapsed_ticks(span), span, end)


def _notes(series: Sequence[Series], runs: int) -> list[str]:
    """A run of one line (a command that ended before a second), and how many runs are not drawn."""
    notes = []
    single = sum(one.lines == 1 for one in series)
    if single:
        notes.append("one line: drawn as points" if len(series) == 1 else
                     f"{single} of the runs drawn have one line: drawn as points")
    if runs > len(series):
        notes.append(f"{runs - len(series):,} more runs not drawn (the first {len(series)} are)")
    return notes


def name_colours(series: Sequence[Series]) -> dict[str, int]:
    """Of one run, each top process name drawn in its panels (`TOP_DRAWN` of each), and its colour in all of them:
    after the run's own curve's (0), by name."""
    if len(series) != 1:
        return {}
    names = sorted({name for panel in RUN if panel.keyed
                    for name, _ in _highest(series[0].keyed.get(panel.keyed, {}))})
    return {name: 1 + index for index, name in enumerate(names)}


def short_points(one: Series) -> tuple[bool, ...]:
    """Per point of `one`, whether its longest line covers less than `SHORT_SHARE` of the usual interval (the median
    of the points' longest).

    >>> short_points(Series("r", (1.0, 2.0, 3.0, 3.1), {"line_dt": (1.0, 1.0, 1.0, 0.1)}))
    (False, False, False, True)
    """
    longest = one.values.get("line_dt", ())
    finite = sorted(value for value in longest if math.isfinite(value))
    if not finite:
        return (False,) * len(one.t)
    usual = finite[(len(finite) - 1) // 2]
    return tuple(math.isfinite(value) and value < SHORT_SHARE * usual for value in longest)


def drawn(panel: Panel, series: Sequence[Series], names: dict[str, int] | None = None) -> list[Drawn]:
    """The curves of `panel`, every run's, in the order drawn, in the raw units of the line (bytes, percent); a
    keyed panel: one per name. A curve without any value is left out. One run's curves take the colours in turn
    (a limit its measurement's, a total grey; a top process's name its colour in `names`); with several runs, each
    run has a colour and each curve a style.

    >>> from orca.sample.readback.gather.fold import RunFold
    >>> drawn(NET, [RunFold(drawn=True).series("empty")])
    []
    """
    starts = origins(series)
    several = len(series) > 1
    curves: list[Drawn] = []
    for number, one in enumerate(series):
        x = tuple(t - starts[number] for t in one.t)
        short = short_points(one) if panel.rates else ()
        chosen = [(curve.legend, curve.field, one.values[curve.field], curve.reference, curve.of)
                  for curve in panel.curves]
        if not panel.curves:
            chosen = [(name, name, values, False, "") for name, values in one.keyed.get(panel.name, {}).items()]
        elif panel.keyed:
            chosen += [(name, name, values, False, "") for name, values in _highest(one.keyed.get(panel.keyed, {}))]
        measured = [field for _, field, _, reference, _ in chosen if not reference]
        for index, (legend, field, values, reference, of) in enumerate(chosen):
            if not _finite(values):
                continue
            colour = measured.index(of) if of in measured else GREY if reference else (names or {}).get(
                field, measured.index(field))
            curves.append(Drawn(number, index, legend, field, x, values, number if several else colour, reference,
                                short))
    return curves


def _highest(named: dict[str, tuple[float, ...]]) -> list[tuple[str, tuple[float, ...]]]:
    """The `TOP_DRAWN` names of the highest peak, by name; none when there is one name alone, which is the run's own
    curve over again."""
    if len(named) < 2:
        return []
    peaks = {name: _largest_of(values) for name, values in named.items()}
    return [(name, named[name]) for name in sorted(sorted(named, key=lambda name: (-peaks[name], name))[:TOP_DRAWN])]


def _total_shown(curves: list[Drawn]) -> list[Drawn]:
    """The host's memory with its total as a reference line only once the memory used comes within half of it;
    below that the line would squeeze the curves to the foot of the panel, and the legend of `used` says the total
    instead."""
    totals = {curve.instance: _largest([curve]) for curve in curves if curve.reference}
    used = {curve.instance: _largest([curve]) for curve in curves if curve.field == "mem_used"}
    if not totals or any(2 * peak >= totals.get(instance, math.inf) for instance, peak in used.items()):
        return curves
    return [replace(curve, legend=f"{curve.legend} (of {size(totals[curve.instance])})")
            if curve.field == "mem_used" and curve.instance in totals else curve
            for curve in curves if not curve.reference]


def _labelled(panel: Panel, curves: list[Drawn]) -> DrawnPanel:
    """The panel with its curves in the unit its axis is drawn in, chosen for the largest value that sets its scale
    (a short point's does not)."""
    top = _scaling(curves)
    scale, name = unit(panel.kind, top)
    scaled = tuple(replace(curve, values=tuple(value / scale for value in curve.values)) for curve in curves)
    colours = {curve.colour for curve in curves if not curve.reference}
    return DrawnPanel(panel.name, panel.label.replace("{unit}", name), panel.shares, panel.run, scaled,
                      colours.pop() if len(colours) == 1 else None, top / scale)


def _scaling(curves: Sequence[Drawn]) -> float:
    """The largest value of `curves` but a short point's; the largest of all when every point is short."""
    kept = [value for curve in curves for value, short in zip(curve.values, curve.short or repeat(False),
                                                                  strict=False)
            if not short and math.isfinite(value)]
    return max(kept) if kept else _largest(curves)


def unit(kind: str, largest: float) -> tuple[float, str]:
    """The scale and name of the unit an axis of `kind` is drawn in, for its largest value.

    >>> unit(BYTES, 3 * 2**30), unit(BYTES, 500 * 2**20), unit(RATE, 0.0), unit(PERCENT, 250.0)
    ((1073741824, 'GiB'), (1048576, 'MiB'), (1, 'B/s'), (1, '%'))
    """
    if kind == PERCENT:
        return 1, "%"
    suffix = "/s" if kind == RATE else ""
    power = next((power for power in (3, 2, 1) if largest >= 2 ** (10 * power)), 0)
    return 2 ** (10 * power), UNITS[power] + suffix


def _largest(curves: Sequence[Drawn]) -> float:
    return max((_largest_of(curve.values) for curve in curves), default=0.0)


def _largest_of(values: Sequence[float]) -> float:
    return max((value for value in values if math.isfinite(value)), default=0.0)


def _finite(values: Sequence[float]) -> bool:
    return any(math.isfinite(value) for value in values)


def _spread(curve: Drawn) -> tuple[float, float]:
    finite = [value for value in curve.values if math.isfinite(value)]
    return min(finite), max(finite)


def _all_flat(panel: Panel, curves: Sequence[Drawn]) -> bool:
    """Whether no measured curve of the panel shows anything: all zeros, or (a host's) one value throughout but for
    a share pinned at 100 %."""
    for curve in curves:
        if curve.reference:
            continue
        low, high = _spread(curve)
        points = sum(math.isfinite(value) for value in curve.values)
        if high != 0 and (panel.run or low != high or points < 2 or (panel.shares and high >= SHARE_MOST)):
            return False
    return True


def _note(panel: Panel, curves: Sequence[Drawn]) -> str:
    """A flat panel in one line, `net: in 0 B/s, out 2.00 KiB/s`: each measured curve's value (its range, across the
    runs, when they differ)."""
    words = []
    for legend, same in groupby(attrgetter("legend"), [curve for curve in curves if not curve.reference]).items():
        values = [value for curve in same for value in _spread(curve)]
        said = SAID[panel.kind]
        low, high = said(min(values)), said(max(values))
        words.append(f"{legend} {low}" if low == high else f"{legend} {low} to {high}")
    return f"{panel.name}: {', '.join(words)}"
