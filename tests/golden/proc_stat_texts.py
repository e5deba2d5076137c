"""/proc/stat texts whose `cpu` deltas are worked out by hand (docs/behaviour.md §3.3).

PREV is the `cpu` lines (and `ctxt`) of this machine's /proc/stat, Linux 6.18.44-fc-v857, x86_64, 2 cores, read while
writing these tests; the long `intr` and `softirq` lines are left out (the parser ignores every non-`cpu` line). CUR
and LATER are PREV edited by hand so that the deltas are known. Shared by the `cpu` and the whole-line golden tests.
"""

from __future__ import annotations

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
