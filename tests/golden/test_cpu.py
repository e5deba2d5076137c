"""The `cpu` section worked out by hand from /proc/stat texts (SPEC 3.3, issue 6).

PREV is the `cpu` lines (and `ctxt`) of this machine's /proc/stat, Linux 6.18.44-fc-v857, x86_64, 2 cores, read while
writing this test; the long `intr` and `softirq` lines are left out (the parser ignores every non-`cpu` line). CUR and
LATER are PREV edited by hand so that the deltas are known.
"""

from __future__ import annotations

from orca.sample.compute.cpu import cpu_share, cpu_share_between
from orca.sample.compute.encode import fixed1
from orca.sample.compute.line import CpuShare
from orca.sample.parse.proc_stat import CpuTimes, ProcStat, parse, parse_proc_stat

PREV = """\
cpu  9102 0 2455 71656 170 0 32 12 0 0
cpu0 687 0 713 40263 13 0 5 3 0 0
cpu1 8415 0 1741 31392 157 0 26 9 0 0
ctxt 227123
"""

# Deltas from PREV (fields: user nice system idle iowait irq softirq steal; guest, guest_nice unchanged):
#   cpu   +120 +3 +25 +130 +10 +2 +4 +6   total 300
#   cpu0  +100 +3 +15  +20  +4 +2 +2 +4   total 150, busy 150 - 20 - 4 = 126   -> 84.0 %
#   cpu1   +20  0 +10 +110  +6  0 +2 +2   total 150, busy 150 - 110 - 6 = 34  -> 22.67 %
# user    = (120 + 3) / 300      = 41.0 %
# system  = (25 + 2 + 4) / 300   = 31 / 300 = 10.333 % -> 10.3
# iowait  = 10 / 300             = 3.333 %            -> 3.3
# steal   = 6 / 300              = 2.0 %
# busiest = max(84.0, 22.67)     = 84.0 %
CUR = """\
cpu  9222 3 2480 71786 180 2 36 18 0 0
cpu0 787 3 728 40283 17 2 7 7 0 0
cpu1 8435 0 1751 31502 163 0 28 11 0 0
ctxt 229871
"""

# From CUR: cpu1 went offline (its line is gone) and the aggregate iowait went backwards by 5, which proc(5) warns
# the iowait counter may do ("the value in this field may decrease in certain conditions").
#   cpu   +50 0 +10 +40 -5->0 0 0 0   total 100
#   cpu0  +45 0  +5   0     0 0 0 0   total 50, busy 50 -> 100.0 %; cpu1 is in one reading only: left out
# user 50.0, system 10.0, iowait 0.0 (backwards counts 0), steal 0.0, busiest 100.0
LATER = """\
cpu  9272 3 2490 71826 175 2 36 18 0 0
cpu0 832 3 733 40283 17 2 7 7 0 0
ctxt 230002
"""


def texts(share: CpuShare) -> list[str]:
    """The section as the line writes it (one decimal each)."""
    return [fixed1(share.user), fixed1(share.system), fixed1(share.iowait), fixed1(share.steal), fixed1(share.busiest)]


def test_the_parsed_readings_are_the_counters_of_the_text() -> None:
    """The hand-worked deltas below start from these counters, read off PREV by eye."""
    assert parse(PREV).unwrap() == ProcStat(
        total=CpuTimes(9102, 0, 2455, 71656, 170, 0, 32, 12),
        cores=((0, CpuTimes(687, 0, 713, 40263, 13, 0, 5, 3)), (1, CpuTimes(8415, 0, 1741, 31392, 157, 0, 26, 9))),
    )


def test_shares_between_two_readings() -> None:
    share = cpu_share_between(parse(PREV).unwrap(), parse(CUR).unwrap())
    assert texts(share) == ["41.0", "10.3", "3.3", "2.0", "84.0"]
    assert share.user == 41.0 and share.steal == 2.0 and share.busiest == 84.0
    assert abs(share.system - 31 / 3) < 1e-12 and abs(share.iowait - 10 / 3) < 1e-12


def test_the_seeds_cpu_share_gives_the_same() -> None:
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
