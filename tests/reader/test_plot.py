"""The chart, checked as data (the series, panels and their heights, curves and their colours, ticks, title and notes it
is drawn from), and the files it is drawn to: a point holds the mean of its lines' shares and rates, the peak of their
memory, the newest of their limits; the run's panels come first and take at least half the height, its CPU in percent
of one core; flat panels are left out and said; two runs are never joined; many runs draw a chart of the usual
size."""

from __future__ import annotations

import math
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from orca.sample.readback.chart.panels import CONTAINERS, GREY, MEMORY, Chart, DrawnPanel, chart, drawn, panels
from orca.sample.readback.chart.titles import title
from orca.sample.readback.gather.fold import RunFold
from orca.sample.readback.gather.series import Series
from orca.sample.readback.shell.plot import chart_figure, draw, layout
from tests.reader.folding import checked, every_run, folded, series_of
from tests.reader.hand_worked import RUN, cpu, mem, sample

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-"}
GIB = 2**30
nan = math.nan


def same(values: tuple[float, ...], expected: list[float]) -> bool:
    return len(values) == len(expected) and all(
        (math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(values, expected, strict=True)
    )


def by_name(drawing: Chart) -> dict[str, DrawnPanel]:
    return {panel.name: panel for panel in drawing.panels}


def test_the_series_hold_the_lines_values() -> None:
    """`RUN`'s lines, one a point: the 15 s from 110 to 125 is over twice the usual 5 s between lines, so a point of
    nothing stands between them (at 117.5) and no line joins the two."""
    series = folded(RUN)
    assert series.t == (100.0, 105.0, 110.0, 117.5, 125.0, 130.0)
    assert (series.first, series.last, series.lines, series.lines_per_point) == (100.0, 130.0, 5, 1)
    assert same(series.values["cpu_user"], [10.0, 20.0, 50.0, nan, nan, 5.0])
    assert same(series.values["cpu_busiest"], [40.0, 60.0, 90.0, nan, nan, 20.0])
    assert same(series.values["mem_used"], [100, 300, 250, nan, 400, 350])
    assert same(series.values["mem_rss"], [10, 50, 20, nan, 0, 5])
    assert same(series.values["mem_total"], [1000, 1000, 1000, nan, 1000, 500])
    # The fullest disk of each line: /a 1 of 4; none; /b 3 of 4; none; /a 3 of 4.
    assert same(series.values["disk_percent"], [25.0, nan, 75.0, nan, nan, 75.0])
    assert same(series.values["io_read"], [100, 200, nan, nan, nan, nan])
    assert same(series.values["net_out"], [nan, nan, 20, nan, nan, nan])
    assert same(series.values["pressure_io"], [nan, 4.0, nan, nan, nan, nan])
    assert same(series.values["run_cpu"], [nan] * 6)
    assert set(series.keyed["containers"]) == {"db", "web"}
    assert same(series.keyed["containers"]["db"], [100, 300, nan, nan, 200, 10])
    assert set(series.values) == {column.name for section in RunFold().sections if not section.keyed
                                  for column in section.columns}


def test_a_long_run_is_thinned_to_points_of_slots_of_time() -> None:
    """Ten lines a second apart, user and used = t: with at most 2 × 2 slots, a slot grows to 2^12 ms (0 to 9,000 ms
    then spans slots 0, 1 and 2), holding t 0-4, 5-8 and 9. CPU is each slot's mean, memory its peak, the total its
    newest line's; each point sits midway between its first and last line."""
    lines = "\n".join(sample(float(t), cpu=cpu(float(t), 0.0, 0.0, 0.0, 0.0), mem=mem(1000 * t, 100 * t, 0, 0))
                      for t in range(10))
    series = folded(lines, max_points=2)
    assert series.t == (2.0, 6.5, 9.0)
    assert series.values["cpu_user"] == (2.0, 6.5, 9.0)
    assert series.values["mem_used"] == (400.0, 800.0, 900.0)
    assert series.values["mem_total"] == (4000.0, 8000.0, 9000.0)
    assert series.lines_per_point == 5
    assert title([series]).endswith("each point stands for up to 5 lines")


def test_percentages_are_summed_in_tenths() -> None:
    """0.1 + 0.2 is not 0.3 in floats; summed in tenths, the mean of 0.1, 0.2 and 0.3 is 0.2 exactly."""
    lines = "\n".join(sample(1.0, cpu=cpu(user, 0.0, 0.0, 0.0, 0.0)) for user in (0.1, 0.2, 0.3))
    assert folded(lines).values["cpu_user"] == (0.2,)


def run_line(t: float, cpu_share: float, rss: int, start: float = 1000.0, **more: Any) -> str:
    """A line of a run sampled with `-- COMMAND` on a 2-core host, the host's memory used going up and down by
    10 MiB a second; `more` adds to (or replaces) its sections (`dt`: 1 s unless given)."""
    used = 2 * GIB + int(t - start) % 300 * 10 * 2**20
    sections: dict[str, Any] = {
        "dt": 1.0, "cpu": cpu(50.0 + (t % 7), 5.0, 0.0, 0.0, 90.0), "mem": mem(8 * GIB, used, 0, rss),
        "disk": [{"path": "/tmp", "total": 100 * GIB, "used": 30 * GIB, "free": 70 * GIB}],
        "io": {"read": 0, "write": 0}, "net": {"in": 0, "out": 0}, "self_cpu": 0.1,
        "run": {"cpu": cpu_share, "procs": 2}, "start": start, **more}
    return sample(t, **sections)


def command_run(seconds: int, interval: float = 1.0, start: float = 1000.0, code: int = 0) -> str:
    """A run of `seconds` at `interval`: its first line (0.2 s after the start) names the command, its last says it
    exited with `code`. Its CPU `i % 50` percent of both cores at the i-th line."""
    count = int(seconds / interval)
    lines = []
    for i in range(count + 1):
        t = start + 0.2 + i * interval
        run: dict[str, Any] = {"cpu": float(i % 50), "procs": 2}
        if i == 0:
            run["command"] = ["make", "-j4"]
        if i == count:
            run["exit"] = {"code": code, "wall": seconds + 0.2}
        lines.append(run_line(t, 0.0, (100 + i % 400) * 2**20, start, run=run, dt=0.2 if i == 0 else interval))
    return "\n".join(lines)


def test_the_run_comes_first_in_panels_of_its_own() -> None:
    """The run's CPU in percent of one core (its `run.cpu` times the 2 cores), its resident memory in MiB (its own
    scale: not the host's 8 GiB); the host's memory below them without its total, since the host used under half."""
    drawing = chart([folded(command_run(30))])
    cpu_panel, memory_panel = drawing.panels[:2]
    assert (cpu_panel.label, memory_panel.label) == ("run CPU\n% of one core", "run memory\nMiB")
    assert [curve.legend for curve in cpu_panel.curves] == ["run's CPU"]
    # Line i has i % 50 percent of all cores: 2 × i percent of one core, up to 60 at the last line (i = 30).
    assert cpu_panel.curves[0].values[:3] == (0.0, 2.0, 4.0) and max(cpu_panel.curves[0].values) == 60.0
    assert [curve.legend for curve in memory_panel.curves] == ["run's resident memory"]
    assert max(memory_panel.curves[0].values) == 130.0  # MiB: 100 + 30 at the last line
    memory = by_name(drawing)["memory"]
    assert memory.label == "host memory\nGiB"
    assert [curve.legend for curve in memory.curves] == ["used (of 8.00 GiB)", "cache"]


def test_the_run_takes_at_least_half_the_height() -> None:
    """With every host panel drawn (pressure and containers too), the run's two panels together are as tall as the
    host's together; without a run the host's panels are of the usual height."""
    busy = "\n".join(run_line(1000.2 + i, float(i % 9), (100 + i) * 2**20, dt=1.0,
                              io={"read": i, "write": 2 * i}, net={"in": i, "out": i},
                              disk=[{"path": "/", "total": 100, "used": 30 + i % 3, "free": 70 - i % 3}],
                              pressure={"cpu": float(i % 4), "memory": 0.0, "io": 1.0},
                              containers=[{"name": "db", "mem": 2**20 * (i % 5)}]) for i in range(20))
    drawing = chart([folded(busy)])
    names = [panel.name for panel in drawing.panels]
    assert names == ["run cpu", "run memory", "cpu", "memory", "disk", "io", "net", "pressure", "containers"]
    size = layout(drawing)
    run = sum(height for height, panel in zip(size.heights, drawing.panels, strict=True) if panel.run)
    assert run >= 0.5 * size.height and min(size.heights) > 1.0
    two = sample(1.0, cpu=cpu(1.0, 0.0, 0.0, 0.0, 1.0)) + "\n" + sample(6.0, cpu=cpu(2.0, 0.0, 0.0, 0.0, 2.0))
    assert layout(chart([folded(two)])).heights == (2.1,)


def test_each_axis_is_coloured_as_its_one_curve() -> None:
    """One measured curve on an axis: the axis takes its colour (the run's CPU, the disk); several: none. A limit is
    drawn in its measurement's colour, a total in grey. In the figure, the label and ticks take that colour."""
    limits = {"mem": 300 * 2**20, "mem_max": GIB, "cpu": 80.0, "cpu_max": 0.5, "throttled": 2.0, "oom_kill": 0}
    lines = "\n".join(run_line(1000.2 + i, float(i), (100 + i) * 2**20, cgroup=limits,
                               disk=[{"path": "/", "total": 100, "used": 30 + i % 2, "free": 70 - i % 2}],
                               mem=mem(8 * GIB, 6 * GIB + i, 0, (100 + i) * 2**20))  # the host's near its total
                      for i in range(20))
    drawing = chart([folded(lines)])
    panels_by_name = by_name(drawing)
    run_cpu = panels_by_name["run cpu"]
    assert run_cpu.axis_colour == 0 and [curve.colour for curve in run_cpu.curves] == [0, 0]
    assert panels_by_name["disk"].axis_colour == 0 and panels_by_name["cpu"].axis_colour is None
    assert [curve.colour for curve in panels_by_name["memory"].curves] == [0, 1, GREY]
    figure = chart_figure(drawing)
    axis = figure.axes[0]
    [line, limit] = axis.get_lines()
    assert axis.yaxis.label.get_color() == line.get_color() == limit.get_color()
    assert all(label.get_color() == line.get_color() for label in axis.get_yticklabels())


def test_flat_panels_are_left_out_and_said() -> None:
    """The disk stays at 30 %, io and net at 0: not drawn, one note each; the host's CPU and memory moved."""
    drawing = chart([folded(command_run(30))])
    assert [panel.name for panel in drawing.panels] == ["run cpu", "run memory", "cpu", "memory"]
    assert drawing.flat == ("disk: fullest file system 30.0%", "io: read 0 B/s, write 0 B/s",
                            "net: in 0 B/s, out 0 B/s")


def test_a_share_pinned_at_100_percent_is_drawn() -> None:
    """CPU pressure at 100 % throughout is the news, not flat; memory pressure at 0 throughout alone is not."""
    lines = "\n".join(run_line(1000.2 + i, 1.0, 2**20, pressure={"cpu": 100.0, "memory": 0.0}) for i in range(10))
    drawing = chart([folded(lines)])
    pressure = by_name(drawing)["pressure"]
    assert [(curve.legend, set(curve.values)) for curve in pressure.curves] == [("cpu", {100.0}), ("memory", {0.0})]
    assert not any(note.startswith("pressure") for note in drawing.flat)


def test_under_a_cgroup_limit_the_limits_are_the_run_panels_reference_lines() -> None:
    """A limit of 1 GiB and of 0.5 CPU (50 % of one core), drawn as references in the run's panels."""
    limits = {"mem": 300 * 2**20, "mem_max": GIB, "cpu": 80.0, "cpu_max": 0.5, "throttled": 2.0, "oom_kill": 0,
              "pids": 3}
    lines = "\n".join(run_line(1000.2 + i, float(i), (100 + i) * 2**20, cgroup=limits) for i in range(20))
    cpu_panel, memory_panel = chart([folded(lines)]).panels[:2]
    assert [(curve.legend, curve.reference) for curve in cpu_panel.curves] == [
        ("run's CPU", False), ("CPU limit (cgroup)", True)]
    assert set(cpu_panel.curves[1].values) == {50.0}
    # The memory axis is chosen for the largest value it shows, the limit: GiB.
    assert [(curve.legend, curve.reference) for curve in memory_panel.curves] == [
        ("run's resident memory", False), ("memory limit (cgroup)", True)]
    assert memory_panel.label == "run memory\nGiB" and set(memory_panel.curves[1].values) == {1.0}


def test_ticks_read_naturally_for_30_seconds_and_for_a_day() -> None:
    short = chart([folded(command_run(30))])
    assert (short.ticks.unit, short.ticks.labels) == ("s", ("0", "5", "10", "15", "20", "25", "30"))
    assert short.ticks.seconds == (0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0)
    day = chart([folded(command_run(86400, interval=5.0), max_points=2000)])
    assert (day.ticks.unit, day.ticks.labels) == ("h", ("0", "4", "8", "12", "16", "20", "24"))
    assert day.ticks.seconds[1] == 4 * 3600.0
    # Elapsed time from the sampler's start (1000), whose first line comes 0.2 s after it. A day is thinned to
    # slots of 2^15 ms: lines from 1,000,200 to 87,400,200 ms then span slots 30 to 2,667, within 2 × 2,000 (at
    # 2^14, 61 to 5,334). Slot 30, from 983,040 to 1,015,808 ms, holds the lines at 1000.2 to 1015.2 s.
    assert short.panels[0].curves[0].x[0] == pytest.approx(0.2)
    assert day.panels[0].curves[0].x[0] == pytest.approx((0.2 + 15.2) / 2)
    assert day.span == pytest.approx(86400.2)


def test_the_title_names_the_command_its_start_its_length_and_how_it_ended() -> None:
    assert chart([folded(command_run(30))]).title == (
        "make -j4\nstarted 1970-01-01T00:16:40Z · 30.2 s · exit 0")
    assert chart([folded(command_run(30, code=3))]).title.endswith("exit 3")
    killed = command_run(5).replace('"exit": {"code": 0, "wall": 5.2}', '"exit": {"signal": 15, "wall": 5.2}')
    assert chart([folded(killed)]).title.endswith("· killed by SIGTERM")
    # A run without a command (`--pid`) is named by its file; nothing says how it ended. Its length is the
    # summary's: from its start to its last line.
    pid_run = "\n".join(run_line(1000.2 + i, 1.0, 2**20, dt=0.2 if i == 0 else 1.0) for i in range(3))
    assert chart([folded(pid_run)]).title == "run\nstarted 1970-01-01T00:16:40Z · 2.2 s"


def test_a_run_of_one_line_is_drawn_as_points_and_said() -> None:
    """A command over before a second line: each panel a point, its axis from 0 (not an empty panel), and a note."""
    line = run_line(1000.2, 40.0, 0, dt=0.2, run={"cpu": 40.0, "procs": 0, "command": ["true"],
                                                  "exit": {"code": 0, "wall": 0.1}})
    drawing = chart([folded(line)])
    assert drawing.notes == ("one line: drawn as points",)
    assert [panel.name for panel in drawing.panels][:2] == ["run cpu", "cpu"]  # the run's memory is 0: a note
    assert "run memory: run's resident memory 0 B" in drawing.flat
    assert all(len(curve.x) == 1 for panel in drawing.panels for curve in panel.curves)
    assert drawing.span == pytest.approx(0.2) and drawing.end > 0.21  # the point inside the frame, not on its edge
    figure = chart_figure(drawing)
    assert figure.axes[0].get_lines()[0].get_marker() == "o"
    assert figure.axes[0].get_xlim() == (0.0, drawing.end)
    assert figure.axes[0].get_ylim()[1] > drawing.panels[0].curves[0].values[0] == 80.0  # not on the top edge


def test_two_runs_in_one_file_are_two_series_never_joined() -> None:
    """Two samplers' lines in one file, an hour apart: a series each, each drawn from its own start (one over the
    other), labelled with its start; nothing joins the first run's last point to the second's first."""
    text = command_run(10, start=1000.0) + "\n" + command_run(20, start=4600.0, code=1)
    first, second = series_of(every_run([checked(text)], drawn=2), "a.jsonl")
    assert (first.start, first.lines, second.start, second.lines) == (1000.0, 11, 4600.0, 21)
    assert first.exit is not None and first.exit.code == 0 and second.exit is not None and second.exit.code == 1
    drawing = chart([first, second])
    cpu_curves = [curve for curve in drawing.panels[0].curves if curve.field == "run_cpu"]
    assert drawing.runs == ("a 00:16:40", "a 01:16:40")
    assert [(curve.legend, curve.colour) for curve in cpu_curves] == [("run's CPU", 0), ("run's CPU", 1)]
    assert [curve.x[0] for curve in cpu_curves] == [pytest.approx(0.2), pytest.approx(0.2)]
    assert drawing.title.startswith("2 runs in a.jsonl\neach from its own start")


def test_runs_that_ran_together_share_one_clock() -> None:
    """Two hosts' runs a few seconds apart (a fleet's instances) are drawn against the first one's start."""
    a = command_run(20, start=1000.0)
    b = command_run(20, start=1005.0).replace('"host": "h"', '"host": "g"')
    first, second = series_of(every_run([checked(a + "\n" + b)], drawn=2), "fleet.jsonl")
    x = [curve.x[0] for curve in chart([first, second]).panels[0].curves if curve.field == "run_cpu"]
    assert x == [pytest.approx(0.2), pytest.approx(5.2)]
    assert chart([first, second]).runs == ("fleet (h)", "fleet (g)")


def test_many_runs_draw_the_first_few_at_the_usual_size() -> None:
    """A file of 1,000 one-line runs (a sampler started by cron each minute): the first 6 are drawn, the title says
    how many there were and the notes how many are not drawn; the figure is the same size for 1,000 runs as for
    100,000, and but for that line of notes, as for the 6 alone."""
    lines = [run_line(1000.2 + 60 * n, 1.0, 2**20, start=1000.0 + 60 * n, dt=0.2, cpu=cpu(n % 10, 0, 0, 0, n % 10))
             for n in range(1000)]
    runs = every_run([checked("\n".join(lines))], drawn=6)
    assert len(runs) == 1000
    drawn_series = series_of(runs, "cron.jsonl")
    assert len(drawn_series) == 6 and [one.start for one in drawn_series] == [1000.0 + 60 * n for n in range(6)]
    many = chart(drawn_series, runs=1000)
    assert many.title.startswith("1,000 runs in cron.jsonl\n")
    assert "994 more runs not drawn (the first 6 are)" in many.notes
    assert len(many.runs) == 6
    more = chart(drawn_series, runs=100_000)
    assert (layout(many).width, layout(many).height) == (layout(more).width, layout(more).height)
    few = chart(drawn_series)
    assert layout(many).width == layout(few).width and layout(many).height - layout(few).height < 0.5


def test_lines_of_a_sampler_older_than_the_run_key_still_have_a_run_panel() -> None:
    """Without `run` but with a resident memory (an older `--pid` sampler): the run's memory panel holds it; its CPU
    panel has nothing to draw."""
    series = folded(RUN)
    assert [panel.name for panel in panels([series])][:3] == ["run cpu", "run memory", "cpu"]
    drawing = chart([series])
    assert [curve.legend for curve in drawing.panels[0].curves] == ["run's resident memory"]
    assert not [note for note in drawing.flat if note.startswith("run cpu")]  # nothing to draw is not flat


def test_without_a_run_the_host_panels_alone() -> None:
    plain = folded(sample(1.0, mem=mem(1000, 100, 0, 0)))
    assert [panel.name for panel in panels([plain])] == ["cpu", "memory", "disk", "io", "net"]
    assert panels([plain])[1].label == MEMORY.label


def test_a_run_where_nothing_moved_still_draws_the_run() -> None:
    still: dict[str, Any] = {"cpu": cpu(1.0, 0.0, 0.0, 0.0, 1.0), "mem": mem(8 * GIB, GIB, 0, 2**20)}
    lines = "\n".join(run_line(1000.2 + i, 1.0, 2**20, **still) for i in range(5))
    drawing = chart([folded(lines)])
    assert [panel.name for panel in drawing.panels] == ["run cpu", "run memory"]
    assert "cpu: user 1.0%, system 0.0%, iowait 0.0%, busiest core 1.0%" in drawing.flat


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_the_file_is_the_format_its_name_asks_for(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"run{suffix}"
    draw([folded(command_run(30))], str(path))
    data = path.read_bytes()
    if suffix == ".svg":
        assert data.lstrip().startswith(b"<?xml") and b"<svg" in data[:2000]
    else:
        assert data.startswith(MAGIC[suffix])


def test_panels_for_pressure_and_containers_only_when_present() -> None:
    plain = folded(sample(1.0))
    assert [panel.label for panel in panels([plain])] == ["host CPU\n% of all cores", "host memory\n{unit}",
                                                          "host disk\n%", "host io\n{unit}", "host net\n{unit}"]
    labels = [panel.name for panel in panels([plain, folded(RUN)])]
    assert labels[-2:] == ["pressure", "containers"]


def test_curves_of_several_runs_take_their_runs_colours() -> None:
    run, other = folded(RUN), folded(sample(1.0))
    both = drawn(CONTAINERS, [replace(run, name="m/run.jsonl"), replace(other, name="n/other.jsonl")])
    assert [(curve.instance, curve.index, curve.legend, curve.colour) for curve in both] == [
        (0, 0, "db", 0), (0, 1, "web", 0)]
    assert title([replace(run, name="m/run.jsonl"), replace(other, name="n/other.jsonl")]).startswith("2 runs\n")


def test_orca_metrics_plot_draws_several_instances(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(RUN)
    (tmp_path / "b.jsonl").write_text(sample(102.0) + "\n" + sample(107.0) + "\n")
    chart_file = tmp_path / "run.png"
    done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", str(tmp_path), "--plot", str(chart_file)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert chart_file.read_bytes().startswith(MAGIC[".png"])
    assert f"drew {chart_file}" in done.stderr


def test_the_chart_draws_the_containers_of_the_highest_peak_only() -> None:
    """A line per container, 300 of them, `mem` its number: the chart keeps the 20 largest (280 to 299), and says
    so, in memory that does not grow with the containers."""
    fold = RunFold(drawn=True)
    for n in range(300):
        fold.add(checked(sample(float(n), containers=[{"name": f"c{n:03d}", "mem": n}])))
    series = fold.series("many")
    assert series is not None
    assert sorted(series.keyed["containers"]) == [f"c{n:03d}" for n in range(280, 300)]
    assert series.omitted["containers"] == (280, True)
    [panel] = [panel for panel in panels([series]) if panel.name == "containers"]
    assert panel.label == "containers'\nmemory {unit} (the 20 largest of 300)"


def test_long_legends_and_notes_stay_inside_the_figure() -> None:
    """Two runs of a file deep in directories, labelled with its name and their starts: every legend and line of
    text is drawn inside the figure and beside the panels, over none (matplotlib measures them)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    name = "/var/lib/orca/runs/" + "a-rather-long-directory-name/" * 3 + "nightly-etl-of-the-warehouse.jsonl"
    text = command_run(10, start=1000.0) + "\n" + command_run(20, start=4600.0, code=1)
    drawing = chart(series_of(every_run([checked(text)], drawn=2), name), runs=5)
    figure = chart_figure(drawing)
    canvas: Any = FigureCanvasAgg(figure)  # matplotlib declares no types for its drawing
    canvas.draw()
    renderer = canvas.get_renderer()
    inside = figure.bbox
    legends = [axis.get_legend() for axis in figure.axes if axis.get_legend() is not None] + figure.legends
    assert legends and drawing.flat and drawing.notes
    assert figure.texts  # the title (with one run) and the notes
    for artist in [*legends, *figure.texts]:
        box = artist.get_window_extent(renderer)
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1, artist
        assert not any(box.overlaps(axis.bbox) for axis in figure.axes), artist  # nor over a panel


def test_the_chart_quotes_a_command_as_the_summary_does() -> None:
    """One way of quoting a command's words, `shlex`'s: a word with letters beyond ASCII is quoted in both."""
    words = ("python3", "-c", "print('hé')", "café", "a b", "", "x=1,y=2")
    drawn = Series("r.jsonl", (), {}, start=0.0, first=0.0, last=1.0, command=words)
    assert title([drawn]).split("\n")[0] == shlex.join(words)
