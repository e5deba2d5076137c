"""The `cpu` section (docs/behaviour.md §3.3): shares of all cores' time between two /proc/stat readings; and the share
of all cores' time a count of CPU ticks is, which `run.cpu` and `run.top` are (§3.12)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import sub

from orca.sample.line_format import MOST_PERCENT, CpuShare
from orca.sample.parse.proc_stat import CpuTimes, ProcStat

ZERO_SHARE = CpuShare(user=0.0, system=0.0, iowait=0.0, steal=0.0, busiest=0.0)


def cpu_share_between(prev: ProcStat, cur: ProcStat) -> CpuShare:
    """Percentages of all cores' time from `prev` to `cur` (docs/behaviour.md §3.3).

    A counter that went backwards counts 0; a zero total gives 0.0 everywhere; `busiest` is taken over the cores
    present in both readings (matched by their `cpuN` number).

    >>> a = ProcStat(CpuTimes(100, 0, 50, 800, 0, 0, 0, 0), ((0, CpuTimes(90, 0, 10, 300, 0, 0, 0, 0)),))
    >>> b = ProcStat(CpuTimes(140, 10, 60, 910, 10, 10, 10, 0), ((0, CpuTimes(170, 0, 20, 310, 0, 0, 0, 0)),))
    >>> cpu_share_between(a, b)
    CpuShare(user=25.0, system=15.0, iowait=5.0, steal=0.0, busiest=90.0)
    """
    # One function, each counter's increase taken by `map` in C: it runs every line, after seconds asleep, when
    # every function it calls is fetched again (bench/README.md).
    increase = list(map(sub, cur.total, prev.total))
    if min(increase) < 0:  # a counter went backwards (a reset, a core brought back): it counts 0
        increase = list(map(max, increase, repeat(0)))
    user, nice, system, idle, iowait, irq, softirq, steal = increase
    total = user + nice + system + idle + iowait + irq + softirq + steal
    if total == 0:
        return ZERO_SHARE
    busiest = 0.0
    previous_cores = dict(prev.cores)  # a core that came or went is matched by its number, not its place
    for number, times in cur.cores:
        before = previous_cores.get(number)
        if before is None:
            continue
        core = list(map(sub, times, before))
        if min(core) < 0:
            core = list(map(max, core, repeat(0)))
        core_total = sum(core)
        if core_total:
            # Integer product, then one true division: correctly rounded, so a part never gives more than 100.0.
            busiest = max(busiest, (core_total - core[3] - core[4]) * 100 / core_total)
    return CpuShare(
        user=(user + nice) * 100 / total,
        system=(system + irq + softirq) * 100 / total,
        iowait=iowait * 100 / total,
        steal=steal * 100 / total,
        busiest=busiest,
    )


def cpu_share(prev: Sequence[Sequence[int]], cur: Sequence[Sequence[int]]) -> CpuShare:
    """The documented API's `cpu_share`, over readings as `parse_proc_stat` gives them: the aggregate first, then
    each core.

    Cores are matched by position; missing trailing counters are 0 and extra ones ignored; an empty reading gives
    0.0 everywhere.

    >>> cpu_share([[0, 0, 0, 0], [0, 0, 0, 0]], [[30, 0, 10, 60], [30, 0, 10, 60]])
    CpuShare(user=30.0, system=10.0, iowait=0.0, steal=0.0, busiest=40.0)
    >>> cpu_share([], [[1, 2, 3]])
    CpuShare(user=0.0, system=0.0, iowait=0.0, steal=0.0, busiest=0.0)
    """
    if not prev or not cur:
        return ZERO_SHARE
    return cpu_share_between(_proc_stat(prev), _proc_stat(cur))


def _proc_stat(reading: Sequence[Sequence[int]]) -> ProcStat:
    return ProcStat(
        total=_times(reading[0]), cores=tuple((n, _times(counters)) for n, counters in enumerate(reading[1:]))
    )


def _times(counters: Sequence[int]) -> CpuTimes:
    return CpuTimes(*counters[:8], *[0] * (8 - len(counters[:8])))


def share_of_cores(ticks: int, seconds: float, ticks_per_second: int, cores: int) -> float:
    """Percent of all `cores`' time over `seconds` that `ticks` are; 0.0 without time or without cores.

    Not held to 100: a child reaped in a short interval brings its last ticks with it (the line written as COMMAND
    ends), and its share times the line's `dt` must give back the CPU used, or the lines do not add up to `wait4`'s
    figure. Held only to `MOST_PERCENT`, the most a line reads back.

    >>> share_of_cores(150, 2.0, 100, 4)
    18.75
    >>> share_of_cores(30, 0.001, 100, 2)  # 0.3 CPU-s reaped within the last millisecond
    15000.0
    """
    if seconds <= 0 or cores <= 0 or ticks_per_second <= 0:
        return 0.0
    return min(float(MOST_PERCENT), 100.0 * ticks / (ticks_per_second * seconds * cores))
