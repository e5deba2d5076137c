"""`orca metrics --plot FILE`: one figure of a run over time, drawn with matplotlib (the `plot` extra) from the pure
series of `compute/report/series.py`. Only this module imports matplotlib, and only when a chart is asked for."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from orca.sample.compute.report.series import Series

PLOT_EXTRA = "plot"
GIB = 2.0**30
MIB = 2.0**20
LINE_STYLES = ("-", "--", ":", "-.")


def plotting_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _present(series: Sequence[Series], field: str) -> bool:
    return any(not math.isnan(value) for one in series for value in one.values[field])


def panels(series: Sequence[Series]) -> list[tuple[str, list[tuple[str, str, float]]]]:
    """The figure's panels, top to bottom: (y-axis label, [(field, legend, scale)]); the pressure and containers
    panels only when some instance has them (`containers` is drawn from `Series.containers`)."""
    chosen: list[tuple[str, list[tuple[str, str, float]]]] = [
        ("CPU %", [("cpu_user", "user", 1.0), ("cpu_system", "system", 1.0), ("cpu_iowait", "iowait", 1.0),
                   ("cpu_busiest", "busiest core", 1.0)]),
        ("memory GiB", [("mem_used", "used", GIB), ("mem_cache", "cache", GIB), ("mem_rss", "run's rss", GIB),
                        ("mem_total", "total", GIB)]),
        ("disk %", [("disk_percent", "fullest file system", 1.0)]),
        ("io MiB/s", [("io_read", "read", MIB), ("io_write", "write", MIB)]),
        ("net MiB/s", [("net_in", "in", MIB), ("net_out", "out", MIB)]),
    ]
    if any(_present(series, field) for field in ("pressure_cpu", "pressure_memory", "pressure_io")):
        chosen.append(("pressure % stalled", [("pressure_cpu", "cpu", 1.0), ("pressure_memory", "memory", 1.0),
                                               ("pressure_io", "io", 1.0)]))
    if any(one.containers for one in series):
        chosen.append(("containers' mem GiB", []))
    return chosen


def short_names(names: Sequence[str]) -> list[str]:
    """Each instance's file name without its directory, when that still tells them apart.

    >>> short_names(["run/metrics/a.jsonl", "s3://logs/run/b.jsonl"]), short_names(["x/a.jsonl", "y/a.jsonl"])
    (['a.jsonl', 'b.jsonl'], ['x/a.jsonl', 'y/a.jsonl'])
    """
    short = [name.rsplit("/", 1)[-1] for name in names]
    return short if len(set(short)) == len(short) else list(names)


def draw(series: Sequence[Series], path: str) -> None:
    """The chart of `series` (one per instance, overlaid) to `path`; the format follows its suffix."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display is needed or wanted
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    chosen = panels(series)
    figure, axes = plt.subplots(len(chosen), 1, sharex=True, figsize=(11, 2.1 * len(chosen) + 0.8), squeeze=False)
    several = len(series) > 1
    labels = short_names([one.name for one in series])
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for row, (label, fields) in enumerate(chosen):
        axis = axes[row][0]
        for number, one in enumerate(series):
            times = [datetime.fromtimestamp(t, UTC) for t in one.t]
            curves = [(legend, [v / scale for v in one.values[field]], field == "mem_total")
                      for field, legend, scale in fields]
            if not fields:
                curves = [(name, [v / GIB for v in values], False) for name, values in one.containers.items()]
            for index, (legend, values, reference) in enumerate(curves):
                style: dict[str, Any] = {"linewidth": 1.0}
                if several:
                    style |= {"color": colours[number % len(colours)], "linestyle": LINE_STYLES[index % 4]}
                    legend = f"{labels[number]}: {legend}"
                if reference:
                    style |= {"linestyle": "--", "color": "grey"} if not several else {"alpha": 0.5}
                axis.plot(times, values, label=legend, **style)
        axis.set_ylabel(label)
        axis.grid(True, alpha=0.3)
        if label.endswith("%") and label != "pressure % stalled":
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
    thinned = max(one.lines_per_point for one in series) if series else 1
    title = ", ".join(labels)
    if thinned > 1:
        title += f"  (each point the mean of up to {thinned} lines)"
    figure.suptitle(title, fontsize="medium")
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=90)
    finally:
        plt.close(figure)
