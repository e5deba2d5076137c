"""The running figures of one section of a summary: disk io or network traffic, and one container's."""

from __future__ import annotations

from orca.sample.compute.report.exact import ExactSum, rise
from orca.sample.compute.report.summary import ContainerSummary, TrafficSummary


class Traffic:
    """Disk io or network so far: bytes moved (rate × `dt`) each way, and the highest rates."""

    __slots__ = ("first", "first_peak", "second", "second_peak")

    def __init__(self) -> None:
        self.first, self.second = ExactSum(), ExactSum()
        self.first_peak = self.second_peak = 0.0

    def add(self, first: float, second: float, first_peak: float, second_peak: float) -> None:
        self.first.add(first)
        self.second.add(second)
        self.first_peak, self.second_peak = first_peak, second_peak

    def merge(self, later: Traffic) -> None:
        self.first.merge(later.first)
        self.second.merge(later.second)
        self.first_peak = max(self.first_peak, later.first_peak)
        self.second_peak = max(self.second_peak, later.second_peak)

    def summary(self) -> TrafficSummary:
        return TrafficSummary(round(self.first.value()), round(self.second.value()), int(self.first_peak),
                              int(self.second_peak))


def merged_traffic(earlier: Traffic | None, later: Traffic | None) -> Traffic | None:
    if earlier is None or later is None:
        return later if earlier is None else earlier
    earlier.merge(later)
    return earlier


class ContainerFold:
    """One container's figures so far."""

    __slots__ = ("first_oom_kill", "mem_max", "mem_peak", "oom_kills", "pids_peak", "throttled", "throttled_count",
                 "throttled_sum")

    def __init__(self) -> None:
        self.mem_peak = 0
        self.oom_kills: list[int] = []
        """The `oom_kill` values of the batch being read, then only the last one."""
        self.first_oom_kill: int | None = None
        """The first `oom_kill` value: where a fold of the lines before these would take the count up."""
        self.mem_max: int | None = None
        self.pids_peak = -1
        self.throttled: list[float] = []
        """The `throttled` values of the batch being read."""
        self.throttled_sum = ExactSum()
        self.throttled_count = 0

    def settle(self) -> int:
        """The batch's values taken in: how far `oom_kill` rose over them."""
        rose = 0
        if self.oom_kills:
            counts = self.oom_kills
            if self.first_oom_kill is None:
                self.first_oom_kill = counts[0]
            rose = rise(counts[0], counts)
            self.oom_kills = [counts[-1]]
        if self.throttled:
            self.throttled_sum.add(sum(self.throttled))
            self.throttled_count += len(self.throttled)
            self.throttled = []
        return rose

    def merge(self, later: ContainerFold) -> None:
        """`later`'s figures (of the lines after these) taken in; how far `oom_kill` rose is counted by the fold."""
        self.mem_peak = max(self.mem_peak, later.mem_peak)
        if later.oom_kills:
            self.oom_kills = later.oom_kills
        if self.first_oom_kill is None:
            self.first_oom_kill = later.first_oom_kill
        if later.mem_max is not None:
            self.mem_max = later.mem_max
        self.pids_peak = max(self.pids_peak, later.pids_peak)
        self.throttled_sum.merge(later.throttled_sum)
        self.throttled_count += later.throttled_count

    def summary(self, name: str, oom_rise: int) -> ContainerSummary:
        throttled = self.throttled_sum.value() / self.throttled_count if self.throttled_count else None
        return ContainerSummary(name, self.mem_peak, oom_rise, self.mem_max,
                                None if self.pids_peak < 0 else self.pids_peak, throttled)
