"""`orca metrics --plot FILE` of a fleet: the pure `FleetChart` (`readback/fleet/chart.py`) drawn with matplotlib, in
a figure of one size whatever the number of runs: the CPU and memory heat maps (a row per run, thinner the more runs
there are), the fleet's CPUs and memory over time under them, the flagged runs named beside the rows."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from orca.sample.readback.chart.panels import BYTES, unit
from orca.sample.readback.fleet.chart import FleetChart, fleet_chart, named
from orca.sample.readback.fleet.flags import FAILED, GAPS, IDLE, NO_LINES, SATURATED, STRAGGLER
from orca.sample.readback.fleet.table import Table
from orca.sample.readback.fleet.usage import Usage
from orca.sample.readback.shell.plot import CHAR_INCHES, DPI, load_plotting, plain
from orca.sample.readback.words import cut

WIDTH_INCHES, HEIGHT_INCHES = 12.0, 9.0
HEIGHTS = (3.0, 3.0, 1.25, 1.25)
"""The panels' shares of the height: the two heat maps, the fleet's CPUs, its memory."""
FLAG_COLOURS = {SATURATED: "tab:red", FAILED: "darkred", STRAGGLER: "tab:orange", NO_LINES: "dimgrey",
                IDLE: "tab:blue", GAPS: "tab:purple"}
NAMED_PIXELS = 3
"""A named run's row is drawn at least this many pixels thick."""
LABEL_CHARACTERS = 28
"""A named run's label is cut to this many characters."""
LABEL_POINTS = 11.0
"""The height a label takes beside a heat map (x-small type and the space between two): so many fit, and no more."""


def draw_fleet(table: Table, usages: Sequence[Usage | None], path: str) -> None:
    """The chart of a fleet's `table` (its runs' `usages`, by row) to `path`; the format follows its suffix."""
    load_plotting()
    fleet_figure(fleet_chart(table, usages)).savefig(path)


def fleet_figure(chart: FleetChart) -> Any:
    """The matplotlib `Figure` of `chart`: where its title, labels, legends and notes go is matplotlib's constrained
    layout, which measures them."""
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    notes = [wrapped for note in chart.notes for wrapped in textwrap.wrap(note, int(WIDTH_INCHES / CHAR_INCHES))]
    engine = ConstrainedLayoutEngine()
    figure = Figure(figsize=(WIDTH_INCHES, HEIGHT_INCHES), dpi=DPI, layout=engine)
    grid = figure.add_gridspec(len(HEIGHTS), 2, height_ratios=HEIGHTS, width_ratios=(40, 1))
    cpu_axis = figure.add_subplot(grid[0, 0])
    memory_axis = figure.add_subplot(grid[1, 0], sharex=cpu_axis)
    cores_axis = figure.add_subplot(grid[2, 0], sharex=cpu_axis)
    memory_total_axis = figure.add_subplot(grid[3, 0], sharex=cpu_axis)
    x = [(column + 0.5) * chart.column_seconds for column in range(len(chart.cores_busy))]
    _totals(cores_axis, x, chart.cores_busy, chart.cores_available, 1, "fleet's CPUs")
    scale, name = unit(BYTES, max(chart.memory_available, default=0.0))
    _totals(memory_total_axis, x, chart.memory_used, chart.memory_available, scale, f"fleet's memory {name}")
    memory_total_axis.set_xticks(chart.ticks.seconds, chart.ticks.labels)
    memory_total_axis.set_xlim(0, chart.span if chart.span > 0 else 1)
    memory_total_axis.set_xlabel(chart.ticks.axis_label)
    for axis in (cpu_axis, memory_axis, cores_axis):
        axis.tick_params(labelbottom=False)
    figure.suptitle(chart.title, fontsize="medium")
    if notes:  # the figure's label under the time axis: the layout keeps room for it
        figure.supxlabel("\n".join(notes), x=0.01, ha="left", fontsize="small", color="dimgrey")
    # The heat maps' height, once laid out, says how many runs' labels fit beside them.
    engine.execute(figure)
    image = None
    for axis, rows, what in ((cpu_axis, chart.cpu, "CPU"), (memory_axis, chart.memory, "memory")):
        image = _heat_map(axis, chart, rows, what)
    if image is not None:
        bar = figure.colorbar(image, cax=figure.add_subplot(grid[0:2, 1]))
        bar.set_label("% of what the run had (its cores and memory, or its cgroup's limits)")
    figure.align_ylabels([cpu_axis, memory_axis, cores_axis, memory_total_axis])
    return figure


def _heat_map(axis: Any, chart: FleetChart, rows: tuple[Sequence[float], ...], what: str) -> Any:
    """One heat map: a row per run, its share of what it had per column; the named runs' labels in their flag's
    colour."""
    from matplotlib import colormaps

    colours = colormaps["magma"].with_extremes(bad="#ececec")
    right = chart.span if chart.span > 0 else 1
    pixels = axis.get_position().height * axis.figure.get_figheight() * axis.figure.dpi
    shown = named(chart, int(pixels / (LABEL_POINTS * axis.figure.dpi / 72)))
    # Rows at least a pixel each are drawn as they are; more runs than pixels are averaged into them.
    image = axis.imshow(rows or [[float("nan")]], aspect="auto", cmap=colours, vmin=0, vmax=100,
                        interpolation="nearest" if len(rows) <= pixels else "antialiased",
                        extent=(0, right, len(rows), 0))
    if rows and len(rows) > pixels / NAMED_PIXELS:
        # Rows thinner than a few pixels: each named run's row drawn again over them, that many pixels thick, so a
        # run that stands out is seen among a thousand.
        thick = NAMED_PIXELS * len(rows) / pixels
        for index, _ in shown:
            middle = index + 0.5
            axis.imshow([rows[index]], aspect="auto", interpolation="nearest", cmap=colours, vmin=0, vmax=100,
                        extent=(0, right, middle + thick / 2, middle - thick / 2))
        axis.set_ylim(len(rows), 0)
    axis.set_yticks([index + 0.5 for index, _ in shown],
                    [cut(plain(chart.labels[index]), LABEL_CHARACTERS) for index, _ in shown], fontsize="x-small")
    for tick, (_, flag) in zip(axis.get_yticklabels(), shown, strict=True):
        tick.set_color(FLAG_COLOURS.get(flag, "black"))
    axis.set_ylabel(f"{what}, {len(rows):,} runs", fontsize="small")
    return image


def _totals(axis: Any, x: list[float], used: tuple[float, ...], available: tuple[float, ...], scale: float,
            label: str) -> None:
    axis.plot(x, [value / scale for value in used], linewidth=1.0, label="used")
    axis.plot(x, [value / scale for value in available], linewidth=1.0, linestyle="--", color="grey",
              label="what the runs had")
    axis.set_ylim(bottom=0)
    axis.set_ylabel(label, fontsize="small")
    axis.grid(True, alpha=0.3)
    # Above the panel, at its right: beside it, the legend would push the colour bar's column away from the maps.
    axis.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=2, fontsize="x-small", frameon=False,
                borderaxespad=0.1)
