"""The fleet chart as data (docs/metrics.md, "A fleet"): its rows and their order, each run's heat map row, and the
fleet's CPUs and memory over time, from synthetic fleets built from real lines; then the drawing's size, which does
not depend on the number of runs. Expected figures are worked out from the captured lines with json."""

from __future__ import annotations

import math
import struct
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from orca.sample.readback.chart.ticks import elapsed_ticks
from orca.sample.readback.fleet.chart import COLUMNS, FleetChart, fleet_chart, named
from orca.sample.readback.fleet.table import fleet_table
from orca.sample.readback.shell.fleet_read import read_fleet_source
from orca.sample.readback.shell.sources import sources
from tests.fleet.fleets import capture, mixed, write_fleet
from tests.fleet.test_fleet import COUNT, IDLE, KINDS, NAMES, OOM, SATURATED, STRAGGLER, worked

FIT = 24
"""Labels that fit beside a heat map, for `named`."""


def chart_of(directory: Path, sort: str = "name") -> FleetChart:
    """The chart of the fleet at `directory`, read as `orca metrics --plot` reads it: each run's usage with its
    buckets."""
    runs = [run for source in sources(str(directory))
            for run in read_fleet_source(source, drawn=0, buckets=True).runs]
    return fleet_chart(fleet_table(runs, sort=sort), [run.usage for run in runs])


@pytest.fixture(scope="module")
def chart(tmp_path_factory: pytest.TempPathFactory) -> FleetChart:
    directory = tmp_path_factory.mktemp("fleet")
    write_fleet(directory, KINDS)
    return chart_of(directory)


def column_at(chart: FleetChart, seconds: float) -> int:
    return int(seconds / chart.column_seconds)


def test_a_row_per_run_in_the_tables_order(chart: FleetChart, tmp_path: Path) -> None:
    assert chart.labels == tuple(NAMES)
    assert len(chart.cpu) == len(chart.memory) == COUNT
    assert all(len(row) == COLUMNS for row in (*chart.cpu, *chart.memory))
    write_fleet(tmp_path, KINDS)
    by_cpu = chart_of(tmp_path, sort="cpu")
    assert by_cpu.labels[0] == SATURATED and by_cpu.labels[-1] == IDLE
    # Every row, when they all fit: each named, with its first flag.
    every = named(chart, FIT)
    assert [index for index, _ in every] == list(range(COUNT))
    assert dict(every)[NAMES.index(OOM)] == "saturated" and dict(every)[NAMES.index(IDLE)] == "idle"
    assert chart.title.startswith(f"{COUNT} runs · started 2026-12-03T16:26:21Z · ")


def test_each_runs_row_over_the_fleets_time(chart: FleetChart) -> None:
    rows = dict(zip(chart.labels, chart.cpu, strict=True))
    late = column_at(chart, 30.0)  # only the straggler (40 s) still ran
    assert math.isfinite(rows[STRAGGLER][late])
    assert all(math.isnan(row[late]) for label, row in rows.items() if label != STRAGGLER)
    # Killed 7.1 s after its start: nothing after about 8 s.
    assert all(math.isnan(value) for value in rows[OOM][column_at(chart, 8.5):])
    assert max(value for value in rows[IDLE] if math.isfinite(value)) <= 10.0
    # The saturated run, past its first second: at the 1-CPU quota but for the machine's other work.
    middle = rows[SATURATED][column_at(chart, 2.0):column_at(chart, 18.0)]
    assert min(middle) > 45.0 and max(middle) <= 100.0
    memory = dict(zip(chart.labels, chart.memory, strict=True))
    oom_peak = worked("oom")["memory_peak"]
    assert max(value for value in memory[OOM] if math.isfinite(value)) == pytest.approx(oom_peak, abs=8.0)


def test_the_fleets_totals_count_every_cpu_second_once(chart: FleetChart) -> None:
    """Added over the columns, the fleet's CPUs and memory are the runs' CPU-seconds and byte-seconds, however their
    buckets fell across the columns."""
    figures = [worked(kind) for kind in KINDS]
    seconds = chart.column_seconds
    assert sum(chart.cores_busy) * seconds == pytest.approx(sum(figure["core_seconds"] for figure in figures))
    assert sum(chart.cores_available) * seconds == pytest.approx(
        sum(figure["core_seconds_available"] for figure in figures))
    assert sum(chart.memory_used) * seconds == pytest.approx(sum(figure["byte_seconds"] for figure in figures))
    # 10 s in, every run but the OOM-killed one had its 1 CPU and 512 MiB.
    middle = column_at(chart, 10.0)
    assert chart.cores_available[middle] == pytest.approx(COUNT - 1, abs=0.05)
    assert chart.memory_available[middle] == pytest.approx((COUNT - 1) * 512 * 2**20, rel=0.005)
    # 30 s in, the straggler alone.
    assert chart.cores_available[column_at(chart, 30.0)] == pytest.approx(1.0, abs=0.05)


def test_a_large_fleet_names_its_flagged_runs_only(tmp_path: Path) -> None:
    write_fleet(tmp_path, mixed(40))
    chart = chart_of(tmp_path)
    assert len(chart.labels) == 40 > FIT
    assert [(chart.labels[index], flag) for index, flag in named(chart, FIT)] == [
        ("worker-008", "idle"), ("worker-016", "saturated"), ("worker-024", "saturated"), ("worker-039", "straggler")]
    assert chart.notes == ("saturated 2: worker-016, worker-024",
                           "failed 1: worker-024 (killed by SIGKILL after 7.5 s, 1 OOM kill)",
                           "straggler 1: worker-039", "idle 1: worker-008")


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height, from its IHDR chunk."""
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


def test_the_drawing_is_one_size_whatever_the_number_of_runs(tmp_path: Path) -> None:
    sizes = []
    for count in (6, 60):
        directory = tmp_path / str(count)
        write_fleet(directory, mixed(count))
        drawn = tmp_path / f"{count}.png"
        done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", str(directory), "--plot", str(drawn)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        sizes.append(png_size(drawn))
    assert sizes[0] == sizes[1] == (1080, 810)  # 12 x 9 inches at 90 dots per inch
    # Five runs or fewer are overlaid, as a run's chart is: a figure whose size follows its panels.
    few = tmp_path / "few"
    write_fleet(few, ["busy", "idle"])
    done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", str(few), "--plot", str(tmp_path / "2.png")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert png_size(tmp_path / "2.png") != sizes[0]


def test_the_first_capture_is_what_the_fixtures_say() -> None:
    """The captures are real: each under the 1-CPU, 512 MiB limits the capture script set."""
    for kind in ("busy", "idle", "saturated", "oom", "straggler"):
        assert {(line["cgroup"]["cpu_max"], line["cgroup"]["mem_max"]) for line in capture(kind)} == {(1.0, 2**29)}


@pytest.mark.parametrize("count", [25, 100, 1000])
def test_labels_fit_flagged_first_and_never_overlap(count: int) -> None:
    """As many labels as fit beside a heat map (here 13), none closer to another than the rows one label's height
    covers; the flagged rows first, by `NAMED_FIRST`."""
    flags = ["" if index % 3 else ("idle" if index % 2 else "failed") for index in range(count)]
    candidates = (*[(index, flag) for flag in ("failed", "idle") for index in range(count) if flags[index] == flag],
                  *[(index, "") for index in range(count) if not flags[index]])
    drawing = FleetChart(0.0, 1.0, ("w",) * count, (), (), (), (), (), (), candidates, "", (),
                         elapsed_ticks(1.0))
    chosen = named(drawing, 13)
    assert 0 < len(chosen) <= 13
    assert all(flag for _, flag in chosen)  # more rows than labels: flagged ones only
    places = [index for index, _ in chosen]
    assert all(later - earlier >= count / 13 for earlier, later in pairwise(places))
    failed = sum(1 for _, flag in chosen if flag == "failed")
    assert failed >= len(chosen) // 2  # the failed ones were taken first


def test_every_row_is_named_when_every_label_fits() -> None:
    drawing = FleetChart(0.0, 1.0, ("w",) * 5, (), (), (), (), (), (), tuple((index, "") for index in range(5)), "",
                         (), elapsed_ticks(1.0))
    assert named(drawing, 13) == tuple((index, "") for index in range(5))


def test_every_legend_label_and_note_is_inside_the_figure(tmp_path: Path) -> None:
    """The heat maps' labels, the colour bar's label, the totals' legends beside them, the title and the notes: each
    drawn inside the figure (matplotlib measures them)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from orca.sample.readback.shell.fleet_plot import fleet_figure

    write_fleet(tmp_path, mixed(60))
    figure = fleet_figure(chart_of(tmp_path))
    canvas: Any = FigureCanvasAgg(figure)  # matplotlib declares no types for its drawing
    canvas.draw()
    renderer = canvas.get_renderer()
    legends = [axis.get_legend() for axis in figure.axes if axis.get_legend() is not None]
    labels = [axis.yaxis.label for axis in figure.axes] + [label for axis in figure.axes
                                                          for label in axis.get_yticklabels()]
    assert legends and len(figure.texts) == 2  # the title and the notes
    inside = figure.bbox
    for artist in [*legends, *labels, *figure.texts]:
        box = artist.get_window_extent(renderer)
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1, artist
