"""Ten real runs on one host, each sampled with `orca sample -- COMMAND` and no cgroup of its own, read as a fleet
(docs/metrics.md, "A fleet"): the captures of `host_captures/` (see `capture_host.py`), read as they were written.
Every row is the run's own processes', the host's capacity is counted once, the host's saturation is said as the
host's, and the failed runs are listed with how each ended. Each expected figure is worked out here from the lines
with the standard library's json, not by the code under test."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from orca.sample.readback.chart.panels import RUN_CPU, RUN_MEMORY, chart, drawn, name_colours
from orca.sample.readback.gather.series import Series
from tests.fleet.test_chart import chart_of
from tests.fleet.test_fleet import orca
from tests.reader.folding import folded

(CAPTURES,) = Path(__file__).with_name("host_captures").iterdir()
KINDS = sorted(path.name.removesuffix(".jsonl") for path in CAPTURES.glob("*.jsonl"))


def lines(kind: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (CAPTURES / f"{kind}.jsonl").read_text().splitlines()]


def own(kind: str) -> dict[str, float]:
    """A run's own figures by hand: its CPU `run.cpu` % of its host's `cores` in each line that has one, weighted by
    `dt`; its memory `mem.rss`; and the host's CPU share (`cpu.user` + `cpu.system` + `cpu.steal`) beside it."""
    read = lines(kind)
    cpu = [(line["run"]["cpu"], line["dt"]) for line in read if line["run"].get("cpu") is not None]
    host = [(line["cpu"]["user"] + line["cpu"]["system"] + line["cpu"]["steal"], line["dt"]) for line in read]
    return {
        "cpu_percent": sum(share * dt for share, dt in cpu) / sum(dt for _, dt in cpu),
        "seconds_at_90": sum(dt for share, dt in cpu if share >= 90),
        "seconds_over_a_tenth_of_a_core": sum(dt for share, dt in cpu if share * read[-1]["cores"] > 10),
        "seconds": sum(dt for _, dt in cpu),
        "rss_peak": max(line["mem"]["rss"] for line in read),
        "host_seconds_at_90": sum(dt for share, dt in host if share >= 90),
        "host_seconds": sum(dt for _, dt in host),
        "begin": read[0]["t"] - read[0]["dt"],
        "end": read[-1]["t"],
    }


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    done = orca("--json", str(CAPTURES))
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_each_row_is_the_runs_own(document: dict[str, Any]) -> None:
    rows = {row["label"]: row for row in document["rows"]}
    assert sorted(rows) == KINDS
    for kind in KINDS:
        figures = own(kind)
        row = rows[kind]
        assert (row["cpu_of"], row["memory_of"], row["io_of"]) == ("run", "run", "run")
        assert row["cpu_percent"] == pytest.approx(figures["cpu_percent"], abs=0.06)
        assert row["rss_peak"] == figures["rss_peak"]
        # Only the grower's resident memory passed a few tens of MiB; the host's `mem.used` was GiBs for all.
        assert (row["rss_peak"] > 500 * 2**20) == (kind == "grower")
    # The writer wrote its 256 MiB; no other run wrote a byte, though the host's disks wrote for all of them.
    assert rows["writer"]["io_bytes"] == pytest.approx(256 * 2**20, rel=0.01)
    assert all(rows[kind]["io_bytes"] == 0 for kind in KINDS if kind != "writer")


def test_only_the_idle_one_is_idle_and_no_run_saturated(document: dict[str, Any]) -> None:
    assert document["idle"] == ["idle"]
    assert own("idle")["seconds_over_a_tenth_of_a_core"] == 0
    # Every other run had its processes over a tenth of a core for more than 5 % of its time.
    assert all(own(kind)["seconds_over_a_tenth_of_a_core"] > own(kind)["seconds"] / 20 for kind in KINDS
               if kind != "idle")
    assert document["saturated"] == []
    assert all(own(kind)["seconds_at_90"] < own(kind)["seconds"] / 2 for kind in KINDS)


def test_the_host_was_saturated_and_is_said_so_once(document: dict[str, Any]) -> None:
    figures = [own(kind) for kind in KINDS]
    share = 100 * sum(each["host_seconds_at_90"] for each in figures) / sum(each["host_seconds"] for each in figures)
    assert share >= 50  # the shared machine's other work and the ten: both cores busy most of the time
    (host,) = document["hosts_saturated"]
    assert host["host"] == "vm" and host["runs"] == 10
    assert host["why"].startswith("cpu at 90% or more ")


def test_the_failed_runs_and_how_each_ended(document: dict[str, Any]) -> None:
    ended = {kind: lines(kind)[-1]["run"]["exit"] for kind in KINDS}
    assert ended["killed"]["signal"] == 9 and ended["failed"]["code"] == 3
    assert all(ended[kind].get("code") == 0 for kind in KINDS if kind not in ("killed", "failed"))
    assert [each["label"] for each in document["failed"]] == ["failed", "killed"]
    how = {each["label"]: each["how"] for each in document["failed"]}
    assert how["failed"].startswith("exit 3 after ") and how["killed"].startswith("killed by SIGKILL after ")


def test_the_hosts_capacity_is_counted_once(document: dict[str, Any]) -> None:
    """Ten runs on one 2-core host had 2 CPUs over the time any of them ran, not 20."""
    spans = sorted((each["begin"], each["end"]) for each in map(own, KINDS))
    covered, reached = 0.0, spans[0][0]
    for begin, end in spans:
        covered += max(0.0, end - max(begin, reached))
        reached = max(reached, end)
    assert document["totals"]["cpu_hours_available"] == pytest.approx(2 * covered / 3600, rel=0.03)


def test_the_table_says_whose_figures_it_shows() -> None:
    done = orca(str(CAPTURES))
    assert done.returncode == 0, done.stderr
    text = done.stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in text[1:11]}
    assert rows["idle"][-1] == "idle" and rows["killed"][-2:] == ["SIGKILL", "failed"]
    assert rows["failed"][-3:] == ["exit", "3", "failed"]
    assert "  (cpu%, mem% and io are the run's own processes', of its host's cores and memory (net is the host's))" \
        in text
    assert text[text.index("failed (2):") + 2].startswith("  killed  killed by SIGKILL after ")
    assert text[text.index("hosts saturated (1), apart from the runs on them:") + 1].startswith("  vm  cpu at 90% ")


def test_two_runs_of_one_pipeline_have_labels_apart(tmp_path: Path) -> None:
    for run in ("7", "8"):
        shutil.copytree(CAPTURES, tmp_path / "nightly" / run / "metrics")
    done = orca("--json", str(tmp_path / "nightly"))
    labels = [row["label"] for row in json.loads(done.stdout)["rows"]]
    assert labels == [f"{run}/{kind}" for run in ("7", "8") for kind in KINDS]
    text = orca(str(tmp_path / "nightly")).stdout
    assert "7/killed  killed by SIGKILL" in text and "8/killed  killed by SIGKILL" in text


def test_a_short_last_line_is_drawn_but_does_not_set_the_scale() -> None:
    """The pair's last line covers 0.231 s (written as its COMMAND ended), its `run.cpu` 58.6 % of the 2 cores: 117 %
    of one core, where every other line of the run is at most half that. It is drawn, but the scale is the rest's."""
    read = lines("pair")
    assert read[-1]["dt"] == 0.231 and read[-1]["run"]["cpu"] == 58.6
    others = max(line["run"]["cpu"] * line["cores"] for line in read[:-1] if line["run"].get("cpu") is not None)
    assert others < 58.6 * 2 / 2
    drawing = chart([folded((CAPTURES / "pair.jsonl").read_text())])
    (run_cpu,) = [panel for panel in drawing.panels if panel.name == "run cpu"]
    (own_curve,) = [curve for curve in run_cpu.curves if curve.field == "run_cpu"]
    assert own_curve.values[-1] == pytest.approx(117.2) and own_curve.short[-1]
    assert run_cpu.top == pytest.approx(others)
    assert any("does not set the scale" in note for note in drawing.notes)


def test_a_process_name_has_one_colour_in_the_runs_panels() -> None:
    """docs/run-workload.sh sampled (`tests/golden/captures/`): python3, holder.py and dd, each in the run's CPU and
    memory panels, each of one colour in both, no two alike."""
    (workload,) = Path(__file__).parents[1].glob("golden/captures/run-workload.*.jsonl")
    drawing = chart([folded(workload.read_text())])
    colours: dict[str, set[int]] = {}
    for panel in drawing.panels:
        if panel.run:
            for curve in panel.curves:
                if not curve.field.startswith(("run_", "mem_", "cpu_")):
                    colours.setdefault(curve.field, set()).add(curve.colour)
    assert set(colours) == {"python3", "holder.py", "dd"}
    assert all(len(each) == 1 for each in colours.values())
    assert len({colour for each in colours.values() for colour in each}) == len(colours)


def test_the_fleet_chart_counts_the_host_once_and_says_it_was_saturated() -> None:
    drawing = chart_of(CAPTURES)
    cores = {line["cores"] for kind in KINDS for line in lines(kind)}
    assert cores == {2}
    assert 1.9 < max(drawing.cores_available) < 2.1  # its 2 cores, once; not 2 per run (20)
    total = max(line["mem"]["total"] for kind in KINDS for line in lines(kind))
    assert 0.95 * total < max(drawing.memory_available) < 1.05 * total
    assert any(note.startswith("host vm saturated, apart from its 10 runs: cpu at 90% or more ")
               for note in drawing.notes)
    assert any(note.startswith("failed 2: failed (exit 3 after ") for note in drawing.notes)


def test_a_name_keeps_its_colour_when_the_panels_draw_different_names() -> None:
    """`b` is among the top CPU names with `a`, and among the top memory names with `c`: one colour in both."""
    nan = float("nan")
    one = Series("r", (1.0, 2.0), {"run_cpu": (50.0, 60.0), "cpu_limit": (nan, nan), "mem_rss": (9.0, 9.0),
                                   "mem_limit": (nan, nan)},
                 keyed={"top_cpu": {"a": (30.0, 30.0), "b": (20.0, 30.0)},
                        "top_mem": {"b": (4.0, 4.0), "c": (5.0, 5.0)}})
    colours = name_colours([one])
    by_panel = [{curve.field: curve.colour for curve in drawn(panel, [one], colours)}
                for panel in (RUN_CPU, RUN_MEMORY)]
    assert by_panel[0]["b"] == by_panel[1]["b"]
    assert len({by_panel[0]["a"], by_panel[0]["b"], by_panel[1]["c"], by_panel[0]["run_cpu"]}) == 4
