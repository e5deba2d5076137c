"""A fleet from its runs' summaries and usages (docs/metrics.md, "A fleet"): the rows in order, the totals, and
each run's flags by the rules the page states, here once in code:

- idle: its CPU over `IDLE_CPU` % of what it had for at most `IDLE_TIME_PERCENT` % of the time, and its memory never
  over `IDLE_MEMORY_PERCENT` % (a smaller instance, or fewer, would do);
- saturated: its CPU at `SATURATED_CPU` % or more for at least `SATURATED_TIME_PERCENT` % of the time, its memory at
  `FULL_MEMORY_PERCENT` % or more of its total or its cgroup's limit, an OOM kill (its cgroup's or a container's),
  its cgroup throttled in `THROTTLED_PERCENT` % of periods or more on average, or some task stalled on memory
  `MEMORY_PRESSURE_PERCENT` % of the time or more;
- straggler: in a fleet of at least `STRAGGLERS_FROM` runs, it started before the runs' median end and ended later
  than it by more than `STRAGGLER_SHARE` of the median duration (the run waited on it);
- gaps: its lines have gaps (the sampler was stopped or starved); no lines: its source had no sample line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from orca.sample.readback.fleet.records import (
    GAPS,
    IDLE,
    NO_LINES,
    SATURATED,
    STRAGGLER,
    Flag,
    Fleet,
    FleetRow,
    FleetTotals,
    begin,
)
from orca.sample.readback.fleet.usage import IDLE_CPU, SATURATED_CPU, Usage
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.summary.text import duration, utc

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


def _optional_key(value: float | None, descending: bool = True) -> tuple[bool, float]:
    """A sort key: Nones last, the rest largest first (or smallest first)."""
    if value is None:
        return (True, 0.0)
    return (False, -value if descending else value)


def _cpu(row: FleetRow) -> float | None:
    return None if row.usage is None else row.usage.cpu_percent


def _cpu_p95(row: FleetRow) -> float | None:
    return None if row.usage is None else row.usage.cpu_p95


def _memory(row: FleetRow) -> float | None:
    return None if row.usage is None else row.usage.memory_peak_percent


def _rss(row: FleetRow) -> float | None:
    return rss_peak(row.summary)


def _disk(row: FleetRow) -> float | None:
    return None if row.summary is None or row.summary.disk is None else row.summary.disk.peak_percent


def _io(row: FleetRow) -> float | None:
    return io_bytes(row.summary)


def _net(row: FleetRow) -> float | None:
    return net_bytes(row.summary)


def _span(row: FleetRow) -> float | None:
    return None if row.summary is None else row.summary.duration


def _lines(row: FleetRow) -> float | None:
    return None if row.summary is None else row.summary.lines


SORTS: dict[str, Callable[[FleetRow], tuple[bool, float] | tuple[str, str, float]]] = {  # as `SORT_COLUMNS`
    "name": lambda row: (row.name, "" if row.summary is None else row.summary.host, row.begin or 0.0),
    "start": lambda row: _optional_key(row.begin, descending=False),
    "end": lambda row: _optional_key(row.end),
    "span": lambda row: _optional_key(_span(row)),
    "lines": lambda row: _optional_key(_lines(row)),
    "cpu": lambda row: _optional_key(_cpu(row)),
    "p95": lambda row: _optional_key(_cpu_p95(row)),
    "mem": lambda row: _optional_key(_memory(row)),
    "rss": lambda row: _optional_key(_rss(row)),
    "disk": lambda row: _optional_key(_disk(row)),
    "io": lambda row: _optional_key(_io(row)),
    "net": lambda row: _optional_key(_net(row)),
}
"""Each of `SORT_COLUMNS`' key: by label; by start (earliest first); or by a figure, the largest first."""


def rss_peak(summary: InstanceSummary | None) -> int | None:
    """The run's own processes' resident memory at its largest, when the lines have a run."""
    if summary is None or summary.run is None or summary.memory is None:
        return None
    return summary.memory.rss_peak


def io_bytes(summary: InstanceSummary | None) -> int | None:
    """Bytes read and written by the host's disks over the run."""
    return None if summary is None or summary.io is None else summary.io.read + summary.io.write


def net_bytes(summary: InstanceSummary | None) -> int | None:
    """Bytes received and sent by the host over the run."""
    return None if summary is None or summary.net is None else summary.net.received + summary.net.sent


def fleet(runs: Sequence[Run], empty: Sequence[tuple[str, str]] = (), sort: str = "name") -> Fleet:
    """The fleet of `runs`, and of the sources in `empty` that gave none (each with why: it had no sample line, it
    could not be read), its rows sorted by `sort` (a key of `SORTS`)."""
    labels = run_labels([(run.summary.name, run.summary.host, run.summary.start) for run in runs])
    ends = _straggler_bound(runs)
    rows = [FleetRow(label, run.summary, run.usage, _flags(run, ends), run.summary.name)
            for label, run in zip(labels, runs, strict=True)]
    rows += [FleetRow(_short(name, [name]), None, None, (Flag(NO_LINES, why),), name) for name, why in empty]
    rows.sort(key=SORTS[sort])
    return Fleet(tuple(rows), _totals(runs), sort)


def _totals(runs: Sequence[Run]) -> FleetTotals:
    usages = [run.usage for run in runs if run.usage is not None]

    def hours(figure: Callable[[Usage], float | None], unit: float = 1.0) -> float:
        return sum(value for usage in usages if (value := figure(usage)) is not None) / 3600 / unit

    begins = [begin(run.summary) for run in runs]
    return FleetTotals(
        runs=len(runs),
        instance_hours=sum(run.summary.duration for run in runs) / 3600,
        cpu_hours_used=hours(lambda usage: usage.core_seconds_used),
        cpu_hours_available=hours(lambda usage: usage.core_seconds_available),
        memory_gib_hours_used=hours(lambda usage: usage.byte_seconds_used, GIB),
        memory_gib_hours_available=hours(lambda usage: usage.byte_seconds_available, GIB),
        first_start=min(begins, default=None),
        last_end=max((run.summary.last_t for run in runs), default=None),
    )


def _straggler_bound(runs: Sequence[Run]) -> tuple[float, float] | None:
    """The median end, and how much later a run that started before it must end to be a straggler; None for a fleet
    too small to say."""
    if len(runs) < STRAGGLERS_FROM:
        return None
    return _median([run.summary.last_t for run in runs]), STRAGGLER_SHARE * _median([run.summary.duration
                                                                                    for run in runs])


def _median(values: list[float]) -> float:
    """The middle value (the mean of the two in the middle of an even count): `statistics.median`, whose import
    (fractions, decimal) would cost a fleet's table more than these three lines.

    >>> _median([3.0, 1.0, 2.0]), _median([4.0, 1.0, 2.0, 3.0])
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
    if ends is not None:
        median_end, margin = ends
        late = summary.last_t - median_end
        if begin(summary) <= median_end and late > margin and late > 0:
            flags.append(Flag(STRAGGLER, f"ended {duration(late)} after the median end"))
    if summary.gaps:
        flags.append(Flag(GAPS, f"{summary.gaps:,} gap{'s' if summary.gaps > 1 else ''}"))
    return tuple(flags)


def _idle(usage: Usage) -> str | None:
    above, peak = usage.cpu_above_idle_percent, usage.memory_peak_percent
    if above is None or peak is None or above > IDLE_TIME_PERCENT or peak > IDLE_MEMORY_PERCENT:
        return None
    cpu = f"cpu at most {IDLE_CPU:g}% throughout" if above == 0 else \
        f"cpu over {IDLE_CPU:g}% only {above:.1f}% of the time"
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
        why.append(f"{kills:,} OOM kill{'s' if kills > 1 else ''}")
    if group is not None and group.throttled is not None and group.throttled >= THROTTLED_PERCENT:
        why.append(f"throttled {group.throttled:.0f}% of periods")
    pressure = summary.pressure
    if pressure is not None and pressure.memory is not None and pressure.memory >= MEMORY_PRESSURE_PERCENT:
        why.append(f"memory pressure {pressure.memory:.0f}%")
    return why


def run_labels(runs: Sequence[tuple[str, str, float | None]]) -> list[str]:
    """Each run's label, from its source's name, host and start (see `FleetRow.label`).

    >>> run_labels([("m/a.jsonl", "h", 1.0), ("m/b.jsonl", "h", 1.0)])
    ['a', 'b']
    >>> run_labels([("x/a.jsonl", "h", 1.0), ("y/a.jsonl", "h", 1.0)])
    ['x/a', 'y/a']
    >>> run_labels([("a.jsonl", "h1", 1.0), ("a.jsonl", "h2", 1.0), ("a.jsonl", "h2", 3600.0)])
    ['a (h1)', 'a (h2) 00:00:01', 'a (h2) 01:00:00']
    """
    names = sorted({name for name, _, _ in runs})
    hosts: dict[str, set[str]] = {}
    starts: dict[tuple[str, str], int] = {}
    for name, host, _ in runs:
        hosts.setdefault(name, set()).add(host)
        starts[(name, host)] = starts.get((name, host), 0) + 1
    labels = []
    for name, host, start in runs:
        label = _short(name, names)
        if len(hosts[name]) > 1:
            label += f" ({host})"
        if starts[(name, host)] > 1:
            label += " " + ("before start" if start is None else utc(start)[11:19])
        labels.append(label)
    return labels


def _short(name: str, names: Sequence[str]) -> str:
    """`name` without `.jsonl`, and without its directory when no other of `names` has the same file name."""
    base = name.rsplit("/", 1)[-1]
    if sum(1 for other in names if other.rsplit("/", 1)[-1] == base) > 1:
        base = name
    return base.removesuffix(".jsonl")
