"""The running figures of one section of a summary: disk io or network traffic, and the containers'."""

from __future__ import annotations

from orca.sample.readback.distinct import DistinctCount
from orca.sample.readback.exact import ExactSum, rise
from orca.sample.readback.summary.records import ContainerSummary

MAX_CONTAINERS = 1000
"""The containers a summary shows at most: those with the highest memory peak."""


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

    def figures(self) -> tuple[int, int, int, int]:
        """Bytes moved each way, then the highest rate each way."""
        return round(self.first.value()), round(self.second.value()), int(self.first_peak), int(self.second_peak)


def merged_traffic(earlier: Traffic | None, later: Traffic | None) -> Traffic | None:
    if earlier is None or later is None:
        return later if earlier is None else earlier
    earlier.merge(later)
    return earlier


class ContainerFold:
    """One container's figures so far."""

    __slots__ = ("first_oom_kill", "mem_max", "mem_peak", "oom_kills", "oom_rise", "pids_peak", "throttled",
                 "throttled_count", "throttled_sum")

    def __init__(self) -> None:
        self.mem_peak = 0
        self.oom_kills: list[int] = []
        """The `oom_kill` values of the batch being read, then only the last one."""
        self.oom_rise = 0
        """How far `oom_kill` rose over the batches taken in."""
        self.first_oom_kill: int | None = None
        """The first `oom_kill` value: where a fold of the lines before these would take the count up."""
        self.mem_max: int | None = None
        self.pids_peak = -1
        self.throttled: list[float] = []
        """The `throttled` values of the batch being read."""
        self.throttled_sum = ExactSum()
        self.throttled_count = 0

    def settle(self) -> None:
        """The batch's values taken in."""
        if self.oom_kills:
            counts = self.oom_kills
            if self.first_oom_kill is None:
                self.first_oom_kill = counts[0]
            self.oom_rise += rise(counts[0], counts)
            self.oom_kills = [counts[-1]]
        if self.throttled:
            self.throttled_sum.add(sum(self.throttled))
            self.throttled_count += len(self.throttled)
            self.throttled = []

    def merge(self, later: ContainerFold) -> None:
        """`later`'s figures (of the lines after these) taken in."""
        if self.oom_kills and later.first_oom_kill is not None:
            self.oom_rise += rise(self.oom_kills[-1], [later.first_oom_kill])  # across the cut
        self.oom_rise += later.oom_rise
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

    def summary(self, name: str) -> ContainerSummary:
        throttled = self.throttled_sum.value() / self.throttled_count if self.throttled_count else None
        return ContainerSummary(name, self.mem_peak, self.oom_rise, self.mem_max,
                                None if self.pids_peak < 0 else self.pids_peak, throttled)


class ContainerFolds:
    """Each container's figures, by name, in bounded memory: past twice `MAX_CONTAINERS` names the folds of all but
    the `MAX_CONTAINERS` with the highest memory peak are let go (only their names are counted, in `let_go`), so
    400,000 containers of one line each cost what 2,000 do. A container let go whose name comes back counts from
    there. Up to that many names, nothing is let go and the figures are exact."""

    __slots__ = ("folds", "let_go")

    def __init__(self) -> None:
        self.folds: dict[str, ContainerFold] = {}
        """Read and written by the fold's loop over a batch's lines."""
        self.let_go = DistinctCount()

    def settle(self) -> None:
        """A batch's values taken in, then the containers bounded."""
        for fold in self.folds.values():
            fold.settle()
        self._bound(2 * MAX_CONTAINERS)

    def merge(self, later: ContainerFolds) -> None:
        """`later`'s figures (of the lines after these) taken in."""
        for name, theirs in later.folds.items():
            mine = self.folds.get(name)
            if mine is None:
                self.folds[name] = theirs
            else:
                mine.merge(theirs)
        self.let_go.merge(later.let_go)
        self._bound(2 * MAX_CONTAINERS)

    def summaries(self) -> tuple[tuple[ContainerSummary, ...], int, bool]:
        """The containers with the highest memory peak, at most `MAX_CONTAINERS`, by name; how many others there
        were, and whether that count is exact (rather than an estimate off by about 1 %)."""
        shown = self._largest(MAX_CONTAINERS)
        others = self.let_go.copy()
        others.add_all(self.folds)
        return (tuple(self.folds[name].summary(name) for name in sorted(shown)), others.count() - len(shown),
                others.exact)

    def _largest(self, count: int) -> list[str]:
        if len(self.folds) <= count:
            return list(self.folds)
        return sorted(self.folds, key=lambda name: (-self.folds[name].mem_peak, name))[:count]

    def _bound(self, most: int) -> None:
        if len(self.folds) > most:
            kept = self._largest(MAX_CONTAINERS)
            self.let_go.add_all(set(self.folds) - set(kept))
            self.folds = {name: self.folds[name] for name in kept}
