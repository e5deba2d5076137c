"""`orca metrics --plot FILE`: one figure of a run over time, drawn with matplotlib (the `plot` extra) from the pure
`Chart` of `readback/chart/panels.py`. Only this module imports matplotlib, and only when a chart is asked for."""

from __future__ import annotations

import importlib.util
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orca.sample.readback.chart.panels import GREY, Chart, DrawnPanel, chart
from orca.sample.readback.gather.series import Series
from orca.sample.readback.words import printable

LINE_STYLES = ("-", "--", ":", "-.")
AXES_INCHES = 7.7
"""The width of every panel: the figure grows to the right for longer legends rather than squeezing the panels."""
DPI = 90
# The figure's size only: where its title, legends, labels and notes go is matplotlib's constrained layout, which
# measures them as it draws. A character of the small type (legends, notes) is taken as CHAR_INCHES wide, a little
# over its average, so that the figure is wide enough for its longest legend beside the panels.
LEFT_INCHES, RIGHT_INCHES, AXIS_INCHES, LINE_INCHES = 0.85, 2.45, 0.75, 0.22
"""AXIS_INCHES: the time axis's ticks and label; LINE_INCHES: a line of the title, the notes or the runs' legend."""
CHAR_INCHES, TITLE_CHAR_INCHES, LEGEND_INCHES = 0.07, 0.085, 0.6
"""LEGEND_INCHES: a legend's sample of the line and its paddings."""
GAP_INCHES = 0.1
"""Between two panels."""
PANEL_INCHES = 2.1
"""The height of a panel, the run's at least; without a run, each of the host's."""
HOST_PANEL_INCHES = 1.1
"""The height of a host panel below the run's, which then grow to take at least half the figure's height."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A chart's size in inches, and its title's and notes' lines."""

    width: float
    height: float
    title: tuple[str, ...]
    notes: tuple[str, ...]
    heights: tuple[float, ...]
    """Each panel's."""


def layout(drawing: Chart) -> Layout:
    """The figure's size for `drawing`: as wide as its longest legend needs, as tall as its panels, title, runs and
    notes (each wrapped to the figure's width) need. The run's panels take at least half its height: they grow to be
    as tall as everything else together."""
    legends = [curve.legend for panel in drawing.panels for curve in panel.curves] + list(drawing.runs)
    longest = max(map(len, map(plain, legends)), default=0)
    width = LEFT_INCHES + AXES_INCHES + max(RIGHT_INCHES, LEGEND_INCHES + CHAR_INCHES * longest)
    title = tuple(wrapped for line in drawing.title.split("\n")
                  for wrapped in textwrap.wrap(plain(line), int((width - 0.4) / TITLE_CHAR_INCHES)) or [""])
    said = [*(["flat throughout, not drawn: " + " · ".join(drawing.flat)] if drawing.flat else []), *drawing.notes]
    notes = tuple(line for text in said for line in textwrap.wrap(plain(text), int((width - 0.2) / CHAR_INCHES)))
    text = AXIS_INCHES + LINE_INCHES * (1 + len(title) + len(notes) + (len(drawing.runs) + 2) // 3)  # runs: 3 a row
    runs = sum(panel.run for panel in drawing.panels)
    host = HOST_PANEL_INCHES if runs else PANEL_INCHES
    others = host * (len(drawing.panels) - runs) + GAP_INCHES * (len(drawing.panels) - 1) + text
    run = max(PANEL_INCHES, others / runs) if runs else 0.0
    heights = tuple(run if panel.run else host for panel in drawing.panels)
    return Layout(width, run * runs + others, title, notes, heights)


def plotting_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def load_plotting() -> None:
    """matplotlib's modules that drawing a file needs, imported (about as long as drawing takes): `orca metrics` does
    it while the other processes reading a large file are still at it."""
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401


def plain(text: str) -> str:
    """A name as matplotlib shows it as it is: control characters escaped, and `$`, which would start mathematics
    (an error to draw when it does not parse), escaped for matplotlib."""
    return printable(text).replace("$", r"\$")


def draw(series: Sequence[Series], path: str, runs: int | None = None) -> None:
    """The chart of `series` (the runs drawn, overlaid, of `runs` in all) to `path`; the format follows its
    suffix."""
    chart_figure(chart(series, runs)).savefig(path)


def chart_figure(drawing: Chart) -> Any:
    """The matplotlib `Figure` of `drawing`."""
    # The figure without pyplot: its global state and its backends' machinery are not needed for a file.
    from matplotlib import rcParams
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.lines import Line2D

    size = layout(drawing)
    figure = Figure(figsize=(size.width, size.height), dpi=DPI, layout=ConstrainedLayoutEngine(h_pad=GAP_INCHES / 2))
    axes = figure.subplots(len(drawing.panels), 1, sharex=True, squeeze=False,
                           gridspec_kw={"height_ratios": size.heights})
    colours = rcParams["axes.prop_cycle"].by_key()["color"]
    for row, panel in enumerate(drawing.panels):
        _draw_panel(axes[row][0], panel, bool(drawing.runs), colours)
    bottom = axes[-1][0]
    bottom.set_xticks(drawing.ticks.seconds, drawing.ticks.labels)
    bottom.set_xlim(0, drawing.end if drawing.end > 0 else 1)
    bottom.set_xlabel(drawing.ticks.axis_label)
    figure.align_ylabels(axes[:, 0])
    if drawing.runs:  # the runs' colours under the title, as one legend: the layout keeps room for both
        handles = [Line2D([], [], color=colour(index, colours)) for index in range(len(drawing.runs))]
        figure.legend(handles, [plain(label) for label in drawing.runs], ncols=3, fontsize="small", frameon=False,
                      loc="outside upper center", title="\n".join(size.title), title_fontsize="medium")
    else:
        figure.suptitle("\n".join(size.title), fontsize="medium")
    if size.notes:  # the figure's label under the time axis: the layout keeps room for it
        figure.supxlabel("\n".join(size.notes), x=0.01, ha="left", fontsize="small", color="dimgrey")
    return figure


def colour(place: int, colours: Sequence[str]) -> str:
    """A place in the colour cycle (`GREY`: grey) as matplotlib names it."""
    return "grey" if place == GREY else colours[place % len(colours)]


def _draw_panel(axis: Any, panel: DrawnPanel, several: bool, colours: list[str]) -> None:
    """One panel: its curves, its axis in its one curve's colour, its legend beside it (with several runs, the
    curves' styles only: the runs' colours are the figure's legend)."""
    named: dict[str, Any] = {}
    for curve in panel.curves:
        style: dict[str, Any] = {"linewidth": 1.0, "color": colour(curve.colour, colours)}
        if sum(1 for value in curve.values if value == value) == 1 or len(curve.x) == 1:
            style |= {"marker": "o", "markersize": 3}  # a point alone: a line of one point draws nothing
        if several:
            style["linestyle"] = LINE_STYLES[curve.index % len(LINE_STYLES)]
            style["alpha"] = 0.5 if curve.reference else 1.0
        elif curve.reference:
            style["linestyle"] = "--"
        line = axis.plot(curve.x, curve.values, **style)[0]
        if several:
            named.setdefault(curve.legend, line)
        else:
            named[curve.legend] = line
    axis.set_ylabel(panel.label)
    axis.grid(True, alpha=0.3)
    if panel.axis_colour is not None and not several:
        axis.yaxis.label.set_color(colour(panel.axis_colour, colours))
        axis.tick_params(axis="y", colors=colour(panel.axis_colour, colours))
    if panel.shares:
        axis.set_ylim(0, 105)  # a line at 100 % stays visible above the frame
    else:  # from 0; a panel of zeros alone: 0 to 1 of its unit, not matplotlib's -0.05 to 0.05
        top = panel.top * 1.05 if panel.top > 0 else 1  # a point at the highest inside the frame
        axis.set_ylim(0, top)
        for curve in panel.curves:  # a short point above the scale: marked at the top, in its curve's colour
            over = [x for x, value, short in zip(curve.x, curve.values, curve.short, strict=False)
                    if short and value > top]
            if over:
                axis.plot(over, [top] * len(over), linestyle="none", marker="^", markersize=5, clip_on=False,
                          color=colour(curve.colour, colours))
    if named and (not several or len(named) > 1):
        handles = list(named.values())
        if several:  # the styles alone, in grey: the colours are the runs'
            from matplotlib.lines import Line2D

            handles = [Line2D([], [], color="grey", linestyle=line.get_linestyle()) for line in handles]
        axis.legend(handles, [plain(legend) for legend in named], loc="upper left", bbox_to_anchor=(1.01, 1.0),
                    fontsize="small", frameon=False)
