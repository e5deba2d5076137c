"""Properties of the /proc/stat parser (docs/behaviour.md §3.3, §6 `parse_proc_stat`)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.parse.proc_stat import CpuTimes, ProcStat, parse, parse_proc_stat
from tests.property.render_system import render_proc_stat
from tests.property.strategies_system import U64_MAX, counters, cpu_times, hostile_texts, proc_stats


def _as_list(times: CpuTimes) -> list[int]:
    return [times.user, times.nice, times.system, times.idle, times.iowait, times.irq, times.softirq, times.steal]


@given(proc_stats(), st.tuples(counters, counters))
@example(ProcStat(total=CpuTimes(*[U64_MAX] * 8), cores=()), (U64_MAX, U64_MAX))
def test_render_then_parse_gives_the_snapshot_back(stat: ProcStat, guest: tuple[int, int]) -> None:
    # guest and guest_nice (fields 9 and 10) are already inside user and nice: read, they would count twice.
    assert parse(render_proc_stat(stat, guest)).unwrap() == stat


@given(proc_stats())
def test_the_adapter_lists_the_aggregate_then_each_core_in_file_order(stat: ProcStat) -> None:
    expected = [_as_list(stat.total), *(_as_list(times) for _, times in stat.cores)]
    assert parse_proc_stat(render_proc_stat(stat)) == expected


@given(hostile_texts)
@example("cpu  -5 0 0 0\n")
@example("cpu  1 2 3 4\ncpu-1 1 2 3 4\n")
@example("cpu " + "9" * 5000 + " 0 0 0\n")
def test_any_text_parses_or_fails_without_raising_and_never_gives_a_negative_counter(text: str) -> None:
    stat = parse(text).value_or(None)
    rows = parse_proc_stat(text) + [_as_list(times) for times in _all_times(stat)]
    for row in rows:
        assert len(row) == 8
        assert all(0 <= counter <= U64_MAX for counter in row)
    if stat is not None:
        assert all(number >= 0 for number, _ in stat.cores)


def _all_times(stat: ProcStat | None) -> list[CpuTimes]:
    return [] if stat is None else [stat.total, *(times for _, times in stat.cores)]


@given(proc_stats().filter(lambda stat: len(stat.cores) > 0), st.data())
def test_a_negative_counter_skips_its_core_line_rather_than_becoming_negative(
    stat: ProcStat, data: st.DataObject
) -> None:
    # On purpose: a `cpu` line with a counter that is not an unsigned decimal is skipped, not zeroed; a
    # zero would look like a counter that went backwards and distort the next line's shares.
    spoiled = data.draw(st.integers(0, len(stat.cores) - 1))
    field = data.draw(st.integers(1, 8))
    lines = render_proc_stat(stat).split("\n")
    words = lines[1 + spoiled].split(" ")
    words[field] = "-5"
    lines[1 + spoiled] = " ".join(words)
    parsed = parse("\n".join(lines)).unwrap()
    assert parsed.total == stat.total
    assert parsed.cores == stat.cores[:spoiled] + stat.cores[spoiled + 1 :]


@given(cpu_times, st.data())
def test_a_negative_aggregate_counter_is_a_failure(total: CpuTimes, data: st.DataObject) -> None:
    words = render_proc_stat(ProcStat(total=total, cores=())).split("\n")[0].split()
    words[data.draw(st.integers(1, 8))] = "-5"
    assert parse(" ".join(words) + "\n").failure().source == "/proc/stat"


@given(st.one_of(hostile_texts, proc_stats().map(render_proc_stat)), st.sampled_from(["", "intr 1 2 3\n"]))
@example("cpu  1 2 3 4\ncpu0 1 2 3 4\nintr 5 6\rcpu1 1 2 3 4\nctxt 7\n", "")
@example("cpu  1 2 3 4\nintr 5 6\ncpu0 1 2 3 4", "intr 1\x85cpu1 5 6 7 8\n")
def test_a_cpu_line_anywhere_counts_as_if_the_other_lines_were_not_there(text: str, after: str) -> None:
    """The parser stops splitting after the last `cpu` it sees: a `cpu` line after the long `intr` line, or after
    any line break, still counts."""
    whole = text + after
    only_cpu_lines = "\n".join(line for line in whole.splitlines() if line.startswith("cpu"))
    assert parse(whole).map(_cpu_lines) == parse(only_cpu_lines).map(_cpu_lines)


def _cpu_lines(stat: ProcStat) -> tuple[CpuTimes, tuple[tuple[int, CpuTimes], ...]]:
    return stat.total, stat.cores


def test_the_cpu_lines_after_intr_and_after_other_line_breaks_by_hand() -> None:
    # Written by hand: cpu0 before `intr`, cpu1 after a `\r` inside the intr line, cpu2 after a `\x85`, all read.
    text = "cpu  3 0 3 12\ncpu0 1 0 1 4\nintr 5 6\rcpu1 1 0 1 4\nctxt 7\x85cpu2 1 0 1 4\nbtime 9\n"
    stat = parse(text).unwrap()
    assert [number for number, _ in stat.cores] == [0, 1, 2]
    assert stat.total == CpuTimes(3, 0, 3, 12, 0, 0, 0, 0)
