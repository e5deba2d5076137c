"""`orca metrics --plot FILE`: one figure of a run over time, drawn with matplotlib (the `plot` extra) from the pure
series and panels of `compute/report/`. Only this module imports matplotlib, and only when a chart is asked for."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from orca.sample.compute.report.panels import drawn, panels, title
from orca.sample.compute.report.series import Series
from orca.sample.compute.report.text import printable

PLOT_EXTRA = "plot"
LINE_STYLES = ("-", "--", ":", "-.")


def plotting_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _plain(text: str) -> str:
    """A name as matplotlib shows it as it is: control characters escaped, and `$`, which would start mathematics
    (an error to draw when it does not parse), escaped for matplotlib."""
    return printable(text).replace("$", r"\$")


def draw(series: Sequence[Series], path: str) -> None:
    """The chart of `series` (one per instance, overlaid) to `path`; the format follows its suffix."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display is needed or wanted
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    chosen = panels(series)
    figure, axes = plt.subplots(len(chosen), 1, sharex=True, figsize=(11, 2.1 * len(chosen) + 0.8), squeeze=False)
    several = len(series) > 1
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    times = [[datetime.fromtimestamp(t, UTC) for t in one.t] for one in series]
    for row, panel in enumerate(chosen):
        axis = axes[row][0]
        for curve in drawn(panel, series):
            style: dict[str, Any] = {"linewidth": 1.0}
            if several:
                style |= {"color": colours[curve.instance % len(colours)],
                          "linestyle": LINE_STYLES[curve.index % len(LINE_STYLES)]}
            if curve.reference:
                style |= {"linestyle": "--", "color": "grey"} if not several else {"alpha": 0.5}
            axis.plot(times[curve.instance], curve.values, label=_plain(curve.legend), **style)
        axis.set_ylabel(panel.label)
        axis.grid(True, alpha=0.3)
        if panel.percent:
            axis.set_ylim(0, 105)  # a line at 100 % stays visible above the frame
        else:
            axis.set_ylim(bottom=0)
        if axis.lines:
            axis.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize="small", frameon=False)
    bottom = axes[-1][0]
    locator = mdates.AutoDateLocator(tz=UTC)  # type: ignore[no-untyped-call]
    bottom.xaxis.set_major_locator(locator)
    bottom.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=UTC))  # type: ignore[no-untyped-call]
    bottom.set_xlabel("time (UTC)")
    figure.suptitle(_plain(title(series)), fontsize="medium")
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=90)
    finally:
        plt.close(figure)
