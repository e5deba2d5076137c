"""What a fleet is made of (docs/metrics.md, "A fleet"): its runs, each read, and their totals, whose field names are
the keys of `orca metrics --json` for a fleet's totals."""

from __future__ import annotations

from dataclasses import dataclass

from orca.sample.readback.fleet.usage import Usage, percent_of
from orca.sample.readback.gather.records import InstanceSummary


@dataclass(frozen=True, slots=True)
class Run:
    """One run read: its summary and its usage (none for a run whose lines give none)."""

    summary: InstanceSummary
    usage: Usage | None


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
        return percent_of(self.cpu_hours_used, self.cpu_hours_available)

    @property
    def memory_percent(self) -> float | None:
        return percent_of(self.memory_gib_hours_used, self.memory_gib_hours_available)
