"""The read side's words (docs/metrics.md, "Words"): each word's forms written by hand from its rule, properties
that hold for any figure, and the same run's words as the summary, the fleet's table and lists, `--json` and the
chart say them, which must agree."""

from __future__ import annotations

import ast
import json
import math
import re
import shlex
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.line_format import CommandExit
from orca.sample.readback.cells import (
    Percents,
    count_cells,
    percent_cells,
    run_heads,
    run_labels,
    size_cells,
    timed_labels,
    times_of_day,
)
from orca.sample.readback.chart.panels import chart
from orca.sample.readback.words import (
    command,
    count,
    cut,
    cut_start,
    day_and_minute,
    duration,
    exit_after,
    exit_cell,
    exit_status,
    percent,
    printable,
    rate,
    signal_name,
    size,
    size_cell,
    utc,
)
from tests.reader.folding import checked, every_run, series_of
from tests.reader.test_metrics_command import orca
from tests.reader.test_runs import FIRST_START, SECOND_START, line, mem
from tests.reader.test_runs import cpu as cpu_section

READBACK = Path(__file__).parents[2] / "src" / "orca" / "sample" / "readback"
UNIT = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


@pytest.mark.parametrize(("bytes_", "said"), [
    (0, "0 B"), (1, "1 B"), (1023, "1023 B"),  # bytes whole, up to one short of a KiB
    (1024, "1.00 KiB"), (1536, "1.50 KiB"),  # 1536 = 1.5 × 1024
    (10 * 2**20, "10.00 MiB"), (1023.996 * 2**20, "1024.00 MiB"),  # two decimals below the next unit, rounded
    (2**30 + 2**29, "1.50 GiB"), (2**40, "1.00 TiB"), (99.5 * 2**40, "99.50 TiB"), (2**50, "1024 TiB"),
])
def test_a_size_in_binary_units(bytes_: float, said: str) -> None:
    assert size(bytes_) == said
    assert rate(bytes_) == said + "/s"


@pytest.mark.parametrize(("bytes_", "said"), [
    (None, "-"), (0, "0B"), (1023, "1023B"), (1024, "1.0K"), (9.94 * 2**20, "9.9M"), (10 * 2**20, "10M"),
    (129 * 2**20, "129M"), (2**40, "1.0T"), (3 * 2**50, "3.0P"), (2**60, "1024P"),
])
def test_a_size_in_a_tables_cell(bytes_: float | None, said: str) -> None:
    assert size_cell(bytes_) == said


@pytest.mark.parametrize(("seconds", "said"), [
    (None, "-"), (math.nan, "-"), (math.inf, "-"),
    (0.0, "0.0 s"), (0.04, "0.0 s"), (7.46, "7.5 s"), (59.9, "59.9 s"),  # tenths under a minute
    (60, "1m 00s"), (252, "4m 12s"), (252.4, "4m 12s"), (3599, "59m 59s"),  # then whole seconds
    (3599.6, "1h 00m 00s"), (3725, "1h 02m 05s"), (2 * 86400 + 1, "48h 00m 01s"),  # hours never become days
])
def test_a_duration(seconds: float | None, said: str) -> None:
    assert duration(seconds) == said


@pytest.mark.parametrize(("number", "noun", "said"), [
    (0, "gap", "0 gaps"), (1, "gap", "1 gap"), (2, "run", "2 runs"), (1000, "line", "1,000 lines"),
    (1, "OOM kill", "1 OOM kill"), (3, "OOM kill", "3 OOM kills"),
])
def test_a_count(number: int, noun: str, said: str) -> None:
    assert count(number, noun) == said


def test_moments_and_times_of_day() -> None:
    t = 1796016198.738  # 2026-11-30 05:23:18.738 UTC: 20,787 days after 1970-01-01, and 19,398.738 s into the day
    assert (utc(t), times_of_day([t]), day_and_minute(t)) == ("2026-11-30T05:23:18Z", ["05:23:18"], "11-30 05:23")
    assert (utc(0), times_of_day([86399]), day_and_minute(86400)) == ("1970-01-01T00:00:00Z", ["23:59:59"],
                                                                      "01-02 00:00")


def test_how_a_command_ended() -> None:
    assert signal_name(9) == "SIGKILL" and signal_name(15) == "SIGTERM" and signal_name(10) == "signal 10"
    assert [exit_status(CommandExit(code=0)), exit_status(CommandExit(code=3, wall=200.0))] == ["exit 0", "exit 3"]
    assert exit_after(CommandExit(code=3, wall=200.0)) == "exit 3 after 3m 20s"
    assert exit_after(CommandExit(signal=9, wall=7.46)) == "killed by SIGKILL after 7.5 s"
    assert exit_status(CommandExit(signal=10)) == "killed by signal 10"
    assert exit_status(CommandExit(code=126, error="No access\n")) == "could not start: No access\\n (exit 126)"
    assert [exit_cell(None), exit_cell(CommandExit(code=3)), exit_cell(CommandExit(signal=9)),
            exit_cell(CommandExit(signal=10)), exit_cell(CommandExit(code=127, error="x"))] == [
        "-", "exit 3", "SIGKILL", "signal 10", "no start"]


def test_a_command_as_a_shell_takes_it() -> None:
    assert command(["make", "-j4"]) == "make -j4"
    assert command(["sh", "-c", "echo $HOME; sleep 1"]) == "sh -c 'echo $HOME; sleep 1'"
    assert command(["xargs", "-n1", "echo"], 40) == "xargs -n1 echo ... (40 arguments, 3 shown)"
    assert command(["python3", "-c", "a" * 30], most=20) == "python3 -c aaaaaaaa…"  # 19 characters and `…`
    assert command(["echo", "\x1b[2J"]) == "echo '\\x1b[2J'"  # escaped, then quoted: the backslash needs it


def test_percent_and_cuts() -> None:
    assert (percent(None), percent(0.0), percent(74.84), percent(199.96)) == ("-", "0.0%", "74.8%", "200.0%")
    assert (cut("worker-001", 10), cut("worker-001", 7), cut("a b c", 3)) == ("worker-001", "worker…", "a…")
    assert cut_start("fleet/worker-001.jsonl", 10) == "…001.jsonl"


@given(st.integers(min_value=0, max_value=2**62))
@example(1023)
@example(1024)
@example(2**40 - 1)
@example(50560)  # 49.375 KiB: exactly half a hundredth off, which float arithmetic must not count as more
def test_a_size_reads_back_to_within_its_rounding(bytes_: int) -> None:
    """The figure times its unit is the size, to within half the last decimal shown; the figure is below 1024 but
    in TiB, the largest unit."""
    said = size(bytes_)
    figure, unit = said.split(" ")
    decimals = len(figure.partition(".")[2])
    assert abs(float(figure) * UNIT[unit] - bytes_) <= 0.5 * 10**-decimals * UNIT[unit] * (1 + 1e-9)
    assert unit == "TiB" or float(figure) < 1024 + 0.005 * (unit != "B")


_MISSING_COUNT = -(2**63)


@given(st.lists(st.one_of(st.integers(min_value=-2, max_value=2**31), st.sampled_from([
    _MISSING_COUNT, 0, 1023, 1024, 10239, 10240, 50560, 1048063, 1048064, 2**20 - 1, 2**20, 10 * 2**20 - 1,
    10 * 2**20, 2**30 - 2**19 - 1, 2**30 - 2**19, 2**30 - 1, 2**30, 2**70])), max_size=40),
       st.sampled_from(["", "*", "^"]), st.booleans())
@example([1280, 1792, 12 * 1024 + 512, 13 * 1024 + 512], "", False)  # 1.25, 1.75, 12.5 and 13.5 KiB: ties, to even
@example([_MISSING_COUNT] * 4, "^", False)  # a column all missing
@example([1536] * 4, "*", False)  # a column of one size
def test_a_column_of_sizes_says_each_as_its_cell(counts: list[int], after: str, alike: bool) -> None:
    """A column of sizes (each rounded in integers, or looked up once where the column holds few) says each as
    `size_cell` does, its mark after it, and `-` for the count standing for none."""
    column = counts * 3 if alike else counts  # few distinct values
    assert size_cells(column, _MISSING_COUNT, after) == [
        "-" if each == _MISSING_COUNT else size_cell(each) + after for each in column]


@given(st.lists(st.one_of(st.none(), st.floats(allow_infinity=False), st.sampled_from([0.0, -0.0, 0.05, 0.25, 99.95])),
                max_size=40), st.sampled_from(["", "*"]), st.booleans())
@example([0.0, -0.0, 0.0, -0.0], "", True)  # one key, said two ways
@example([-0.0, -0.0], "", False)  # one value, counted as 0.0 too
@example([math.nan, math.nan], "*", False)
@example([12.5, 12.5], "*", False)
def test_a_column_of_shares_says_each_as_a_percent(shares: list[float | None], after: str, alike: bool) -> None:
    """Said whole, or a piece at a time with the cells said so far kept between the pieces."""
    column = shares * 3 if alike else shares
    expected = ["-" if each is None or math.isnan(each) else percent(each)[:-1] + after for each in column]
    assert percent_cells(column, after) == expected
    kept = Percents(after)
    assert [cell for piece in (column[:5], column[5:], column) for cell in percent_cells(piece, after, kept)] == [
        *expected, *expected]


@given(st.lists(st.integers(min_value=0, max_value=10**12), max_size=40), st.booleans())
@example([1] * 5, False)
def test_a_column_of_counts_separates_thousands(counts: list[int], alike: bool) -> None:
    column = counts * 3 if alike else counts
    assert count_cells(column) == [count(each, "line").split(" ")[0] for each in column]


@given(st.lists(st.one_of(st.none(), st.floats(min_value=-1e10, max_value=2e10),
                          st.sampled_from([59.9999994, 59.9999996, 86399.9999996, -0.5])), min_size=2, max_size=30))
def test_a_column_of_one_host_s_labels_says_each_as_run_labels_does(starts: list[float | None]) -> None:
    """A source's host's runs labelled a column at a time (a head said with each minute) as `run_labels` labels each
    run (before start for none)."""
    runs = [("fleet/a.jsonl", "h", start) for start in starts]
    head, timed = run_heads({("fleet/a.jsonl", "h"): len(runs)}, ["fleet/a.jsonl"])["fleet/a.jsonl"]["h"]
    assert (head, timed) == ("a", True)
    assert timed_labels(head, [math.nan if start is None else start for start in starts]) == run_labels(runs)


@given(st.lists(st.floats(min_value=0, max_value=4e9) | st.sampled_from([59.9999994, 59.9999996, 86399.99999949]),
                max_size=20))
def test_a_column_of_times_of_day_is_utcs(moments: list[float]) -> None:
    """Each moment's time of day as `datetime` says it, rounded alike (a column a moment near its next second or
    not)."""
    assert times_of_day(moments) == [utc(t)[11:19] for t in moments]


@given(st.integers(min_value=60, max_value=10**7))
def test_a_duration_of_a_minute_or_more_reads_back_to_its_whole_seconds(seconds: int) -> None:
    match = re.fullmatch(r"(?:(\d+)h )?(\d{1,2})m (\d\d)s", duration(seconds))
    assert match is not None
    hours, minutes, secs = (int(part or 0) for part in match.groups())
    assert hours * 3600 + minutes * 60 + secs == seconds and minutes < 60 and secs < 60
    assert (hours == 0) == (seconds < 3600)


@given(st.lists(st.text(max_size=12), min_size=1, max_size=6))
def test_a_command_splits_back_into_its_escaped_words(argv: list[str]) -> None:
    said = command(argv)
    assert said.isprintable() or not said  # nothing a terminal would act on
    assert shlex.split(said) == [printable(word) for word in argv]


@given(st.text(), st.integers(min_value=1, max_value=40))
def test_a_cut_fits_and_keeps_the_start(text: str, width: int) -> None:
    shown = cut(text, width)
    assert len(shown) <= width
    assert shown == text or (shown.endswith("…") and text.startswith(shown[:-1]))
    kept = cut_start(text, width)
    assert len(kept) <= width and (kept == text or text.endswith(kept[1:]))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


def test_the_chart_and_the_fleet_take_their_words_from_words_alone() -> None:
    """No view borrows another's formatting: the chart does not walk through the summary's text, the fleet's chart
    not through its table's text."""
    for path in [*(READBACK / "chart").glob("*.py"), *(READBACK / "fleet").glob("*.py")]:
        assert not {"orca.sample.readback.summary.text", "orca.sample.readback.fleet.text"} & _imports(path) or \
            path.name == "text.py", path


def _ended(start: float, exit: dict[str, object]) -> list[str]:
    """A run of two lines 100 s apart, the second its COMMAND's end: a span of 100 s, the first line to the last."""
    return [line(start, start + 100.0, 100.0, cpu=cpu_section(10.0), mem=mem(2**20),
                 run={"cpu": 5.0, "procs": 1, "command": ["job"]}),
            line(start, start + 200.0, 100.0, cpu=cpu_section(10.0), mem=mem(2**20),
                 run={"cpu": 5.0, "procs": 1, "exit": exit})]


def test_one_run_s_ending_is_said_alike_by_every_view(tmp_path: Path) -> None:
    """A run that exited 3 after 100 s and one killed by signal 9 after 7.5 s: the summary's block, the table's
    `end` and its `failed` list, `--json`'s `failed` and the chart's title all say `exit 3` and `killed by SIGKILL`,
    and every duration the same way (1m 40s)."""
    path = tmp_path / "runs.jsonl"
    text = "\n".join([*_ended(FIRST_START, {"code": 3, "wall": 100.0}),
                      *_ended(SECOND_START, {"signal": 9, "wall": 7.5})]) + "\n"
    path.write_text(text)
    done = orca("metrics", "--each", str(path))
    assert done.returncode == 0, done.stderr
    table, blocks = done.stdout.split(f"\n\n{path}", 1)
    assert "  ended          exit 3 after 1m 40s\n" in blocks
    assert "  ended          killed by SIGKILL after 7.5 s\n" in blocks
    rows = table.splitlines()[1:3]
    assert ["1m 40s" in rows[0], "exit 3" in rows[0], "SIGKILL" in rows[1]] == [True, True, True]
    assert "  runs 05:20:00  exit 3 after 1m 40s\n" in table
    assert table.endswith("  runs 06:20:00  killed by SIGKILL after 7.5 s")  # then the blocks
    (document,) = [json.loads(text) for text in orca("metrics", "--json", str(path)).stdout.splitlines()]
    assert [failed["how"] for failed in document["failed"]] == ["exit 3 after 1m 40s", "killed by SIGKILL after 7.5 s"]
    first, second = series_of(every_run([checked(text)], drawn=2), "runs.jsonl")
    assert chart([first]).title.splitlines()[1].endswith(" · 1m 40s · exit 3")
    assert chart([second]).title.splitlines()[1].endswith(" · 7.5 s · killed by SIGKILL")
