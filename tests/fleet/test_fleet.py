"""A fleet read as a user reads it (docs/metrics.md, "A fleet"): synthetic fleets built from real lines (`fleets.py`:
busy instances, and an idle, a saturated, an OOM-killed and a straggling one among them), through `orca metrics` run
as a process. Each expected figure is worked out here from the captured lines with the standard library's json, not
by the code under test."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fleet.fleets import capture, mixed, write_fleet

COUNT = 20
KINDS = mixed(COUNT)
NAMES = [f"worker-{index:03d}" for index in range(COUNT)]
IDLE, SATURATED, OOM, STRAGGLER = (NAMES[KINDS.index(kind)] for kind in ("idle", "saturated", "oom", "straggler"))


def orca(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orca.sample", "metrics", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fleet") / "p" / "42" / "metrics"
    write_fleet(directory, KINDS)
    return directory


@pytest.fixture(scope="module")
def document(fleet_dir: Path) -> dict[str, Any]:
    done = orca("--json", str(fleet_dir))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1  # one object for the fleet
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def worked(kind: str) -> dict[str, float]:
    """A capture's figures by hand: every line is under the cgroup's limits (1 CPU, 512 MiB), so its CPU is
    `cgroup.cpu` % of `cgroup.cpu_max` and its memory `cgroup.mem` of `cgroup.mem_max`, each line weighted by `dt`."""
    lines = capture(kind)
    groups = [(line["cgroup"], line["dt"]) for line in lines]
    shares = sorted(group["cpu"] for group, _ in groups)
    return {
        # Counted by the sampler's monotonic clock: every line's `dt`, the first's from the run's start
        # (docs/metrics.md, "How time is counted").
        "duration": round(sum(line["dt"] for line in lines), 3),
        "core_seconds": sum(group["cpu"] / 100 * group["cpu_max"] * dt for group, dt in groups),
        "core_seconds_available": sum(group["cpu_max"] * dt for group, dt in groups),
        "byte_seconds": sum(group["mem"] * dt for group, dt in groups),
        "byte_seconds_available": sum(group["mem_max"] * dt for group, dt in groups),
        "memory_peak": max(100 * group["mem"] / group["mem_max"] for group, _ in groups),
        "cpu_p95": shares[math.ceil(0.95 * len(shares)) - 1],  # nearest rank
        "seconds_at_90": sum(dt for group, dt in groups if group["cpu"] >= 90),
        "throttled": sum(group["throttled"] * dt for group, dt in groups) / sum(dt for _, dt in groups),
    }


def test_the_rows_are_the_runs_in_order_each_with_its_own_summary(document: dict[str, Any], fleet_dir: Path) -> None:
    rows = document["rows"]
    assert [row["label"] for row in rows] == NAMES
    assert [row["name"] for row in rows] == [str(fleet_dir / f"{name}.jsonl") for name in NAMES]
    # Each run's summary inside its row is the one `--json` gives of its file alone.
    alone = orca("--json", str(fleet_dir / f"{OOM}.jsonl"))
    assert rows[NAMES.index(OOM)]["summary"] == json.loads(alone.stdout)
    for row, kind in zip(rows, KINDS, strict=True):
        figures = worked(kind)
        assert row["cpus"] == 1.0 and row["cpus_limited"] and row["memory_limited"]
        assert row["memory_bytes"] == 512 * 2**20
        assert row["cpu_percent"] == round(100 * figures["core_seconds"] / figures["core_seconds_available"], 1)
        assert row["cpu_p95_percent"] == figures["cpu_p95"]
        assert row["memory_peak_percent"] == round(figures["memory_peak"], 1)
        assert row["duration"] == pytest.approx(figures["duration"], abs=1e-3)
        assert row["lines"] == len(capture(kind))
    oom = rows[NAMES.index(OOM)]
    assert oom["exit"] == {"code": None, "signal": 9, "error": None}
    assert rows[0]["exit"] == {"code": 0, "signal": None, "error": None}


def test_the_totals_are_the_fleets_hours(document: dict[str, Any]) -> None:
    totals = document["totals"]
    figures = [worked(kind) for kind in KINDS]

    def hours(key: str, unit: float = 1.0) -> object:
        return pytest.approx(sum(figure[key] for figure in figures) / 3600 / unit, abs=1e-6)

    assert totals["runs"] == COUNT
    assert totals["instance_hours"] == hours("duration")
    assert (totals["cpu_hours_used"], totals["cpu_hours_available"]) == (hours("core_seconds"),
                                                                         hours("core_seconds_available"))
    assert (totals["memory_gib_hours_used"], totals["memory_gib_hours_available"]) == (
        hours("byte_seconds", 2**30), hours("byte_seconds_available", 2**30))
    used = sum(figure["core_seconds"] for figure in figures)
    assert totals["cpu_percent"] == round(100 * used / sum(figure["core_seconds_available"] for figure in figures), 1)
    # The fleet's first start is the earliest run's (its first line's `t` less its `dt`; the captures' samplers
    # started a little apart; each instance of the fleet 1 ms after the one before); the straggler ended last.
    begins = [capture(kind)[-1]["t"] - worked(kind)["duration"] + index * 0.001 for index, kind in enumerate(KINDS)]
    assert totals["first_start"] == pytest.approx(min(begins), abs=1e-3)
    assert totals["first_start_utc"] == "2026-12-03T16:26:21Z"
    assert totals["last_end"] == round(capture("straggler")[-1]["t"] + (COUNT - 1) * 0.001, 3)


def test_who_stands_out_and_why(document: dict[str, Any]) -> None:
    assert document["idle"] == [IDLE]
    assert document["saturated"] == [SATURATED, OOM]
    assert document["stragglers"] == [STRAGGLER]
    assert document["gaps"] == [] and document["no_lines"] == []
    flags = {row["label"]: row["flags"] for row in document["rows"]}
    # The saturated capture: two spinners against a 1-CPU quota, throttled in most periods, its CPU under 90 % for
    # most of the time (the machine was shared): saturated by throttling alone.
    saturated = worked("saturated")
    assert saturated["seconds_at_90"] < saturated["duration"] / 2
    assert flags[SATURATED] == [{"flag": "saturated", "why": f"throttled {saturated['throttled']:.0f}% of periods"}]
    # Killed by the kernel for passing 512 MiB: its cgroup's oom_kill rose by one; its lines' memory peak was under
    # 90 % of the limit (the last reading before the kill).
    assert worked("oom")["memory_peak"] < 90
    assert flags[OOM] == [{"flag": "saturated", "why": "1 OOM kill"},
                          # its last line: `run.exit` signal 9, wall 7.474 s
                          {"flag": "failed", "why": "killed by SIGKILL after 7.5 s, 1 OOM kill"}]
    assert document["failed"] == [{"label": OOM, "how": flags[OOM][1]["why"]}]
    assert flags[IDLE] == [{"flag": "idle", "why": "cpu at most 10% throughout, memory peak "
                                                   f"{worked('idle')['memory_peak']:.1f}%"}]
    # The median run ends about 20 s after its start, the straggler 40 s.
    assert [flag["flag"] for flag in flags[STRAGGLER]] == ["straggler"]
    assert all(flags[name] == [] for name in NAMES if name not in (IDLE, SATURATED, OOM, STRAGGLER))


def test_the_table_for_a_person(fleet_dir: Path) -> None:
    done = orca(str(fleet_dir))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["instance", "start", "span", "lines", "cpu%", "p95", "mem%", "rss", "disk%", "io",
                                "net", "end", "flags"]
    assert all(len(line) <= 120 for line in lines)
    rows = {line.split()[0]: line.split() for line in lines[1:COUNT + 1]}
    assert list(rows) == NAMES
    assert rows[OOM][-2:] == ["SIGKILL", "saturated,failed"] and rows[IDLE][-1] == "idle"
    assert rows[STRAGGLER][-1] == "straggler" and rows[STRAGGLER][4] == "41"  # its lines, after the span (39.9 s)
    busy = worked("busy")
    assert rows[NAMES[0]][5] == f"{100 * busy['core_seconds'] / busy['core_seconds_available']:.1f}*"
    assert lines[COUNT + 1].startswith(f"total: {COUNT} runs, ")
    saturated = lines.index("saturated (2):")
    assert lines[saturated + 2] == f"  {OOM}  1 OOM kill"
    assert lines[lines.index("idle (1):") + 1].startswith(f"  {IDLE}  cpu at most 10% throughout")
    assert lines[lines.index("stragglers (1):") + 1].startswith(f"  {STRAGGLER}  ended ")


def test_sorted_by_another_column(fleet_dir: Path) -> None:
    done = orca("--json", "--sort", "cpu", str(fleet_dir))
    document = json.loads(done.stdout)
    cpus = [row["cpu_percent"] for row in document["rows"]]
    assert cpus == sorted(cpus, reverse=True) and document["rows"][0]["label"] == SATURATED
    assert document["sorted_by"] == "cpu"
    assert orca("--sort", "colour", str(fleet_dir)).returncode == 2


def test_long_names_are_cut_not_wrapped(tmp_path: Path) -> None:
    long = "instance-of-a-pipeline-whose-name-goes-on-and-on-" * 3
    write_fleet(tmp_path, ["busy", "idle", "busy"])
    (tmp_path / "worker-001.jsonl").rename(tmp_path / f"{long}.jsonl")
    done = orca(str(tmp_path))
    lines = done.stdout.splitlines()
    assert all(len(line) <= 120 for line in lines)
    (cut,) = [line for line in lines if line.startswith("instance-of-a-pipeline")]
    assert cut.split()[0].endswith("…") and cut.split()[-1] == "idle"


def test_each_runs_block_on_request(fleet_dir: Path) -> None:
    table = orca(str(fleet_dir)).stdout
    both = orca("--each", str(fleet_dir)).stdout
    assert both.startswith(table)
    assert both.count(f"{fleet_dir}/worker-") == COUNT and f"total: {COUNT} runs" in both
    assert f"{fleet_dir}/worker-000.jsonl  (host worker-000" not in table


def test_a_source_without_lines_is_a_row_of_its_own(tmp_path: Path) -> None:
    write_fleet(tmp_path, ["busy", "busy"])
    (tmp_path / "worker-002.jsonl").write_text("not a sample\n")
    done = orca("--json", str(tmp_path))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["no_lines"] == ["worker-002"]
    row = document["rows"][2]
    assert (row["summary"], row["lines"], row["flags"]) == (None, 0, [{"flag": "no lines", "why": "no sample line"}])
    assert document["totals"]["runs"] == 2


METRICS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_every_key_of_a_fleets_json_is_in_the_docs_table(document: dict[str, Any]) -> None:
    """Each key of the fleet's object, at any depth but inside a run's `summary` (the run's own table holds those),
    is named in docs/metrics.md's table of a fleet's `--json`, the top level in the table's order."""
    text = METRICS_PAGE.read_text()
    table = text[text.index("### A fleet's `--json`"):]
    table = table[:table.index("\n\n", table.index("| key | what it holds |"))]
    named = set(re.findall(r"`([a-z_0-9]+)`", table))

    def keys(value: object) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {inner for key, item in value.items() if key != "summary"
                                             for inner in keys(item)}
        if isinstance(value, list):
            return {inner for item in value for inner in keys(item)}
        return set()

    assert keys(document) - named == set()
    rows = [row.split("|")[1] for row in table.splitlines() if row.startswith("| `")]
    assert [key for row in rows for key in re.findall(r"`([a-z_0-9]+)`", row)] == list(document)
    assert set(document["rows"][0]) <= named


def test_a_fleet_is_of_several_sources_one_of_them_with_two_runs(tmp_path: Path) -> None:
    """Two files, one of them holding two runs (its sampler started again with the same --out): a fleet of three
    rows; one file of two runs alone is the same table of its two rows, labelled by host."""
    write_fleet(tmp_path / "apart", ["busy", "idle", "saturated"])
    apart = sorted((tmp_path / "apart").iterdir())
    joined = tmp_path / "fleet" / "worker-000.jsonl"
    joined.parent.mkdir()
    joined.write_text(apart[0].read_text() + apart[1].read_text())
    (tmp_path / "fleet" / "worker-002.jsonl").write_text(apart[2].read_text())
    document = json.loads(orca("--json", str(tmp_path / "fleet")).stdout)
    assert [row["label"] for row in document["rows"]] == [
        "worker-000 (worker-000)", "worker-000 (worker-001)", "worker-002"]
    assert document["idle"] == ["worker-000 (worker-001)"] and document["saturated"] == ["worker-002"]
    alone = orca(str(joined)).stdout
    assert alone.startswith("instance ") and f"{joined}  (host" not in alone
    assert [row.split()[:2] for row in alone.splitlines()[1:3]] == [["worker-000", "(worker-000)"],
                                                                     ["worker-000", "(worker-001)"]]


def test_a_source_without_lines_is_a_row_of_dashes_last_by_any_figure(tmp_path: Path) -> None:
    """docs/metrics.md: rows by name (file, host, start), or by a figure with a run without it last; a source without
    sample lines is a row of its own, of 0 lines, flagged `no lines`."""
    write_fleet(tmp_path, ["busy", "busy", "idle"])
    (tmp_path / "a-empty.jsonl").write_text("not a sample\n")
    by_name = orca(str(tmp_path)).stdout.splitlines()
    assert by_name[1].split() == ["a-empty", "-", "-", "0", *["-"] * 8, "no", "lines"]
    assert [line.split()[0] for line in by_name[2:5]] == ["worker-000", "worker-001", "worker-002"]
    assert by_name[by_name.index("no lines (1):") + 1] == "  a-empty  no sample line"
    for sort in ("start", "cpu", "lines", "io"):
        rows = orca("--sort", sort, str(tmp_path)).stdout.splitlines()[1:5]
        assert rows[-1].startswith("a-empty "), sort
    document = json.loads(orca("--json", "--sort", "span", str(tmp_path)).stdout)
    assert [row["label"] for row in document["rows"]][-1] == "a-empty" and document["no_lines"] == ["a-empty"]
    assert document["rows"][-1]["lines"] == 0 and document["rows"][-1]["host"] is None


def test_rows_are_laid_out_in_their_columns_widths() -> None:
    """A label padded to the least width a label gets, a right-aligned column whose cells are all alike (written once
    in the row's template) and a left-aligned one, then the flags; a `%` in a cell is a character like any other."""
    from orca.sample.readback.fleet.text import lines_template

    laid = lines_template([4, 6, 5], 3, [False, True, True])
    assert laid([["a", "bb", "c"], ["5%", "5%", "5%"], ["x%s", "y", "x%s"], ["", "idle", ""]]) == [
        "a" + " " * 11 + "  " + "  5%" + "  " + "x%s",
        "bb" + " " * 10 + "  " + "  5%" + "  " + "y     " + "  " + "idle",
        "c" + " " * 11 + "  " + "  5%" + "  " + "x%s",
    ]
