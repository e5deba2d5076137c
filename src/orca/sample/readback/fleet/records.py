"""What a fleet is made of (docs/metrics.md, "A fleet"): a row per run, the totals, and who stands out. Their field
names are the keys of `orca metrics --json` for a fleet."""

from __future__ import annotations

from dataclasses import dataclass

from orca.sample.readback.fleet.flags import Flag, HostFlag
from orca.sample.readback.fleet.usage import Usage
from orca.sample.readback.gather.records import InstanceSummary


def begin(summary: InstanceSummary) -> float:
    """When a run started: its last line less its duration (its first line's `t` less that line's `dt`, the
    command's start), as the `total:` line counts it."""
    return summary.last_t - summary.duration


@dataclass(frozen=True, slots=True)
class FleetRow:
    """One run of the fleet (or a source with no run in it: `summary` None)."""

    label: str
    """What the table, the lists, the chart and `--json` call it (`words.run_labels`)."""
    summary: InstanceSummary | None
    usage: Usage | None
    flags: tuple[Flag, ...]
    name: str
    """The file, `-` or object."""

    @property
    def end(self) -> float | None:
        return None if self.summary is None else self.summary.last_t

    @property
    def begin(self) -> float | None:
        return None if self.summary is None else begin(self.summary)

    @property
    def span(self) -> float | None:
        """Seconds from its first line to its last (their `t`)."""
        return None if self.summary is None else span(self.summary)


def span(summary: InstanceSummary) -> float:
    """Seconds from a run's first line to its last (their `t`): the table's `span`."""
    return round(max(0.0, summary.last_t - summary.first_t), 3)


@dataclass(frozen=True, slots=True)
class FleetTotals:
    """The fleet as a whole. Hours are of the time the lines cover."""

    runs: int
    instance_hours: float
    """The runs' durations added up."""
    cpu_hours_used: float
    cpu_hours_available: float
    """The CPUs each run had over the time its lines cover, added up: its cgroup's limit; else its host's cores, a
    host that several runs shared counted once over the time any of them covers."""
    memory_gib_hours_used: float
    memory_gib_hours_available: float
    first_start: float | None
    last_end: float | None

    @property
    def cpu_percent(self) -> float | None:
        """The fleet's CPU utilisation: what it used of what it had."""
        return 100 * self.cpu_hours_used / self.cpu_hours_available if self.cpu_hours_available else None

    @property
    def memory_percent(self) -> float | None:
        return 100 * self.memory_gib_hours_used / self.memory_gib_hours_available if self.memory_gib_hours_available \
            else None


@dataclass(frozen=True, slots=True)
class Fleet:
    rows: tuple[FleetRow, ...]
    """In the order asked for (by label unless told otherwise)."""
    totals: FleetTotals
    sorted_by: str
    hosts_saturated: tuple[HostFlag, ...] = ()
    """The hosts, of runs judged by their own processes, that were themselves saturated."""

    def flagged(self, flag: str) -> tuple[FleetRow, ...]:
        """The rows with `flag`, in the table's order."""
        return tuple(row for row in self.rows if any(each.flag == flag for each in row.flags))
