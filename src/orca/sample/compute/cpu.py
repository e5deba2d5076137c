"""The `cpu` section (docs/behaviour.md §3.3): shares of all cores' time between two /proc/stat readings."""

from __future__ import annotations

from collections.abc import Sequence

from orca.sample.compute.line import CpuShare
from orca.sample.parse.proc_stat import CpuTimes, ProcStat

ZERO_SHARE = CpuShare(user=0.0, system=0.0, iowait=0.0, steal=0.0, busiest=0.0)
_ZERO_TIMES = CpuTimes(0, 0, 0, 0, 0, 0, 0, 0)


def cpu_share_between(prev: ProcStat, cur: ProcStat) -> CpuShare:
    """Percentages of all cores' time from `prev` to `cur` (docs/behaviour.md §3.3).

    A counter that went backwards counts 0; a zero total gives 0.0 everywhere; `busiest` is taken over the cores
    present in both readings (matched by their `cpuN` number).

    >>> a = ProcStat(CpuTimes(100, 0, 50, 800, 0, 0, 0, 0), ((0, CpuTimes(90, 0, 10, 300, 0, 0, 0, 0)),))
    >>> b = ProcStat(CpuTimes(140, 10, 60, 910, 10, 10, 10, 0), ((0, CpuTimes(170, 0, 20, 310, 0, 0, 0, 0)),))
    >>> cpu_share_between(a, b)
    CpuShare(user=25.0, system=15.0, iowait=5.0, steal=0.0, busiest=90.0)
    """
    user, nice, system, idle, iowait, irq, softirq, steal = _increase(prev.total, cur.total)
    total = user + nice + system + idle + iowait + irq + softirq + steal
    if total == 0:
        return ZERO_SHARE
    previous_cores = dict(prev.cores)
    busiest = max(
        (_busy_percent(_increase(previous_cores[n], times)) for n, times in cur.cores if n in previous_cores),
        default=0.0,
    )
    return CpuShare(
        user=_percent(user + nice, total),
        system=_percent(system + irq + softirq, total),
        iowait=_percent(iowait, total),
        steal=_percent(steal, total),
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
    padded = [*counters[:8], *[0] * (8 - len(counters))]
    return CpuTimes(*padded)


_Counters = tuple[int, int, int, int, int, int, int, int]


def _increase(prev: CpuTimes, cur: CpuTimes) -> _Counters:
    """Per-counter increase, in `CpuTimes`' field order; a counter that went backwards (hotplug, a reset) counts 0.
    A plain tuple: one is made per core every line."""
    return (
        max(0, cur.user - prev.user),
        max(0, cur.nice - prev.nice),
        max(0, cur.system - prev.system),
        max(0, cur.idle - prev.idle),
        max(0, cur.iowait - prev.iowait),
        max(0, cur.irq - prev.irq),
        max(0, cur.softirq - prev.softirq),
        max(0, cur.steal - prev.steal),
    )


def _busy_percent(increase: _Counters) -> float:
    total = sum(increase)
    idle, iowait = increase[3], increase[4]
    return _percent(total - idle - iowait, total) if total else 0.0


def _percent(part: int, total: int) -> float:
    # Integer product then one true division: correctly rounded, so part <= total never gives more than 100.0,
    # whatever the size of the counters.
    return part * 100 / total
