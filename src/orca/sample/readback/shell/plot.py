"""`orca metrics --plot FILE`: one figure of a run over time, drawn with matplotlib (the `plot` extra) from the pure
`Chart` of `readback/chart/panels.py`. Only this module imports matplotlib, and only when a chart is asked for."""

from __future__ import annotations

import importlib.util
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orca.sample.readback.chart.panels import Chart, DrawnPanel, chart
from orca.sample.readback.chart.series import Series
from orca.sample.readback.summary.text import printable

PLOT_EXTRA = "plot"
LINE_STYLES = ("-", "--", ":", "-.")
PANEL_INCHES = 2.1
AXES_INCHES = 7.7
"""The width of every panel: the figure grows to the right for longer legends rather than squeezing the panels."""
DPI = 90
# The margins, fixed or counted from the text rather than found by `tight_layout` (which draws the figure once more
# to measure it): room for the axes' labels on the left, the right-hand axis and the legends on the right, the
# title's lines on top, the time axis and the notes' lines below. A character of the small type (legends, notes) is
# taken as CHAR_INCHES wide, which is a little over its average, so a line is never cut.
LEFT_INCHES, RIGHT_INCHES, BOTTOM_INCHES, TITLE_LINE_INCHES, NOTES_LINE_INCHES = 0.85, 2.45, 0.55, 0.22, 0.2
CHAR_INCHES, TITLE_CHAR_INCHES, LEGEND_INCHES = 0.07, 0.085, 0.55
"""LEGEND_INCHES: a legend's sample of the line and its paddings."""
LEGEND_AT, LEGEND_AT_RIGHT_AXIS = 1.005, 1.07
"""Where a panel's legend starts, in the panel's widths: beside it, or past its right-hand axis's labels."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A chart's size and margins in inches, and its title's and notes' lines."""

    width: float
    height: float
    right: float
    top: float
    bottom: float
    title: tuple[str, ...]
    notes: tuple[str, ...]


def layout(drawing: Chart) -> Layout:
    """The figure's size for `drawing`: as wide as its longest legend needs, as tall as its panels, title and notes
    (each wrapped to the figure's width) need."""
    longest = max((len(_plain(curve.legend)) for panel in drawing.panels for curve in panel.curves), default=0)
    at = max((LEGEND_AT_RIGHT_AXIS if panel.right_label else LEGEND_AT for panel in drawing.panels), default=LEGEND_AT)
    right = max(RIGHT_INCHES, (at - 1) * AXES_INCHES + LEGEND_INCHES + CHAR_INCHES * longest)
    width = LEFT_INCHES + AXES_INCHES + right
    title = tuple(wrapped for line in drawing.title.split("\n")
                  for wrapped in textwrap.wrap(_plain(line), int((width - 0.4) / TITLE_CHAR_INCHES)) or [""])
    notes: tuple[str, ...] = ()
    if drawing.notes:
        notes = tuple(textwrap.wrap(_plain("flat throughout, not drawn: " + " · ".join(drawing.notes)),
                                    int((width - 0.2) / CHAR_INCHES)))
    top = 0.3 + TITLE_LINE_INCHES * len(title)
    bottom = BOTTOM_INCHES + NOTES_LINE_INCHES * len(notes) + (0.05 if notes else 0.0)
    height = PANEL_INCHES * len(drawing.panels) + top + bottom
    return Layout(width, height, right, top, bottom, title, notes)


def plotting_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def load_plotting() -> None:
    """matplotlib's modules that drawing a file needs, imported (about as long as drawing takes): `orca metrics` does
    it while the other processes reading a large file are still at it."""
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401


def _plain(text: str) -> str:
    """A name as matplotlib shows it as it is: control characters escaped, and `$`, which would start mathematics
    (an error to draw when it does not parse), escaped for matplotlib."""
    return printable(text).replace("$", r"\$")


def draw(series: Sequence[Series], path: str) -> None:
    """The chart of `series` (one per run, overlaid) to `path`; the format follows its suffix."""
    draw_chart(chart(series), len(series), path)


def draw_chart(drawing: Chart, runs: int, path: str) -> None:
    chart_figure(drawing, runs).savefig(path)


def chart_figure(drawing: Chart, runs: int) -> Any:
    """The matplotlib `Figure` of `drawing`, `runs` runs overlaid."""
    # The figure without pyplot: its global state and its backends' machinery are not needed for a file.
    from matplotlib import rcParams
    from matplotlib.figure import Figure

    size = layout(drawing)
    figure = Figure(figsize=(size.width, size.height), dpi=DPI)
    figure.subplots_adjust(left=LEFT_INCHES / size.width, right=1 - size.right / size.width,
                           top=1 - size.top / size.height, bottom=size.bottom / size.height, hspace=0.12)
    axes = figure.subplots(len(drawing.panels), 1, sharex=True, squeeze=False)
    colours = rcParams["axes.prop_cycle"].by_key()["color"]
    for row, panel in enumerate(drawing.panels):
        _draw_panel(axes[row][0], panel, runs > 1, colours)
    bottom = axes[-1][0]
    bottom.set_xticks(drawing.ticks.seconds, drawing.ticks.labels)
    bottom.set_xlim(0, drawing.span if drawing.span > 0 else 1)
    bottom.set_xlabel(drawing.ticks.axis_label)
    figure.suptitle("\n".join(size.title), fontsize="medium", y=1 - 0.12 / size.height, va="top")
    if size.notes:
        figure.text(0.1 / size.width, 0.08 / size.height, "\n".join(size.notes), fontsize="small", color="dimgrey",
                    va="bottom")
    return figure


def _draw_panel(axis: Any, panel: DrawnPanel, several: bool, colours: list[str]) -> None:
    """One panel: its curves, on its left axis and, when it has one, its right."""
    right = axis.twinx() if panel.right_label else None
    first_colour: dict[bool, str] = {}
    for curve in panel.curves:
        on = right if curve.right and right is not None else axis
        style: dict[str, Any] = {"linewidth": 1.0}
        if len(curve.x) == 1:  # a run of one line: a line of one point would draw nothing
            style |= {"marker": "o", "markersize": 3}
        if several:
            style |= {"color": colours[curve.instance % len(colours)],
                      "linestyle": LINE_STYLES[curve.index % len(LINE_STYLES)]}
            if curve.reference:
                style |= {"alpha": 0.5}
        elif curve.reference:
            # A limit in its measurement's colour, a total in grey.
            style |= {"linestyle": "--", "color": first_colour.get(curve.right, "grey") if right else "grey"}
        elif right is not None:
            style |= {"color": colours[len(first_colour) % len(colours)]}
            first_colour.setdefault(curve.right, style["color"])
        on.plot(curve.x, curve.values, label=_plain(curve.legend), **style)
    axis.set_ylabel(panel.label)
    axis.grid(True, alpha=0.3)
    if panel.shares:
        axis.set_ylim(0, 105)  # a line at 100 % stays visible above the frame
    else:
        axis.set_ylim(bottom=0)
    handles, names = axis.get_legend_handles_labels()
    if right is not None:
        right.set_ylabel(panel.right_label)
        right.set_ylim(bottom=0)
        more, more_names = right.get_legend_handles_labels()
        handles, names = handles + more, names + more_names
    if handles:
        axis.legend(handles, names, loc="upper left",
                    bbox_to_anchor=(LEGEND_AT_RIGHT_AXIS if right is not None else LEGEND_AT, 1.0),
                    fontsize="small", frameon=False)
