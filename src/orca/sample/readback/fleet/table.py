"""A fleet from its runs' summaries and usages (docs/metrics.md, "A fleet"): the rows in order, the totals, and each
run's flags (`fleet/flags.py`)."""

from __future__ import annotations

import itertools
import math
import operator
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from orca.sample.readback.fleet.columns import SORTS
from orca.sample.readback.fleet.flags import (
    GAPS,
    NO_LINES,
    STRAGGLER_SHARE,
    STRAGGLERS_FROM,
    Flag,
    HostFlag,
    flags_of,
    hosts_saturated,
    straggler_flag,
)
from orca.sample.readback.fleet.records import Fleet, FleetRow, FleetTotals, begin, span
from orca.sample.readback.fleet.usage import Usage
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.words import run_labels

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
            total += high - (reached if reached > low else low)  # `max(low, reached)`, without a call a run
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
    factors = {host: host_share(lows, highs) for host, (lows, highs) in hosts.items()}
    return [1.0 if host is None else factors[host] for host in of]


def host_share(lows: Sequence[float], highs: Sequence[float]) -> float:
    """`shared_hosts`' share of each of the runs that share a host, from their begins and ends (at least one)."""
    whole = sum(map(operator.sub, highs, lows))
    return _covered(lows, highs) / whole if whole > 0 else 1 / len(lows)


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
    flags = flags_of(run.summary, run.usage)
    if ends is None or (straggler := straggler_flag(begin(run.summary), run.summary.last_t, ends)) is None:
        return flags
    at = len(flags) - (bool(flags) and flags[-1].flag == GAPS)
    return (*flags[:at], straggler, *flags[at:])


def _hosts_saturated(runs: Sequence[Run]) -> tuple[HostFlag, ...]:
    """The hosts of runs judged by their own processes whose own figures say they were at their capacity: see
    `hosts_saturated`."""
    return hosts_saturated([
        (run.summary.host, usage.host_cpu_saturated_percent, run.summary.duration, usage.host_memory_peak_percent,
         None if run.summary.pressure is None else run.summary.pressure.memory)
        for run in runs if (usage := run.usage) is not None and (usage.cpu_own or usage.memory_own)])
