"""What the chart of `orca metrics --plot` shows, as data (docs/metrics.md, "The chart"): its panels top to bottom, each
curve's values in the unit its axis is drawn in, against elapsed time, the panels left out because nothing moved in
them, the ticks and the title. The drawing itself (matplotlib) is `readback/shell/plot.py`'s.

When the lines have a run (`run`, or a `mem.rss` above 0), the first panel is the run's: its CPU on the left axis and
its resident memory on the right, each on a scale of its own, with the own cgroup's limits as their reference lines
when the sampler ran under them. The host's panels follow; one in which every curve stayed flat (within
`FLAT_POINTS` of 100 for a percentage, within `FLAT_SHARE` of its largest value otherwise, all zeros included) is not
drawn but said in one line of notes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from orca.sample.readback.chart.series import MAX_CONTAINERS, Series
from orca.sample.readback.chart.ticks import Ticks, elapsed_ticks
from orca.sample.readback.chart.titles import elapsed_span, labels, origins, title
from orca.sample.readback.summary.text import humanised

FLAT_POINTS = 1.0
FLAT_SHARE = 0.01

PERCENT, BYTES, RATE = "percent", "bytes", "rate"
"""What an axis shows: a share of a whole, bytes, or bytes per second."""


@dataclass(frozen=True, slots=True)
class Curve:
    field: str
    """The series drawn, a name of `series.FIELDS`."""
    legend: str
    reference: bool = False
    """A reference line (a total or a limit) rather than a measurement: dashed, and never why a panel is drawn."""
    right: bool = False
    """On the panel's right-hand axis."""


@dataclass(frozen=True, slots=True)
class Panel:
    name: str
    """What the notes call it."""
    label: str
    """The left axis's label; `{unit}` is replaced by the unit its values are drawn in."""
    curves: tuple[Curve, ...]
    """Empty for the containers' panel: one curve per container, from `Series.containers`."""
    kind: str = PERCENT
    right_label: str = ""
    right_kind: str = BYTES

    @property
    def shares(self) -> bool:
        """Drawn from 0 to a little over 100: shares of a whole, the host's (the run's CPU has a scale of its own)."""
        return self.kind == PERCENT and self.name != "run"


RUN = Panel("run", "run's CPU % of all cores", (
    Curve("run_cpu", "run's CPU"), Curve("cpu_limit", "CPU limit (cgroup)", reference=True),
    Curve("mem_rss", "run's resident memory", right=True),
    Curve("mem_limit", "memory limit (cgroup)", reference=True, right=True)), right_label="run's memory {unit}")
CPU = Panel("cpu", "CPU %", (Curve("cpu_user", "user"), Curve("cpu_system", "system"), Curve("cpu_iowait", "iowait"),
                             Curve("cpu_busiest", "busiest core")))
MEMORY = Panel("memory", "memory {unit}", (Curve("mem_used", "used"), Curve("mem_cache", "cache"),
                                           Curve("mem_total", "total", reference=True)), kind=BYTES)
DISK = Panel("disk", "disk %", (Curve("disk_percent", "fullest file system"),))
IO = Panel("io", "io {unit}", (Curve("io_read", "read"), Curve("io_write", "write")), kind=RATE)
NET = Panel("net", "net {unit}", (Curve("net_in", "in"), Curve("net_out", "out")), kind=RATE)
PRESSURE = Panel("pressure", "pressure % stalled", (Curve("pressure_cpu", "cpu"), Curve("pressure_memory", "memory"),
                                                     Curve("pressure_io", "io")))
CONTAINERS = Panel("containers", "containers' memory {unit}", (), kind=BYTES)
HOST = (CPU, MEMORY, DISK, IO, NET, PRESSURE, CONTAINERS)


@dataclass(frozen=True, slots=True)
class Drawn:
    """One curve of one run in a panel, as drawn."""

    instance: int
    """Which of the runs (its colour, when there are several)."""
    index: int
    """The curve's place in the panel (its line style, when there are several runs)."""
    legend: str
    """The curve's legend, the run's label first when there are several."""
    field: str
    """The series drawn (`series.FIELDS`), or the container's name."""
    x: tuple[float, ...]
    """Seconds since the run's start (`titles.origins`), one per point."""
    values: tuple[float, ...]
    """One per point, in the unit of its axis; NaN where the lines had no value (or a gap)."""
    reference: bool = False
    right: bool = False


@dataclass(frozen=True, slots=True)
class DrawnPanel:
    label: str
    right_label: str
    """"" without a right-hand axis."""
    shares: bool
    curves: tuple[Drawn, ...]


@dataclass(frozen=True, slots=True)
class Chart:
    title: str
    panels: tuple[DrawnPanel, ...]
    notes: tuple[str, ...]
    """Per panel left out, one entry: `net: in 0 B/s, out 0 B/s`."""
    ticks: Ticks
    span: float
    """The elapsed seconds the time axis covers."""


def has_run(series: Sequence[Series]) -> bool:
    """Whether the lines have a run: its CPU (`run`), or its resident memory above 0 (a sampler older than `run`)."""
    return any(_finite(one.values["run_cpu"]) or any(value > 0 for value in one.values["mem_rss"]) for one in series)


def panels(series: Sequence[Series]) -> list[Panel]:
    """The panels that have values, top to bottom: the run's first when there is one; pressure and the containers'
    memory only when some run has them. Flat ones are among them (`chart` leaves them out).

    >>> from orca.sample.readback.chart.series import SeriesFold
    >>> [panel.name for panel in panels([SeriesFold().series("empty")])]
    ['cpu', 'memory', 'disk', 'io', 'net']
    """
    chosen = [RUN] if has_run(series) else []
    for panel in HOST:
        if panel is CONTAINERS:
            if any(one.containers for one in series):
                chosen.append(_containers(series))
        elif panel is not PRESSURE or any(_finite(one.values[curve.field]) for curve in panel.curves for one in series):
            chosen.append(replace(panel, label=f"host {panel.label}") if chosen and chosen[0] is RUN else panel)
    return chosen


def _containers(series: Sequence[Series]) -> Panel:
    """The containers' panel, its label saying when it shows only the largest of them."""
    omitted = [one for one in series if one.containers_omitted]
    if not omitted:
        return CONTAINERS
    about = "about " if omitted[0].containers_omitted_estimated else ""
    of = f"{about}{omitted[0].containers_omitted + len(omitted[0].containers):,}" if len(series) == 1 else (
        "each instance's")
    return replace(CONTAINERS, label=f"{CONTAINERS.label} (the {MAX_CONTAINERS} largest of {of})")


def chart(series: Sequence[Series]) -> Chart:
    """Everything the figure of `series` (one per run, overlaid) shows, top to bottom."""
    drawn_panels: list[DrawnPanel] = []
    notes: list[str] = []
    for panel in panels(series):
        curves = drawn(panel, series)
        if panel.name == MEMORY.name:
            panel, curves = _total_shown(panel, curves)
        if panel is not RUN and _all_flat(panel, curves):
            notes.append(_note(panel, curves))
            continue
        drawn_panels.append(_labelled(panel, curves, series))
    if not drawn_panels:  # nothing moved at all: the host's CPU still shows when the run was
        first = panels(series)[0]
        drawn_panels.append(_labelled(first, drawn(first, series), series))
        notes = [note for note in notes if not note.startswith(f"{first.name}:")]
    span = elapsed_span(series)
    return Chart(title(series), tuple(drawn_panels), tuple(notes), elapsed_ticks(span), span)


def drawn(panel: Panel, series: Sequence[Series]) -> list[Drawn]:
    """The curves of `panel`, every run's, in the order drawn, in the raw units of the line (bytes, percent); the
    containers' panel: one per container. A curve without any value is left out.

    >>> from orca.sample.readback.chart.series import SeriesFold
    >>> drawn(NET, [SeriesFold().series("empty")])
    []
    """
    names = labels(series)
    starts = origins(series)
    several = len(series) > 1
    curves: list[Drawn] = []
    for number, one in enumerate(series):
        x = tuple(t - starts[number] for t in one.t)
        chosen = [(curve.legend, curve.field, one.values[curve.field], curve.reference, curve.right)
                  for curve in panel.curves]
        if not panel.curves:
            chosen = [(name, name, values, False, False) for name, values in one.containers.items()]
        for index, (legend, field, values, reference, right) in enumerate(chosen):
            if _finite(values):
                curves.append(Drawn(number, index, f"{names[number]}: {legend}" if several else legend, field, x,
                                    values, reference, right))
    return curves


def _total_shown(panel: Panel, curves: list[Drawn]) -> tuple[Panel, list[Drawn]]:
    """The host's memory with its total as a reference line only once the memory used comes within half of it;
    below that the line would squeeze the curves to the foot of the panel, and the legend of `used` says the total
    instead."""
    totals = {curve.instance: _largest([curve]) for curve in curves if curve.reference}
    used = {curve.instance: _largest([curve]) for curve in curves if curve.field == "mem_used"}
    if not totals or any(2 * peak >= totals.get(instance, math.inf) for instance, peak in used.items()):
        return panel, curves
    return panel, [replace(curve, legend=f"{curve.legend} (of {humanised(totals[curve.instance])})")
                   if curve.field == "mem_used" and curve.instance in totals else curve
                   for curve in curves if not curve.reference]


def _labelled(panel: Panel, curves: list[Drawn], series: Sequence[Series]) -> DrawnPanel:
    """The panel with its curves in the unit each axis is drawn in, chosen for the largest value it shows."""
    left = [curve for curve in curves if not curve.right]
    right = [curve for curve in curves if curve.right]
    left_scale, left_unit = unit(panel.kind, _largest(left))
    right_scale, right_unit = unit(panel.right_kind, _largest(right))
    label = panel.label.replace("{unit}", left_unit)
    cores = {one.cores for one in series} - {None}
    if panel is RUN and len(cores) == 1:
        label = f"run's CPU % of {cores.pop()} cores"
    scaled = tuple(replace(curve, values=tuple(value / (right_scale if curve.right else left_scale)
                                               for value in curve.values)) for curve in curves)
    return DrawnPanel(label, panel.right_label.replace("{unit}", right_unit) if right else "", panel.shares, scaled)


def unit(kind: str, largest: float) -> tuple[float, str]:
    """The scale and name of the unit an axis of `kind` is drawn in, for its largest value.

    >>> unit(BYTES, 3 * 2**30), unit(BYTES, 500 * 2**20), unit(RATE, 0.0), unit(PERCENT, 250.0)
    ((1073741824, 'GiB'), (1048576, 'MiB'), (1, 'B/s'), (1, '%'))
    """
    if kind == PERCENT:
        return 1, "%"
    suffix = "/s" if kind == RATE else ""
    for power, name in ((3, "GiB"), (2, "MiB"), (1, "KiB")):
        if largest >= 2 ** (10 * power):
            return 2 ** (10 * power), name + suffix
    return 1, "B" + suffix


def _largest(curves: Sequence[Drawn]) -> float:
    return max((value for curve in curves for value in curve.values if math.isfinite(value)), default=0.0)


def _finite(values: Sequence[float]) -> bool:
    return any(math.isfinite(value) for value in values)


def _spread(curve: Drawn) -> tuple[float, float]:
    finite = [value for value in curve.values if math.isfinite(value)]
    return min(finite), max(finite)


def _all_flat(panel: Panel, curves: Sequence[Drawn]) -> bool:
    """Whether no measured curve of the panel moved (the reference lines are flat by nature)."""
    for curve in curves:
        if curve.reference:
            continue
        low, high = _spread(curve)
        allowed = FLAT_POINTS if panel.kind == PERCENT else FLAT_SHARE * max(abs(low), abs(high))
        if high - low > allowed:
            return False
    return True


def _note(panel: Panel, curves: Sequence[Drawn]) -> str:
    """A flat panel in one line, `net: in 0 B/s, out 2.00 KiB/s`: each measured curve's value (its range, across the
    runs, when it moved a little)."""
    legends: dict[str, list[float]] = {}
    for curve in curves:
        if not curve.reference:
            legend = curve.legend.split(": ", 1)[-1] if ": " in curve.legend else curve.legend
            legends.setdefault(legend, []).extend(_spread(curve))
    words = []
    for legend, values in legends.items():
        low, high = _value(panel.kind, min(values)), _value(panel.kind, max(values))
        words.append(f"{legend} {low}" if low == high else f"{legend} {low} to {high}")
    return f"{panel.name}: {', '.join(words)}"


def _value(kind: str, value: float) -> str:
    if kind == PERCENT:
        return f"{value:.1f}%"
    return humanised(value) + ("/s" if kind == RATE else "")
