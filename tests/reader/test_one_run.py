"""A file whose first and last lines are one run's is read without what only a table of several runs needs (each
run's usage): its block and `--json` line are the same as with it, and a file that holds other runs between its ends
is read again, with it, for the table (docs/metrics.md, "A file of many runs")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orca.sample.readback.gather.fold import SECTIONS
from orca.sample.readback.shell import parts
from orca.sample.readback.shell.cli import metrics
from orca.sample.readback.shell.cli.metrics import metrics_main
from orca.sample.readback.shell.parts import one_run_at_ends

LINE = {"v": 1, "t": 1796000000.2, "dt": 0.2, "host": "a", "cores": 2, "start": 1796000000.0, "self_cpu": 0.05,
        "cpu": {"user": 10.0, "system": 1.0, "iowait": 0.0, "steal": 0.0, "busiest": 50.0},
        "mem": {"total": 1000, "used": 100, "available": 900, "cache": 0, "swap_total": 0, "swap_used": 0, "rss": 0}}


def lines(*runs: tuple[str, float, int]) -> str:
    """A line of each run (`host`, `start`, its `n`th line, a second apart), in the order given."""
    return "".join(json.dumps({**LINE, "host": host, "start": start, "t": start + 0.2 + n,
                               "dt": 0.2 if n == 0 else 1.0}) + "\n" for host, start, n in runs)


@pytest.mark.parametrize(("text", "alone"), [
    (lines(("a", 1.0, 0), ("a", 1.0, 1), ("a", 1.0, 2)), True),
    (lines(("a", 1.0, 0), ("b", 1.0, 0), ("a", 1.0, 1)), True),  # not alone: the read finds it (below)
    (lines(("a", 1.0, 0), ("a", 61.0, 0)), False),
    (lines(("a", 1.0, 0), ("b", 1.0, 0)), False),
    (lines(("a", 1.0, 0)), True),
    (lines(("a", 1.0, 0), ("b", 1.0, 0)).rstrip("\n"), True),  # the last line, still being written, is not read
    (lines(("a", 1.0, 0)).rstrip("\n"), False),
    ("a pod's own output\n" + lines(("a", 1.0, 0)), False),
    ("", False),
])
def test_a_file_is_one_run_at_its_ends_when_its_first_and_last_whole_lines_are_one_runs(text: str, alone: bool,
                                                                                      tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(text)
    assert one_run_at_ends(str(path)) is alone


@pytest.mark.parametrize("options", [[], ["--json"], ["--each"]])
@pytest.mark.parametrize("runs", [
    [("a", 1.0, n) for n in range(5)],
    [("a", 1.0, 0), ("b", 1.0, 0), ("a", 1.0, 1), ("b", 1.0, 1), ("a", 1.0, 2)],
    [("a", 1.0, 0), ("a", 61.0, 0), ("a", 1.0, 1)],
])
def test_what_is_printed_is_what_a_read_with_the_usage_prints(runs: list[tuple[str, float, int]], options: list[str],
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(lines(*runs))
    assert metrics_main([*options, str(path)]) == 0
    read = capsys.readouterr()
    monkeypatch.setattr(metrics, "one_run_at_ends", lambda _: False)
    assert metrics_main([*options, str(path)]) == 0
    assert capsys.readouterr() == read
    if len({(host, start) for host, start, _ in runs}) > 1:
        assert read.out.startswith("instance") or read.out.startswith("{"), read.out


def test_a_file_of_one_run_folds_no_usage_and_one_of_several_between_its_ends_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    reads: list[int] = []
    show_runs = parts.show_runs

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(len(kwargs["sections"]))
        return show_runs(*args, **kwargs)

    monkeypatch.setattr(metrics, "show_runs", counted)
    alone, between = tmp_path / "alone.jsonl", tmp_path / "between.jsonl"
    alone.write_text(lines(*[("a", 1.0, n) for n in range(3)]))
    between.write_text(lines(("a", 1.0, 0), ("b", 1.0, 0), ("a", 1.0, 1)))
    assert metrics_main([str(alone)]) == 0
    assert metrics_main([str(between)]) == 0
    capsys.readouterr()
    with_usage = len(SECTIONS) + 1
    assert reads == [with_usage - 1, with_usage - 1, with_usage]
