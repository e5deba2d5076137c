"""/proc/<pid>/stat: real captures from this machine and hostile lines (docs/behaviour.md §3.4, §6; proc(5)).

The captures (Linux 6.18.44-fc-v857, x86_64, 2 cores) were copied byte for byte with `cp /proc/<pid>/stat`:
- `pid_self_stat.cat`: `cat /proc/self/stat`.
- `pid_stat.sleep`: `sleep 60` started from bash.
- `pid_stat.nice-5`: `nice -n -5 sleep 60`, as root (field 19 is -5, field 18 is 15).
- `pid_stat.paren-space-paren`: /bin/sleep copied to a file named `) (` and run as `./') (' 60`.
- `pid_stat.newline`: /bin/sleep copied to a file named `new<LF>line`.
- `pid_stat.fake-fields`: /bin/sleep copied to `x) S 1 (y) 2 3 4`: the kernel keeps 15 bytes of it.
- `pid_stat.kthreadd`: /proc/2/stat, a kernel thread (parent 0, no memory).
- `pid_stat.zombie`: a python child that called `_exit(3)`, read before its parent reaped it.
- `pid_stat.busy-waited-child`: python that spun about 0.6 s of CPU, ran a child spinning 0.8 s and waited for
  it, then slept (so fields 14-17 are all non-zero).
Every expected value below was read off the capture by hand, counting fields per proc(5).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.pid_stat import PidStat, PidUsage, parse, parse_pid_stat, parse_pid_usage, stat_fields

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"


def capture(name: str) -> bytes:
    return (CAPTURES / f"{name}.{MACHINE}.txt").read_bytes()


# (capture, the PidStat a person read from it)
GOLDEN = [
    ("pid_self_stat.cat", PidStat(5795, "cat", "R", 5791, 0, 0, 0, 0, 38188, 406)),
    ("pid_stat.sleep", PidStat(5796, "sleep", "S", 5791, 0, 0, 0, 0, 38188, 420)),
    ("pid_stat.nice-5", PidStat(5802, "sleep", "S", 5791, 0, 0, 0, 0, 38219, 424)),
    ("pid_stat.paren-space-paren", PidStat(5813, ") (", "S", 5791, 0, 0, 0, 0, 38250, 420)),
    ("pid_stat.newline", PidStat(5819, "new\nline", "S", 5791, 0, 0, 0, 0, 38281, 402)),
    ("pid_stat.fake-fields", PidStat(5824, "x) S 1 (y) 2 3 ", "S", 5791, 0, 0, 0, 0, 38311, 390)),
    ("pid_stat.kthreadd", PidStat(2, "kthreadd", "S", 0, 0, 0, 0, 0, 26, 0)),
    ("pid_stat.zombie", PidStat(5929, "python3", "Z", 5888, 0, 0, 0, 0, 38645, 0)),
    ("pid_stat.busy-waited-child", PidStat(8781, "python3", "S", 8778, 19, 45, 29, 60, 51594, 3482)),
]


@pytest.mark.parametrize(("name", "expected"), GOLDEN, ids=[name for name, _ in GOLDEN])
def test_real_capture_parses_to_what_a_person_read(name: str, expected: PidStat) -> None:
    assert parse(capture(name).decode("utf-8", "replace")) == expected


@pytest.mark.parametrize(("name", "expected"), GOLDEN, ids=[name for name, _ in GOLDEN])
def test_fast_path_agrees_on_real_captures(name: str, expected: PidStat) -> None:
    assert stat_fields(capture(name)) == (expected.state, expected.ppid, expected.cpu_ticks, expected.starttime)


def test_cpu_ticks_sum_the_process_and_its_waited_for_children() -> None:
    """docs/behaviour.md §6: cpu_ticks = utime + stime + cutime + cstime; 19 + 45 + 29 + 60 in the busy capture."""
    assert parse_pid_usage(capture("pid_stat.busy-waited-child").decode()) == PidUsage(8778, 3482, 153)


def test_adapters_on_the_negative_nice_capture() -> None:
    """A parser that reads every field as unsigned loses a reniced process; here field 19 is -5 and is skipped."""
    text = capture("pid_stat.nice-5").decode()
    assert parse_pid_stat(text) == (5791, 424)
    assert parse_pid_usage(text) == PidUsage(parent=5791, rss_pages=424, cpu_ticks=0)


def test_a_zombie_reports_state_z_and_no_memory() -> None:
    """docs/behaviour.md §2.3: state Z is how `alive` tells an exited, unreaped child."""
    fields = stat_fields(capture("pid_stat.zombie"))
    assert fields is not None
    assert fields[0] == "Z"
    assert parse_pid_stat(capture("pid_stat.zombie").decode()) == (5888, 0)


SLEEP = capture("pid_stat.sleep").decode()
# Where field 24 (rss, 420) starts in the sleep capture: after `... 38188 2990080 `.
RSS_AT = SLEEP.index(" 420 ") + 1


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("\n", id="newline only"),
        pytest.param(SLEEP[:RSS_AT], id="truncated before field 24"),
        pytest.param(SLEEP[: SLEEP.index(")") + 1], id="truncated after the command"),
        pytest.param(SLEEP[:20], id="truncated inside the command"),
        pytest.param(SLEEP.replace(")", ""), id="no closing parenthesis"),
        pytest.param(SLEEP.replace("(", ""), id="no opening parenthesis"),
        pytest.param("5796 )sleep( S" + SLEEP[SLEEP.index(") S") + 3 :], id="parentheses reversed"),
        pytest.param("abc" + SLEEP[4:], id="pid not a number"),
        pytest.param(SLEEP.replace(") S ", ") SS ", 1), id="state of two letters"),
        pytest.param(SLEEP.replace(") S ", ") 1 ", 1), id="state a digit"),
        pytest.param(SLEEP.replace(") S 5791 ", ") S -5791 ", 1), id="negative parent"),
        pytest.param(SLEEP.replace(") S 5791 ", ") S ٥٧٩١ ", 1), id="parent in Arabic-Indic digits"),
        pytest.param(SLEEP.replace(" 38188 ", " -38188 ", 1), id="negative starttime"),
        pytest.param(SLEEP.replace(" 420 ", " 1" + "0" * 20 + " ", 1), id="rss over 20 digits"),
        # 2**64: 20 digits, one past the largest u64, as every other parser refuses it.
        pytest.param(SLEEP.replace(" 420 ", " 18446744073709551616 ", 1), id="rss one past the largest u64"),
        pytest.param(SLEEP.replace(") S 5791 ", ") S 99999999999999999999 ", 1), id="parent of 20 nines"),
        pytest.param(SLEEP.replace(" 420 ", " " + "9" * 5000 + " ", 1), id="rss of 5000 digits"),
        pytest.param(SLEEP.replace(" 420 ", " 4_20 ", 1), id="rss with an underscore"),
    ],
)
def test_malformed_lines_fail_and_the_adapters_give_their_sentinels(text: str) -> None:
    """docs/behaviour.md §1.4, §6: (-1, 0) and parent -1 for a malformed line; every parser is total."""
    assert parse(text) is None
    assert stat_fields(text.encode()) is None
    assert parse_pid_stat(text) == (-1, 0)
    assert parse_pid_usage(text) == PidUsage(parent=-1, rss_pages=0, cpu_ticks=0)


def test_a_line_cut_right_after_field_24_still_parses() -> None:
    """Only fields up to 24 are read (older kernels print fewer trailing fields than 6.18's 52)."""
    assert parse_pid_stat(SLEEP[: RSS_AT + 3]) == (5791, 420)


def test_negative_child_ticks_read_as_zero() -> None:
    """cutime/cstime use the kernel's signed formatter but come from unsigned counters: `-N` cannot come from a
    kernel; it reads as 0 so the process still counts and no counter is negative (module docstring)."""
    busy = capture("pid_stat.busy-waited-child").decode()
    text = busy.replace(" 19 45 29 60 ", " 19 45 -29 -60 ", 1)
    stat = parse(text)
    assert stat is not None and (stat.cutime, stat.cstime, stat.cpu_ticks) == (0, 0, 64)
    assert stat_fields(text.encode()) == ("S", 8778, 64, 51594)


def test_real_time_priority_and_lowest_nice_are_skipped() -> None:
    """Field 18 is -2..-100 for real-time processes, field 19 is -20..19: neither shifts the fields after."""
    text = SLEEP.replace(" 20 0 1 0 38188 ", " -100 -20 1 0 38188 ", 1)
    assert " -100 -20 " in text
    assert parse_pid_stat(text) == (5791, 420)


def test_the_largest_values_the_kernel_prints() -> None:
    """utime, stime, starttime and rss are u64 (`seq_put_decimal_ull`): 20 digits at most."""
    u64 = 2**64 - 1
    line = f"4194304 (c) R 4194304 0 0 0 -1 0 0 0 0 0 {u64} {u64} 0 0 20 0 1 0 {u64} 0 {u64}\n"
    assert parse(line) == PidStat(4194304, "c", "R", 4194304, u64, u64, 0, 0, u64, u64)


def test_an_empty_command_parses() -> None:
    """prctl(PR_SET_NAME, "") leaves an empty comm: `pid () state ...`."""
    stat = parse("9 () S 1 0 0 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5 0 6")
    assert stat is not None and (stat.comm, stat.cpu_ticks) == ("", 10)
