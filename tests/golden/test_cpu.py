"""The `cpu` section worked out by hand from /proc/stat texts (docs/behaviour.md §3.3): the texts and their
hand-worked deltas are in proc_stat_texts.py."""

from __future__ import annotations

from orca.sample.compute.cpu import cpu_share, cpu_share_between
from orca.sample.compute.encode import fixed1
from orca.sample.line_format import CpuShare
from orca.sample.parse.proc_stat import CpuTimes, ProcStat, parse, parse_proc_stat
from tests.golden.proc_stat_texts import CUR, LATER, PREV


def texts(share: CpuShare) -> list[str]:
    """The section as the line writes it (one decimal each)."""
    return [fixed1(share.user), fixed1(share.system), fixed1(share.iowait), fixed1(share.steal), fixed1(share.busiest)]


def test_the_parsed_readings_are_the_counters_of_the_text() -> None:
    """The hand-worked deltas in proc_stat_texts.py start from these counters, read off PREV by eye."""
    assert parse(PREV).unwrap() == ProcStat(
        total=CpuTimes(9102, 0, 2455, 71656, 170, 0, 32, 12),
        cores=((0, CpuTimes(687, 0, 713, 40263, 13, 0, 5, 3)), (1, CpuTimes(8415, 0, 1741, 31392, 157, 0, 26, 9))),
    )


def test_shares_between_two_readings() -> None:
    share = cpu_share_between(parse(PREV).unwrap(), parse(CUR).unwrap())
    assert texts(share) == ["41.0", "10.3", "3.3", "2.0", "84.0"]
    assert share.user == 41.0 and share.steal == 2.0 and share.busiest == 84.0
    assert abs(share.system - 31 / 3) < 1e-12 and abs(share.iowait - 10 / 3) < 1e-12


def test_the_documented_cpu_share_gives_the_same() -> None:
    assert texts(cpu_share(parse_proc_stat(PREV), parse_proc_stat(CUR))) == ["41.0", "10.3", "3.3", "2.0", "84.0"]


def test_a_counter_going_backwards_and_a_core_going_offline() -> None:
    share = cpu_share_between(parse(CUR).unwrap(), parse(LATER).unwrap())
    assert share == CpuShare(user=50.0, system=10.0, iowait=0.0, steal=0.0, busiest=100.0)
    assert cpu_share(parse_proc_stat(CUR), parse_proc_stat(LATER)) == share


def test_the_same_reading_twice() -> None:
    """A zero total (no tick between the readings) gives 0.0 everywhere, not a division by zero."""
    assert texts(cpu_share_between(parse(CUR).unwrap(), parse(CUR).unwrap())) == ["0.0"] * 5


def test_busiest_finds_the_one_busy_core_that_the_average_hides() -> None:
    """Two cores, one spinning and one idle: the machine is 50 % busy, `busiest` 100 %."""
    prev = [[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]]
    # cpu: 100 user + 100 idle; cpu0 100 user (100 % busy); cpu1 100 idle.
    cur = [[100, 0, 0, 100, 0, 0, 0, 0], [100, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 100, 0, 0, 0, 0]]
    assert cpu_share(prev, cur) == CpuShare(user=50.0, system=0.0, iowait=0.0, steal=0.0, busiest=100.0)
