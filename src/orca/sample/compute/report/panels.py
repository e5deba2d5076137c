"""What the chart of `orca metrics --plot` shows, as data: its panels top to bottom, each curve's series and legend
and the unit it is drawn in, and the instances' labels. The drawing itself (matplotlib) is `shell/readback/plot.py`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from orca.sample.compute.report.series import MAX_CONTAINERS, Series

GIB = 2.0**30
MIB = 2.0**20


@dataclass(frozen=True, slots=True)
class Curve:
    field: str
    """The series drawn, a name of `series.FIELDS`."""
    legend: str
    scale: float
    """Values are divided by this (bytes to GiB, bytes per second to MiB/s)."""

    @property
    def reference(self) -> bool:
        """Whether the curve is a reference line (memory's total) rather than a measurement."""
        return self.field == "mem_total"


@dataclass(frozen=True, slots=True)
class Panel:
    label: str
    """The y-axis label."""
    curves: tuple[Curve, ...]
    """Empty for the containers' panel: one curve per container, from `Series.containers`."""
    percent: bool = False
    """A share of a whole: drawn from 0 to a little over 100."""


def _curves(scale: float, *fields: str, **legends: str) -> tuple[Curve, ...]:
    """Curves of `fields`, each labelled by what it draws (`cpu_user` is `user`) unless `legends` names it."""
    return tuple(Curve(field, legends.get(field, field.split("_", 1)[1]), scale) for field in fields)


CPU = Panel("CPU %", _curves(1.0, "cpu_user", "cpu_system", "cpu_iowait", "cpu_busiest",
                              cpu_busiest="busiest core"), percent=True)
MEMORY = Panel("memory GiB", _curves(GIB, "mem_used", "mem_cache", "mem_rss", "mem_total", mem_rss="run's rss"))
DISK = Panel("disk %", _curves(1.0, "disk_percent", disk_percent="fullest file system"), percent=True)
IO = Panel("io MiB/s", _curves(MIB, "io_read", "io_write"))
NET = Panel("net MiB/s", _curves(MIB, "net_in", "net_out"))
PRESSURE = Panel("pressure % stalled", _curves(1.0, "pressure_cpu", "pressure_memory", "pressure_io"))
CONTAINERS = Panel("containers' mem GiB", ())


def _present(series: Sequence[Series], field: str) -> bool:
    return any(not math.isnan(value) for one in series for value in one.values[field])


def panels(series: Sequence[Series]) -> list[Panel]:
    """The figure's panels, top to bottom; pressure and the containers' memory only when some instance has them.

    >>> from orca.sample.compute.report.series import SeriesFold
    >>> [panel.label for panel in panels([SeriesFold().series("empty")])]
    ['CPU %', 'memory GiB', 'disk %', 'io MiB/s', 'net MiB/s']
    """
    chosen = [CPU, MEMORY, DISK, IO, NET]
    if any(_present(series, curve.field) for curve in PRESSURE.curves):
        chosen.append(PRESSURE)
    if any(one.containers for one in series):
        chosen.append(_containers(series))
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


@dataclass(frozen=True, slots=True)
class Drawn:
    """One curve of one instance in a panel, as drawn."""

    instance: int
    """Which of the series (its colour, when there are several)."""
    index: int
    """The curve's place in the panel (its line style, when there are several instances)."""
    legend: str
    """The curve's legend, the instance's label first when there are several."""
    values: tuple[float, ...]
    """One per point of the instance's `t`, in the panel's unit; NaN where a line had no value."""
    reference: bool


def drawn(panel: Panel, series: Sequence[Series]) -> list[Drawn]:
    """The curves of `panel`, every instance's, in the order drawn (the containers' panel: one per container).

    >>> from orca.sample.compute.report.series import SeriesFold
    >>> [(one.legend, one.values) for one in drawn(NET, [SeriesFold().series("empty")])]
    [('in', ()), ('out', ())]
    """
    labels = short_names([one.name for one in series])
    several = len(series) > 1
    curves: list[Drawn] = []
    for number, one in enumerate(series):
        chosen = [(curve.legend, one.values[curve.field], curve.scale, curve.reference) for curve in panel.curves]
        if not panel.curves:
            chosen = [(name, values, GIB, False) for name, values in one.containers.items()]
        for index, (legend, values, scale, reference) in enumerate(chosen):
            curves.append(Drawn(number, index, f"{labels[number]}: {legend}" if several else legend,
                                tuple(value / scale for value in values), reference))
    return curves


def short_names(names: Sequence[str]) -> list[str]:
    """Each instance's file name without its directory, when that still tells them apart.

    >>> short_names(["run/metrics/a.jsonl", "s3://logs/run/b.jsonl"]), short_names(["x/a.jsonl", "y/a.jsonl"])
    (['a.jsonl', 'b.jsonl'], ['x/a.jsonl', 'y/a.jsonl'])
    """
    short = [name.rsplit("/", 1)[-1] for name in names]
    return short if len(set(short)) == len(short) else list(names)


def title(series: Sequence[Series]) -> str:
    """The figure's title: the instances, and how many lines a point stands for when the run was thinned."""
    thinned = max((one.lines_per_point for one in series), default=1)
    text = ", ".join(short_names([one.name for one in series]))
    return text + f"  (each point the mean of up to {thinned} lines)" if thinned > 1 else text
