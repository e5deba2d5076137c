"""The chart, checked as data (the series, panels, curves, ticks and title it is drawn from), and the files it is drawn
to: a point holds the mean of its lines' shares and rates, the peak of their memory, the newest of their limits;
the run's panel comes first; flat panels are left out and said; two runs are never joined."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orca.sample.line_format import Sample
from orca.sample.parse.sample_line import decode_all
from orca.sample.readback.chart.panels import CONTAINERS, MEMORY, Chart, DrawnPanel, chart, drawn, panels
from orca.sample.readback.chart.run_series import RunSeries, run_series
from orca.sample.readback.chart.series import FIELDS, Series, SeriesFold
from orca.sample.readback.chart.titles import title
from orca.sample.readback.shell.plot import draw
from tests.reader.hand_worked import RUN, cpu, mem, sample

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-"}
GIB = 2**30
nan = math.nan


def checked(text: str) -> list[Sample]:
    return decode_all(text.encode().splitlines())[0]


def same(values: tuple[float, ...], expected: list[float]) -> bool:
    return len(values) == len(expected) and all(
        (math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(values, expected, strict=True)
    )


def folded(text: str, max_points: int = 2000) -> Series:
    fold = SeriesFold(max_points)
    fold.add_lines(checked(text))
    return fold.series("run")


def by_label(drawing: Chart) -> dict[str, DrawnPanel]:
    return {panel.label: panel for panel in drawing.panels}


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
    assert set(series.containers) == {"db", "web"}
    assert same(series.containers["db"], [100, 300, nan, nan, 200, 10])
    assert set(series.values) == set(FIELDS)


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
    10 MiB a second; `more` adds to (or replaces) its sections."""
    used = 2 * GIB + int(t - start) % 300 * 10 * 2**20
    sections: dict[str, Any] = {
        "cpu": cpu(50.0 + (t % 7), 5.0, 0.0, 0.0, 90.0), "mem": mem(8 * GIB, used, 0, rss),
        "disk": [{"path": "/tmp", "total": 100 * GIB, "used": 30 * GIB, "free": 70 * GIB}],
        "io": {"read": 0, "write": 0}, "net": {"in": 0, "out": 0}, "self_cpu": 0.1,
        "run": {"cpu": cpu_share, "procs": 2}, "start": start, **more}
    return sample(t, **sections)


def command_run(seconds: int, interval: float = 1.0, start: float = 1000.0, code: int = 0) -> str:
    """A run of `seconds` at `interval`: its first line names the command, its last says it exited with `code`."""
    count = int(seconds / interval)
    lines = []
    for i in range(count + 1):
        t = start + 0.2 + i * interval
        run: dict[str, Any] = {"cpu": float(i % 50), "procs": 2}
        if i == 0:
            run["command"] = ["make", "-j4"]
        if i == count:
            run["exit"] = {"code": code, "wall": seconds + 0.2}
        lines.append(run_line(t, 0.0, (100 + i % 400) * 2**20, start, run=run))
    return "\n".join(lines)


def test_the_run_comes_first_on_axes_of_its_own() -> None:
    """The run's CPU on the left axis (in percent of all cores), its resident memory on the right (in MiB, its own
    scale: not the host's 8 GiB); the host's memory below it without its total, since the host used under half."""
    drawing = chart([folded(command_run(30))])
    first = drawing.panels[0]
    assert (first.label, first.right_label) == ("run's CPU % of 2 cores", "run's memory MiB")
    assert [(curve.legend, curve.right, curve.reference) for curve in first.curves] == [
        ("run's CPU", False, False), ("run's resident memory", True, False)]
    assert max(first.curves[1].values) == 130.0  # MiB: 100 + 30 at the last line
    memory = by_label(drawing)["host memory GiB"]
    assert [curve.legend for curve in memory.curves] == ["used (of 8.00 GiB)", "cache"]


def test_flat_panels_are_left_out_and_said() -> None:
    """The disk stays at 30 %, io and net at 0: not drawn, one note each; the host's CPU and memory moved."""
    drawing = chart([folded(command_run(30))])
    assert [panel.label for panel in drawing.panels] == ["run's CPU % of 2 cores", "host CPU %", "host memory GiB"]
    assert drawing.notes == ("disk: fullest file system 30.0%", "io: read 0 B/s, write 0 B/s",
                             "net: in 0 B/s, out 0 B/s")


def test_under_a_cgroup_limit_the_limits_are_the_run_panels_reference_lines() -> None:
    """A limit of 1 GiB and of 0.5 CPU (of 2 cores: 25 % of all of them), drawn as references in the run's panel."""
    limits = {"mem": 300 * 2**20, "mem_max": GIB, "cpu": 80.0, "cpu_max": 0.5, "throttled": 2.0, "oom_kill": 0,
              "pids": 3}
    lines = "\n".join(run_line(1000.2 + i, float(i), (100 + i) * 2**20, cgroup=limits) for i in range(20))
    first = chart([folded(lines)]).panels[0]
    assert [(curve.legend, curve.right, curve.reference) for curve in first.curves] == [
        ("run's CPU", False, False), ("CPU limit (cgroup)", False, True),
        ("run's resident memory", True, False), ("memory limit (cgroup)", True, True)]
    assert set(first.curves[1].values) == {25.0}
    # The memory axis is chosen for the largest value it shows, the limit: GiB.
    assert first.right_label == "run's memory GiB" and set(first.curves[3].values) == {1.0}


def test_ticks_read_naturally_for_30_seconds_and_for_a_day() -> None:
    short = chart([folded(command_run(30))])
    assert (short.ticks.unit, short.ticks.labels) == ("s", ("0", "5", "10", "15", "20", "25", "30"))
    assert short.ticks.seconds == (0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0)
    day = chart([folded(command_run(86400, interval=5.0))])
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
    # A run without a command (`--pid`) is named by its file; nothing says how it ended.
    pid_run = "\n".join(run_line(1000.2 + i, 1.0, 2**20) for i in range(3))
    assert chart([folded(pid_run)]).title == "run\nstarted 1970-01-01T00:16:40Z · 2.2 s"


def test_two_runs_in_one_file_are_two_series_never_joined() -> None:
    """Two samplers' lines in one file, an hour apart: a series each, each drawn from its own start (one over the
    other), labelled with its start; nothing joins the first run's last point to the second's first."""
    text = command_run(10, start=1000.0) + "\n" + command_run(20, start=4600.0, code=1)
    runs = run_series([checked(text)])
    first, second = runs.series("a.jsonl")
    assert (first.start, first.lines, second.start, second.lines) == (1000.0, 11, 4600.0, 21)
    assert first.exit is not None and first.exit.code == 0 and second.exit is not None and second.exit.code == 1
    drawing = chart([first, second])
    cpu_curves = [curve for curve in drawing.panels[0].curves if curve.field == "run_cpu"]
    assert [curve.legend for curve in cpu_curves] == ["a.jsonl 00:16:40: run's CPU", "a.jsonl 01:16:40: run's CPU"]
    assert [curve.x[0] for curve in cpu_curves] == [pytest.approx(0.2), pytest.approx(0.2)]
    assert drawing.title.startswith("a.jsonl 00:16:40, a.jsonl 01:16:40\neach from its own start")


def test_runs_that_ran_together_share_one_clock() -> None:
    """Two hosts' runs a few seconds apart (a fleet's instances) are drawn against the first one's start."""
    a = command_run(20, start=1000.0)
    b = command_run(20, start=1005.0).replace('"host": "h"', '"host": "g"')
    first, second = run_series([checked(a + "\n" + b)]).series("fleet.jsonl")
    assert (first.name, second.name) == ("fleet.jsonl (h)", "fleet.jsonl (g)")
    x = [curve.x[0] for curve in chart([first, second]).panels[0].curves if curve.field == "run_cpu"]
    assert x == [pytest.approx(0.2), pytest.approx(5.2)]


def test_lines_of_a_sampler_older_than_the_run_key_still_have_a_run_panel() -> None:
    """Without `run` but with a resident memory (an older `--pid` sampler): the run's panel holds its memory."""
    series = folded(RUN)
    assert panels([series])[0].name == "run"
    first = chart([series]).panels[0]
    assert [curve.legend for curve in first.curves] == ["run's resident memory"]


def test_without_a_run_the_host_panels_alone() -> None:
    plain = folded(sample(1.0, mem=mem(1000, 100, 0, 0)))
    assert [panel.name for panel in panels([plain])] == ["cpu", "memory", "disk", "io", "net"]
    assert panels([plain])[1].label == MEMORY.label


def test_a_run_where_nothing_moved_still_draws_the_run() -> None:
    still: dict[str, Any] = {"cpu": cpu(1.0, 0.0, 0.0, 0.0, 1.0), "mem": mem(8 * GIB, GIB, 0, 2**20)}
    lines = "\n".join(run_line(1000.2 + i, 1.0, 2**20, **still) for i in range(5))
    drawing = chart([folded(lines)])
    assert [panel.label for panel in drawing.panels] == ["run's CPU % of 2 cores"]
    assert "cpu: user 1.0%, system 0.0%, iowait 0.0%, busiest core 1.0%" in drawing.notes


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
    assert [panel.label for panel in panels([plain])] == ["CPU %", "memory {unit}", "disk %", "io {unit}",
                                                          "net {unit}"]
    labels = [panel.name for panel in panels([plain, folded(RUN)])]
    assert labels[-2:] == ["pressure", "containers"]


def test_curves_labelled_by_instance_when_several() -> None:
    run = SeriesFold()
    run.add_lines(checked(RUN))
    other = SeriesFold()
    other.add(checked(sample(1.0))[0])
    both = drawn(CONTAINERS, [run.series("m/run.jsonl"), other.series("n/other.jsonl")])
    assert [(curve.instance, curve.index, curve.legend) for curve in both] == [(0, 0, "run.jsonl: db"),
                                                                                (0, 1, "run.jsonl: web")]
    assert title([run.series("m/run.jsonl"), other.series("n/other.jsonl")]).startswith("run.jsonl, other.jsonl")


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
    fold = RunSeries()
    for n in range(300):
        fold.add(checked(sample(float(n), containers=[{"name": f"c{n:03d}", "mem": n}])))
    [series] = fold.series("many")
    assert sorted(series.containers) == [f"c{n:03d}" for n in range(280, 300)]
    assert series.containers_omitted == 280
    [panel] = [panel for panel in panels([series]) if panel.name == "containers"]
    assert panel.label == "containers' memory {unit} (the 20 largest of 300)"


def test_long_legends_and_notes_stay_inside_the_figure() -> None:
    """Two runs of a file deep in directories, labelled with its name and their starts: the figure grows to the right
    for the legends, wraps the notes, and every legend and line of text is drawn inside it (matplotlib measures
    them)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from orca.sample.readback.shell.plot import chart_figure

    name = "/var/lib/orca/runs/" + "a-rather-long-directory-name/" * 3 + "nightly-etl-of-the-warehouse.jsonl"
    text = command_run(10, start=1000.0) + "\n" + command_run(20, start=4600.0, code=1)
    drawing = chart(run_series([checked(text)]).series(name))
    figure = chart_figure(drawing, 2)
    canvas: Any = FigureCanvasAgg(figure)  # matplotlib declares no types for its drawing
    canvas.draw()
    renderer = canvas.get_renderer()
    inside = figure.bbox
    legends = [axis.get_legend() for axis in figure.axes if axis.get_legend() is not None]
    assert legends and drawing.notes
    for artist in [*legends, *figure.texts]:
        box = artist.get_window_extent(renderer)
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1, artist
    assert figure.get_figwidth() > 11.0
