"""A fleet from its runs' summaries and usages (docs/metrics.md, "A fleet"): the rows in order, the totals, and each
run's flags by the rules that page states (idle, saturated, failed, straggler, gaps, no lines), their thresholds the
constants below. A row judged by its run's own processes is not judged by its host's figures: a host at its capacity
is said once, as the host's (`hosts_saturated`)."""

from __future__ import annotations

import itertools
import math
import operator
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from orca.sample.readback.fleet.columns import SORTS
from orca.sample.readback.fleet.records import (
    FAILED,
    GAPS,
    IDLE,
    NO_LINES,
    SATURATED,
    STRAGGLER,
    Flag,
    Fleet,
    FleetRow,
    FleetTotals,
    HostFlag,
    begin,
    span,
)
from orca.sample.readback.fleet.usage import IDLE_CPU, SATURATED_CPU, Usage
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.words import count, duration, exit_after, run_labels

IDLE_TIME_PERCENT = 5.0
IDLE_MEMORY_PERCENT = 20.0
SATURATED_TIME_PERCENT = 50.0
FULL_MEMORY_PERCENT = 90.0
THROTTLED_PERCENT = 20.0
MEMORY_PRESSURE_PERCENT = 10.0
STRAGGLERS_FROM = 3
STRAGGLER_SHARE = 0.25
GIB = 2**30


@dataclass(frozen=True, slots=True)
class Run:
    """One run read: its summary and its usage."""

    summary: InstanceSummary
    usage: Usage | None


def fleet(runs: Sequence[Run], empty: Sequence[tuple[str, str]] = (), sort: str = "name") -> Fleet:
    """The fleet of `runs`, and of the sources in `empty` that gave none (each with why: it had no sample line, it
    could not be read), its rows sorted by `sort` (a key of `SORTS`)."""
    names = [run.summary.name for run in runs] + [name for name, _ in empty]
    labels = run_labels([(run.summary.name, run.summary.host, run.summary.start) for run in runs], names)
    ends = _straggler_bound(runs)
    rows = [FleetRow(label, run.summary, run.usage, _flags(run, ends), run.summary.name)
            for label, run in zip(labels, runs, strict=True)]
    rows += [FleetRow(label, None, None, (Flag(NO_LINES, why),), name)
             for label, (name, why) in zip(run_labels([(name, "", None) for name, _ in empty], names), empty,
                                           strict=True)]
    rows.sort(key=SORTS[sort])
    return Fleet(tuple(rows), _totals(runs), sort, _hosts_saturated(runs))


def _covered(lows: Sequence[float], highs: Sequence[float]) -> float:
    """Seconds that any of the intervals from `lows[i]` to `highs[i]` covers.

    >>> _covered([0.0, 5.0, 20.0], [10.0, 12.0, 21.0])
    13.0
    """
    everyone: Sequence[int] = range(len(lows))
    pairs = zip(lows, highs, strict=True)
    if not all(map(operator.le, pairs, itertools.islice(zip(lows, highs, strict=True), 1, None))):
        # By begin, then end: two stable sorts, no pair kept a run.
        everyone = sorted(sorted(everyone, key=highs.__getitem__), key=lows.__getitem__)
    total, reached = 0.0, -math.inf
    for index in everyone:
        low, high = lows[index], highs[index]
        if high > reached:
            total += high - max(low, reached)
            reached = high
    return total


def shared_hosts(runs: Iterable[tuple[str, float, float, bool]]) -> list[float]:
    """Of each run (its host, begin, end, and whether its capacity is its host's rather than its cgroup's limit), the
    share of what it had that counts in the fleet's totals: 1 for a run with its own limit or alone on its host; for
    the runs that share a host, the time any of them covers over the sum of their times, so that the host's cores and
    memory are counted once.

    >>> shared_hosts([("a", 0.0, 10.0, True), ("a", 0.0, 10.0, True), ("b", 0.0, 10.0, True), ("a", 0, 10, False)])
    [0.5, 0.5, 1.0, 1.0]
    """
    hosts: dict[str, tuple[array[float], array[float]]] = {}
    of: list[str | None] = []
    for host, low, high, of_host in runs:
        if of_host:
            lows, highs = hosts.setdefault(host, (array("d"), array("d")))
            lows.append(low)
            highs.append(high)
        of.append(host if of_host else None)
    factors = {host: _covered(lows, highs) / whole
               if (whole := sum(high - low for low, high in zip(lows, highs, strict=True))) > 0 else 1 / len(lows)
               for host, (lows, highs) in hosts.items()}
    return [1.0 if host is None else factors[host] for host in of]


def _totals(runs: Sequence[Run]) -> FleetTotals:
    usages = [run.usage for run in runs if run.usage is not None]
    placed = [run.summary for run in runs if run.usage is not None]
    cpu_shares = shared_hosts([(summary.host, begin(summary), summary.last_t, not usage.cpu_limited)
                               for summary, usage in zip(placed, usages, strict=True)])
    memory_shares = shared_hosts([(summary.host, begin(summary), summary.last_t, not usage.memory_limited)
                                  for summary, usage in zip(placed, usages, strict=True)])

    def hours(figure: Callable[[Usage], float | None], unit: float = 1.0, shares: Sequence[float] = ()) -> float:
        return sum(value * (shares[index] if shares else 1.0) for index, usage in enumerate(usages)
                   if (value := figure(usage)) is not None) / 3600 / unit

    begins = [begin(run.summary) for run in runs]
    return FleetTotals(
        runs=len(runs),
        instance_hours=sum(run.summary.duration for run in runs) / 3600,
        cpu_hours_used=hours(lambda usage: usage.core_seconds_used),
        cpu_hours_available=hours(lambda usage: usage.core_seconds_available, shares=cpu_shares),
        memory_gib_hours_used=hours(lambda usage: usage.byte_seconds_used, GIB),
        memory_gib_hours_available=hours(lambda usage: usage.byte_seconds_available, GIB, memory_shares),
        first_start=min(begins, default=None),
        last_end=max((run.summary.last_t for run in runs), default=None),
    )


def _straggler_bound(runs: Sequence[Run]) -> tuple[float, float] | None:
    """The median end, and how much later a run that started before it must end to be a straggler; None for a fleet
    too small to say."""
    if len(runs) < STRAGGLERS_FROM:
        return None
    return median([run.summary.last_t for run in runs]), STRAGGLER_SHARE * median([span(run.summary)
                                                                                    for run in runs])


def median(values: list[float]) -> float:
    """The middle value (the mean of the two in the middle of an even count): `statistics.median`, whose import
    (fractions, decimal) would cost a fleet's table more than these three lines.

    >>> median([3.0, 1.0, 2.0]), median([4.0, 1.0, 2.0, 3.0])
    (2.0, 2.5)
    """
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _flags(run: Run, ends: tuple[float, float] | None) -> tuple[Flag, ...]:
    summary, usage = run.summary, run.usage
    flags: list[Flag] = []
    if usage is not None and (idle := _idle(usage)) is not None:
        flags.append(Flag(IDLE, idle))
    saturated = _saturated(summary, usage)
    if saturated:
        flags.append(Flag(SATURATED, ", ".join(saturated)))
    if (failed := how_failed(summary)) is not None:
        flags.append(Flag(FAILED, failed))
    if ends is not None and (straggler := straggler_flag(begin(summary), summary.last_t, ends)) is not None:
        flags.append(straggler)
    if summary.gaps:
        flags.append(Flag(GAPS, count(summary.gaps, "gap")))
    return tuple(flags)


def flags_of(run: Run) -> tuple[Flag, ...]:
    """The run's flags but the straggler's, which the fleet's other runs decide (`straggler_flag`)."""
    return _flags(run, None)


def straggler_flag(began: float, ended: float, ends: tuple[float, float]) -> Flag | None:
    """The flag of a run that began at `began` and ended at `ended` when it straggled behind the fleet's `ends`
    (`_straggler_bound`)."""
    median_end, margin = ends
    late = ended - median_end
    if began <= median_end and late > margin and late > 0:
        return Flag(STRAGGLER, f"ended {duration(late)} after the median end")
    return None


def _idle(usage: Usage) -> str | None:
    above, peak = usage.cpu_above_idle_percent, usage.memory_peak_percent
    if above is None or peak is None or above > IDLE_TIME_PERCENT or peak > IDLE_MEMORY_PERCENT:
        return None
    of = " of one core" if usage.cpu_own else ""
    cpu = f"cpu at most {IDLE_CPU:g}%{of} throughout" if above == 0 else \
        f"cpu over {IDLE_CPU:g}%{of} only {above:.1f}% of the time"
    return f"{cpu}, memory peak {peak:.1f}%"


def _saturated(summary: InstanceSummary, usage: Usage | None) -> list[str]:
    """Why the run was at its capacity, each in a few words; empty when it was not."""
    why: list[str] = []
    if usage is not None:
        high, peak = usage.cpu_saturated_percent, usage.memory_peak_percent
        if high is not None and high >= SATURATED_TIME_PERCENT:
            why.append(f"cpu at {SATURATED_CPU:g}% or more {high:.0f}% of the time")
        if peak is not None and peak >= FULL_MEMORY_PERCENT:
            of = "its limit" if usage.memory_limited else "its total"
            why.append(f"memory peak {peak:.1f}% of {of}")
    group = summary.cgroup
    kills = (0 if group is None else group.oom_kills) + sum(container.oom_kills for container in summary.containers)
    if kills:
        why.append(count(kills, "OOM kill"))
    if group is not None and group.throttled is not None and group.throttled >= THROTTLED_PERCENT:
        why.append(f"throttled {group.throttled:.0f}% of periods")
    pressure = summary.pressure
    own = usage is not None and (usage.cpu_own or usage.memory_own)  # then the host's pressure is the host's
    if not own and pressure is not None and pressure.memory is not None and pressure.memory >= MEMORY_PRESSURE_PERCENT:
        why.append(f"memory pressure {pressure.memory:.0f}%")
    return why


def how_failed(summary: InstanceSummary) -> str | None:
    """How a run failed, in a few words: its COMMAND ended by a signal, with a non-zero status, or could not start;
    or its cgroup had an OOM kill. None for a run that did not (or whose lines do not say)."""
    group = summary.cgroup
    kills = 0 if group is None else group.oom_kills
    oom = count(kills, "OOM kill") if kills else None
    ended = None if summary.run is None else summary.run.exit
    failed = ended is not None and (ended.error is not None or ended.signal is not None or bool(ended.code))
    how = exit_after(ended) if ended is not None and failed else None
    return ", ".join(part for part in (how, oom) if part) or None


def _hosts_saturated(runs: Sequence[Run]) -> tuple[HostFlag, ...]:
    """The hosts of runs judged by their own processes whose own figures say they were at their capacity: see
    `hosts_saturated`."""
    return hosts_saturated([
        (run.summary.host, usage.host_cpu_saturated_percent, run.summary.duration, usage.host_memory_peak_percent,
         None if run.summary.pressure is None else run.summary.pressure.memory)
        for run in runs if (usage := run.usage) is not None and (usage.cpu_own or usage.memory_own)])


HostFigures = tuple[str, float | None, float, float | None, float | None]
"""A run's host, the host's `host_cpu_saturated_percent`, the run's duration, the host's `host_memory_peak_percent`
and the run's memory pressure."""


def hosts_saturated(runs: Sequence[HostFigures]) -> tuple[HostFlag, ...]:
    """Of the runs judged by their own processes (`HostFigures`), the hosts whose own figures say they were at their
    capacity: CPU saturated over `SATURATED_TIME_PERCENT` % of their runs' time (each run weighted by its duration),
    memory at `FULL_MEMORY_PERCENT` %, or memory pressure at `MEMORY_PRESSURE_PERCENT` % on average."""
    hosts: dict[str, list[HostFigures]] = {}
    for run in runs:
        hosts.setdefault(run[0], []).append(run)
    flagged = []
    for host, on in sorted(hosts.items()):
        why = []
        weighted = [(high, seconds) for _, high, seconds, _, _ in on if high is not None]
        weight = sum(seconds for _, seconds in weighted)
        if weighted and weight > 0:
            high = sum(percent * seconds for percent, seconds in weighted) / weight
            if high >= SATURATED_TIME_PERCENT:
                why.append(f"cpu at {SATURATED_CPU:g}% or more {high:.0f}% of the time")
        peak = max((peak for _, _, _, peak, _ in on if peak is not None), default=None)
        if peak is not None and peak >= FULL_MEMORY_PERCENT:
            why.append(f"memory peak {peak:.1f}% of its total")
        stalls = [(stall, seconds) for _, _, seconds, _, stall in on if stall is not None]
        weight = sum(seconds for _, seconds in stalls)
        if stalls and weight > 0 and (stalled := sum(p * s for p, s in stalls) / weight) >= MEMORY_PRESSURE_PERCENT:
            why.append(f"memory pressure {stalled:.0f}%")
        if why:
            flagged.append(HostFlag(host, len(on), ", ".join(why)))
    return tuple(flagged)
