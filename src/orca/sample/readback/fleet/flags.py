"""Why a run of a fleet stands out (docs/metrics.md, "Who stands out"): its flags by the rules that page states
(idle, saturated, failed, straggler, gaps, no lines), their thresholds the constants below, each with why in a few
words. A row judged by its run's own processes is not judged by its host's figures: a host at its capacity is said
once, as the host's (`hosts_saturated`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orca.sample.readback.fleet.usage import IDLE_CPU, SATURATED_CPU, Usage
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.words import count, duration, exit_after, percent

IDLE, SATURATED, FAILED, STRAGGLER, GAPS, NO_LINES = "idle", "saturated", "failed", "straggler", "gaps", "no lines"
"""The flags, in the order a row shows them."""
IDLE_TIME_PERCENT = 5.0
IDLE_MEMORY_PERCENT = 20.0
SATURATED_TIME_PERCENT = 50.0
FULL_MEMORY_PERCENT = 90.0
THROTTLED_PERCENT = 20.0
MEMORY_PRESSURE_PERCENT = 10.0
STRAGGLERS_FROM = 3
STRAGGLER_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class Flag:
    """Why a run stands out."""

    flag: str
    """One of `IDLE`, `SATURATED`, `FAILED`, `STRAGGLER`, `GAPS`, `NO_LINES`."""
    why: str
    """The figures that made it so, in a few words."""


@dataclass(frozen=True, slots=True)
class HostFlag:
    """A host that was itself saturated, whatever the runs on it used of it."""

    host: str
    runs: int
    """The fleet's runs on it whose rows are their own processes' figures."""
    why: str


def flags_of(summary: InstanceSummary, usage: Usage | None) -> tuple[Flag, ...]:
    """The run's flags but the straggler's, which the fleet's other runs decide (`straggler_flag`)."""
    flags: list[Flag] = []
    if usage is not None and (idle := idle_why(usage)) is not None:
        flags.append(Flag(IDLE, idle))
    if full := full_why(summary, usage):
        flags.append(Flag(SATURATED, ", ".join(full)))
    if (failed := how_failed(summary)) is not None:
        flags.append(Flag(FAILED, failed))
    if summary.gaps:
        flags.append(Flag(GAPS, count(summary.gaps, "gap")))
    return tuple(flags)


def straggler_flag(began: float, ended: float, ends: tuple[float, float]) -> Flag | None:
    """The flag of a run that began at `began` and ended at `ended` when it straggled behind the fleet's `ends` (the
    median end, and how much later a run that started before it must end)."""
    median_end, margin = ends
    late = ended - median_end
    if began <= median_end and late > margin and late > 0:
        return Flag(STRAGGLER, f"ended {duration(late)} after the median end")
    return None


def idle_why(usage: Usage) -> str | None:
    """Why the run was idle, in a few words; None when it was not."""
    above, peak = usage.cpu_above_idle_percent, usage.memory_peak_percent
    if above is None or peak is None or above > IDLE_TIME_PERCENT or peak > IDLE_MEMORY_PERCENT:
        return None
    return idle_said(above, peak, usage.cpu_own)


def idle_said(above: float, peak: float, own: bool) -> str:
    """Why a run was idle: over `IDLE_CPU` `above` percent of the time, its memory's peak `peak` percent, its CPU its
    own processes' (`own`) or not."""
    of = " of one core" if own else ""
    cpu = f"cpu at most {IDLE_CPU:g}%{of} throughout" if above == 0 else \
        f"cpu over {IDLE_CPU:g}%{of} only {percent(above)} of the time"
    return f"{cpu}, memory peak {percent(peak)}"


def _cpu_saturated(high: float) -> str:
    return f"cpu at {SATURATED_CPU:g}% or more {high:.0f}% of the time"


def _memory_pressure(stalled: float) -> str:
    return f"memory pressure {stalled:.0f}%"


def full_why(summary: InstanceSummary, usage: Usage | None) -> list[str]:
    """Why the run was at its capacity, each in a few words; empty when it was not."""
    why: list[str] = []
    if usage is not None:
        high, peak = usage.cpu_saturated_percent, usage.memory_peak_percent
        if high is not None and high >= SATURATED_TIME_PERCENT:
            why.append(_cpu_saturated(high))
        if peak is not None and peak >= FULL_MEMORY_PERCENT:
            why.append(f"memory peak {percent(peak)} of {'its limit' if usage.memory_limited else 'its total'}")
    group = summary.cgroup
    kills = (0 if group is None else group.oom_kills) + sum(container.oom_kills for container in summary.containers)
    if kills:
        why.append(count(kills, "OOM kill"))
    if group is not None and group.throttled is not None and group.throttled >= THROTTLED_PERCENT:
        why.append(f"throttled {group.throttled:.0f}% of periods")
    pressure = summary.pressure
    own = usage is not None and (usage.cpu_own or usage.memory_own)  # then the host's pressure is the host's
    if not own and pressure is not None and pressure.memory is not None and pressure.memory >= MEMORY_PRESSURE_PERCENT:
        why.append(_memory_pressure(pressure.memory))
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


HostFigures = tuple[str, float | None, float, float | None, float | None]
"""A run's host, the host's `host_cpu_saturated_percent`, the run's duration, the host's `host_memory_peak_percent`
and the run's memory pressure."""


def hosts_saturated(runs: Sequence[HostFigures]) -> tuple[HostFlag, ...]:
    """Of the runs judged by their own processes (`HostFigures`), the hosts whose own figures say they were at their
    capacity: CPU saturated over `SATURATED_TIME_PERCENT` % of their runs' time (each run weighted by its duration),
    memory at `FULL_MEMORY_PERCENT` %, or memory pressure at `MEMORY_PRESSURE_PERCENT` % on average."""
    hosts: dict[str, list[HostFigures]] = {}
    for run in runs:  # not toolz's `groupby`: a summary imports this module, and toolz costs its start-up
        hosts.setdefault(run[0], []).append(run)
    flagged = []
    for host, on in sorted(hosts.items()):
        why = []
        weighted = [(high, seconds) for _, high, seconds, _, _ in on if high is not None]
        weight = sum(seconds for _, seconds in weighted)
        if weighted and weight > 0:
            high = sum(share * seconds for share, seconds in weighted) / weight
            if high >= SATURATED_TIME_PERCENT:
                why.append(_cpu_saturated(high))
        peak = max((peak for _, _, _, peak, _ in on if peak is not None), default=None)
        if peak is not None and peak >= FULL_MEMORY_PERCENT:
            why.append(f"memory peak {percent(peak)} of its total")
        stalls = [(stall, seconds) for _, _, seconds, _, stall in on if stall is not None]
        weight = sum(seconds for _, seconds in stalls)
        if stalls and weight > 0 and (stalled := sum(p * s for p, s in stalls) / weight) >= MEMORY_PRESSURE_PERCENT:
            why.append(_memory_pressure(stalled))
        if why:
            flagged.append(HostFlag(host, len(on), ", ".join(why)))
    return tuple(flagged)
