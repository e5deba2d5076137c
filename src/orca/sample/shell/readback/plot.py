"""`orca metrics --plot FILE`: one figure of a run over time, drawn with matplotlib (the `plot` extra) from the pure
`Chart` of `compute/report/panels.py`. Only this module imports matplotlib, and only when a chart is asked for."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

from orca.sample.compute.report.panels import Chart, DrawnPanel, chart
from orca.sample.compute.report.series import Series
from orca.sample.compute.report.text import printable

PLOT_EXTRA = "plot"
LINE_STYLES = ("-", "--", ":", "-.")
PANEL_INCHES = 2.1
WIDTH_INCHES = 11.0
DPI = 90
# The margins, fixed rather than found by `tight_layout` (which draws the figure once more to measure it): room for
# the axes' labels on the left, the right-hand axis and the legends on the right, the title's two lines on top.
LEFT_INCHES, RIGHT_INCHES, TOP_INCHES, BOTTOM_INCHES, NOTES_INCHES = 0.85, 2.45, 0.75, 0.55, 0.3


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
    # The figure without pyplot: its global state and its backends' machinery are not needed for a file.
    from matplotlib import rcParams
    from matplotlib.figure import Figure

    bottom_inches = BOTTOM_INCHES + (NOTES_INCHES if drawing.notes else 0.0)
    height = PANEL_INCHES * len(drawing.panels) + TOP_INCHES + bottom_inches
    figure = Figure(figsize=(WIDTH_INCHES, height), dpi=DPI)
    figure.subplots_adjust(left=LEFT_INCHES / WIDTH_INCHES, right=1 - RIGHT_INCHES / WIDTH_INCHES,
                           top=1 - TOP_INCHES / height, bottom=bottom_inches / height, hspace=0.12)
    axes = figure.subplots(len(drawing.panels), 1, sharex=True, squeeze=False)
    colours = rcParams["axes.prop_cycle"].by_key()["color"]
    for row, panel in enumerate(drawing.panels):
        _draw_panel(axes[row][0], panel, runs > 1, colours)
    bottom = axes[-1][0]
    bottom.set_xticks(drawing.ticks.seconds, drawing.ticks.labels)
    bottom.set_xlim(0, drawing.span if drawing.span > 0 else 1)
    bottom.set_xlabel(drawing.ticks.axis_label)
    figure.suptitle("\n".join(map(_plain, drawing.title.split("\n"))), fontsize="medium",
                    y=1 - 0.12 / height, va="top")
    if drawing.notes:
        figure.text(0.01, 0.1 / height, _plain("flat throughout, not drawn: " + " · ".join(drawing.notes)),
                    fontsize="small", color="dimgrey")
    figure.savefig(path)


def _draw_panel(axis: Any, panel: DrawnPanel, several: bool, colours: list[str]) -> None:
    """One panel: its curves, on its left axis and, when it has one, its right."""
    right = axis.twinx() if panel.right_label else None
    first_colour: dict[bool, str] = {}
    for curve in panel.curves:
        on = right if curve.right and right is not None else axis
        style: dict[str, Any] = {"linewidth": 1.0}
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
        axis.legend(handles, names, loc="upper left", bbox_to_anchor=(1.07 if right is not None else 1.005, 1.0),
                    fontsize="small", frameon=False)
