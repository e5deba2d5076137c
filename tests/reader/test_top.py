"""The run's top processes and its own disk I/O read back (docs/metrics.md): the summary names the processes that used
the most, grouped by name (how many, their memory peak together, CPU seconds, bytes moved), and the run's own read
and write beside the host's; `--json` holds the same; the chart draws the top names' memory and CPU in the run's
panels, and the run's io in a panel of its own. Lines written by hand, figures worked out by hand from them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from orca.sample.readback.chart.panels import TOP_DRAWN, chart, panels
from orca.sample.readback.gather.fold import RunFold
from orca.sample.readback.gather.records import IoSummary, ProcessSummary
from orca.sample.readback.gather.top import TOP_NAMES
from orca.sample.readback.summary.text import block_text
from tests.reader.folding import checked, folded
from tests.reader.hand_worked import mem, sample
from tests.reader.test_metrics_command import orca

GIB, MIB = 2**30, 2**20
nan = math.nan


def top(pid: int, name: str, cpu: float, rss: int | None, read: int = 0, write: int = 0) -> dict[str, Any]:
    return {"pid": pid, "name": name, "cpu": cpu, "rss": rss, "read": read, "write": write}


# Lines 5 s apart on 2 cores (`hand_worked.sample`). Two java processes and a sleeper, then one java and the sleeper
# (whose statm could not be read), then a line of a sampler older than `run.io` and `run.top`.
LINES = "\n".join([
    sample(100.0, io={"read": 5000, "write": 9000}, mem=mem(8 * GIB, 4 * GIB, 0, 3 * GIB // 2 + MIB), run={
        "cpu": 50.0, "procs": 3, "io": {"read": 0, "write": 1000},
        "top": [top(10, "java", 25.0, GIB, write=1000), top(11, "java", 10.0, GIB // 2, read=100),
                top(12, "sleep", 0.0, MIB)]}),
    sample(105.0, mem=mem(8 * GIB, 4 * GIB, 0, 5 * GIB // 4 + MIB), run={
        "cpu": 40.0, "procs": 2, "io": {"read": 200, "write": 3000},
        "top": [top(10, "java", 40.0, 5 * GIB // 4, read=200, write=3000), top(12, "sleep", 0.0, None)]}),
    sample(110.0, run={"cpu": 10.0, "procs": 1}),
])
# By hand: java is pids 10 and 11; together 1.5 GiB in the first line, 1.25 GiB in the second; CPU (25 + 10) % of
# 2 cores for 5 s = 3.5 s, then 40 % = 4.0 s; read 100 B/s × 5 s + 200 × 5 = 1,500 B; written 1,000 × 5 + 3,000 × 5.
JAVA = ProcessSummary("java", 2, 3 * GIB // 2, 7.5, 1500, 20000)
SLEEP = ProcessSummary("sleep", 1, MIB, 0.0, 0, 0)
# The run's own: read 0 × 5 + 200 × 5, written 1,000 × 5 + 3,000 × 5; the host's: its one line's rates × 5 s.
RUN_IO = IoSummary(1000, 20000, 200, 3000)
HOST_IO = IoSummary(25000, 45000, 5000, 9000)


def summary_of(text: str) -> Any:
    fold = RunFold()
    fold.add(checked(text))
    return fold.summary("run.jsonl")


def test_the_summary_names_the_top_processes_by_name_and_the_runs_own_io_beside_the_hosts() -> None:
    summary = summary_of(LINES)
    assert summary.top == (JAVA, SLEEP)
    assert summary.run.io == RUN_IO
    assert summary.io == HOST_IO


def test_the_names_of_the_most_memory_come_first_then_those_of_the_most_cpu() -> None:
    """Seven names, each smaller than the one before in memory, the last the busiest: the `TOP_NAMES` of the most
    memory, then the busiest, which is not among them; the sixth name, neither, is not named."""
    entries = [top(pid, f"p{pid}", 1.0, (10 - pid) * MIB) for pid in range(1, 7)] + [top(7, "spin", 50.0, MIB // 2)]
    summary = summary_of(sample(100.0, run={"cpu": 60.0, "procs": 7, "top": entries}))
    assert [process.name for process in summary.top] == [f"p{pid}" for pid in range(1, TOP_NAMES + 1)] + ["spin"]
    assert summary.top[-1] == ProcessSummary("spin", 1, MIB // 2, 5.0, 0, 0)  # 50 % of 2 cores for 5 s


def test_lines_without_a_top_have_none_and_no_run_io() -> None:
    summary = summary_of(sample(100.0, run={"cpu": 10.0, "procs": 1}))
    assert summary.top is None and summary.run.io is None
    assert "\n  process " not in block_text(summary) and "\n  run io " not in block_text(summary)


def test_a_fold_in_parts_is_the_fold_of_all() -> None:
    lines = checked(LINES)
    first, second = RunFold(), RunFold()
    first.add(lines[:1])
    second.add(lines[1:])
    first.merge(second)
    merged = first.summary("run.jsonl")
    assert merged is not None and merged.top == (JAVA, SLEEP) and merged.run is not None
    assert merged.run.io == RUN_IO


def test_the_text_has_the_runs_io_and_its_processes_rows_and_the_hosts_io_labelled() -> None:
    rows = block_text(summary_of(LINES)).splitlines()
    assert "  run io         read 1000 B (peak 200 B/s)  write 19.53 KiB (peak 2.93 KiB/s)" in rows
    assert "  process        java ×2: peak 1.50 GiB, 7.5 CPU-s, read 1.46 KiB, write 19.53 KiB" in rows
    assert "  process        sleep: peak 1.00 MiB, 0.0 CPU-s" in rows
    assert "  host io        read 24.41 KiB (peak 4.88 KiB/s)  write 43.95 KiB (peak 8.79 KiB/s)" in rows
    labels = [row[2:16].strip() for row in rows[1:]]
    assert labels.index("run io") < labels.index("process") < labels.index("time") < labels.index("host io")


def test_json_has_the_top_processes_and_the_runs_io(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(LINES + "\n")
    (document,) = [json.loads(text) for text in orca("metrics", "--json", str(path)).stdout.splitlines()]
    assert document["top"] == [
        {"name": "java", "count": 2, "mem_peak": 3 * GIB // 2, "cpu_seconds": 7.5, "read": 1500, "write": 20000},
        {"name": "sleep", "count": 1, "mem_peak": MIB, "cpu_seconds": 0.0, "read": 0, "write": 0},
    ]
    assert document["run"]["io"] == {"read": 1000, "write": 20000, "read_peak": 200, "write_peak": 3000}
    assert document["io"] == {"read": 25000, "write": 45000, "read_peak": 5000, "write_peak": 9000}


def same(values: tuple[float, ...], expected: list[float]) -> bool:
    return len(values) == len(expected) and all(
        (math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(values, expected, strict=True))


def test_the_series_hold_each_names_memory_and_cpu_and_the_runs_io() -> None:
    """One line a point: each name's processes together at each reading, CPU in percent of one core."""
    series = folded(LINES)
    assert set(series.keyed["top_mem"]) == set(series.keyed["top_cpu"]) == {"java", "sleep"}
    assert same(series.keyed["top_mem"]["java"], [3 * GIB // 2, 5 * GIB // 4, nan])
    assert same(series.keyed["top_mem"]["sleep"], [MIB, nan, nan])
    assert same(series.keyed["top_cpu"]["java"], [70.0, 80.0, nan])  # (25 + 10) % and 40 % of 2 cores
    assert same(series.values["run_io_read"], [0, 200, nan])
    assert same(series.values["run_io_write"], [1000, 3000, nan])


def test_the_runs_panels_draw_its_top_names_beside_its_own_curves_and_its_io() -> None:
    drawing = chart([folded(LINES)])
    run_panels = {panel.name: [curve.legend for curve in panel.curves] for panel in drawing.panels if panel.run}
    assert run_panels == {"run cpu": ["run's CPU", "java", "sleep"],
                          "run memory": ["run's resident memory", "java", "sleep"],
                          "run io": ["run's read", "run's write"]}


def test_only_the_few_names_of_the_highest_peak_are_drawn() -> None:
    entries = [top(pid, f"p{pid}", float(pid), pid * MIB) for pid in range(1, 8)]
    drawing = chart([folded(sample(100.0, mem=mem(GIB, GIB // 2, 0, 28 * MIB),
                                   run={"cpu": 30.0, "procs": 7, "top": entries}))])
    memory = next(panel for panel in drawing.panels if panel.name == "run memory")
    assert [curve.legend for curve in memory.curves][1:] == [f"p{pid}" for pid in range(8 - TOP_DRAWN, 8)]


def test_one_name_alone_is_not_drawn_over_the_runs_own_curve() -> None:
    entries = [top(1, "python3", 40.0, 300 * MIB), top(2, "python3", 10.0, 100 * MIB)]
    drawing = chart([folded(sample(100.0, mem=mem(GIB, GIB // 2, 0, 400 * MIB),
                                   run={"cpu": 50.0, "procs": 2, "top": entries}))])
    run_panels = {panel.name: [curve.legend for curve in panel.curves] for panel in drawing.panels if panel.run}
    assert run_panels == {"run cpu": ["run's CPU"], "run memory": ["run's resident memory"]}


def test_no_run_io_panel_without_the_runs_io() -> None:
    assert [panel.name for panel in panels([folded(sample(100.0, run={"cpu": 10.0, "procs": 1}))])][:3] == [
        "run cpu", "run memory", "cpu"]
