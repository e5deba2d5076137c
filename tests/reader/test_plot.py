"""The chart: the series it is drawn from hold the lines' values (thinned by means on a long run), and the file
written is the format its name asks for."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from orca.sample.compute.report.panels import CONTAINERS, MEMORY, drawn, panels, title
from orca.sample.compute.report.series import FIELDS, SeriesFold
from orca.sample.line_format import Sample
from orca.sample.parse.sample_line import decode_all
from orca.sample.shell.readback.plot import draw
from tests.reader.hand_worked import RUN, cpu, sample

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-"}


def checked(text: str) -> list[Sample]:
    return decode_all(text.encode().splitlines())[0]


def same(values: tuple[float, ...], expected: list[float]) -> bool:
    return len(values) == len(expected) and all(
        (math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(values, expected, strict=True)
    )


def test_the_series_hold_the_lines_values() -> None:
    fold = SeriesFold()
    for line in checked(RUN):
        fold.add(line)
    series = fold.series("run")
    nan = math.nan
    assert series.t == (100.0, 105.0, 110.0, 125.0, 130.0)
    assert series.lines_per_point == 1
    assert same(series.values["cpu_user"], [10.0, 20.0, 50.0, nan, 5.0])
    assert same(series.values["cpu_busiest"], [40.0, 60.0, 90.0, nan, 20.0])
    assert same(series.values["mem_used"], [100, 300, 250, 400, 350])
    assert same(series.values["mem_total"], [1000, 1000, 1000, 1000, 500])
    # The fullest disk of each line: /a 1 of 4; none; /b 3 of 4; none; /a 3 of 4.
    assert same(series.values["disk_percent"], [25.0, nan, 75.0, nan, 75.0])
    assert same(series.values["io_read"], [100, 200, nan, nan, nan])
    assert same(series.values["net_out"], [nan, nan, 20, nan, nan])
    assert same(series.values["pressure_io"], [nan, 4.0, nan, nan, nan])
    assert set(series.containers) == {"db", "web"}
    assert same(series.containers["db"], [100, 300, nan, 200, 10])
    assert set(series.values) == set(FIELDS)


def test_a_long_run_is_thinned_to_means() -> None:
    """Ten lines, user = t, at most 2 × 2 points held: pairs merge when a fifth point would start, twice, leaving
    points of lines 0-3, 4-7 and 8-9, whose means are 1.5, 5.5 and 8.5."""
    fold = SeriesFold(max_points=2)
    for t in range(10):
        fold.add(checked(sample(float(t), cpu=cpu(float(t), 0.0, 0.0, 0.0, 0.0)))[0])
    series = fold.series("long")
    assert series.t == (1.5, 5.5, 8.5)
    assert series.values["cpu_user"] == (1.5, 5.5, 8.5)
    assert series.lines_per_point == 4


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_the_file_is_the_format_its_name_asks_for(tmp_path: Path, suffix: str) -> None:
    fold = SeriesFold()
    for line in checked(RUN):
        fold.add(line)
    path = tmp_path / f"run{suffix}"
    draw([fold.series("run")], str(path))
    data = path.read_bytes()
    if suffix == ".svg":
        assert data.lstrip().startswith(b"<?xml") and b"<svg" in data[:2000]
    else:
        assert data.startswith(MAGIC[suffix])


def test_panels_for_pressure_and_containers_only_when_present() -> None:
    plain = SeriesFold()
    plain.add(checked(sample(1.0))[0])
    labels = [panel.label for panel in panels([plain.series("plain")])]
    assert labels == ["CPU %", "memory GiB", "disk %", "io MiB/s", "net MiB/s"]
    full = SeriesFold()
    for line in checked(RUN):
        full.add(line)
    labels = [panel.label for panel in panels([plain.series("plain"), full.series("run")])]
    assert labels[-2:] == ["pressure % stalled", "containers' mem GiB"]


def test_curves_in_the_panels_unit_labelled_by_instance_when_several() -> None:
    run = SeriesFold()
    for line in checked(RUN):
        run.add(line)
    alone = drawn(MEMORY, [run.series("m/run.jsonl")])
    # used 100, 300, 250, 400, 350 bytes, in GiB; total drawn as a reference line.
    assert [(curve.legend, curve.reference) for curve in alone] == [("used", False), ("cache", False),
                                                                     ("run's rss", False), ("total", True)]
    assert alone[0].values == tuple(used / 2**30 for used in (100, 300, 250, 400, 350))
    other = SeriesFold()
    other.add(checked(sample(1.0))[0])
    both = drawn(CONTAINERS, [run.series("m/run.jsonl"), other.series("n/other.jsonl")])
    assert [(curve.instance, curve.index, curve.legend) for curve in both] == [(0, 0, "run.jsonl: db"),
                                                                                (0, 1, "run.jsonl: web")]
    assert title([run.series("m/run.jsonl"), other.series("n/other.jsonl")]) == "run.jsonl, other.jsonl"
    long = SeriesFold(max_points=2)
    for t in range(10):
        long.add(checked(sample(float(t)))[0])
    assert title([long.series("long")]) == "long  (each point the mean of up to 4 lines)"


def test_orca_metrics_plot_draws_several_instances(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(RUN)
    (tmp_path / "b.jsonl").write_text(sample(102.0) + "\n" + sample(107.0) + "\n")
    chart = tmp_path / "run.png"
    done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", str(tmp_path), "--plot", str(chart)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert chart.read_bytes().startswith(MAGIC[".png"])
    assert f"drew {chart}" in done.stderr


def test_the_chart_draws_the_containers_of_the_highest_peak_only() -> None:
    """A line per container, 300 of them, `mem` its number: the chart keeps the 20 largest (280 to 299), and says
    so, in memory that does not grow with the containers."""
    fold = SeriesFold()
    for n in range(300):
        fold.add(checked(sample(float(n), containers=[{"name": f"c{n:03d}", "mem": n}]))[0])
    series = fold.series("many")
    assert sorted(series.containers) == [f"c{n:03d}" for n in range(280, 300)]
    assert series.containers_omitted == 280
    [panel] = [panel for panel in panels([series]) if not panel.curves]
    assert panel.label == "containers' mem GiB (the 20 largest of 300)"
