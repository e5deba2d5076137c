"""The host's `containers`, gathered (`section.py`): each container's memory peak, OOM kills, limit, processes and
throttling, by name, in bounded memory; each point's highest memory of each container (a keyed series)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orca.sample.line_format import Count, Percent, Sample
from orca.sample.readback.distinct import DistinctCount
from orca.sample.readback.exact import ExactSum, Rise
from orca.sample.readback.gather.section import PEAK, Bounds, Column, merge_by_name

MAX_CONTAINERS = 1000
"""The containers a summary shows at most: those with the highest memory peak."""


@dataclass(frozen=True, slots=True)
class ContainerSummary:
    """One container: each field as docs/metrics.md's `--json` says it (`containers`)."""

    name: str
    mem_peak: Count
    oom_kills: Count
    """How much `oom_kill` rose during the run (a counter that goes back counts from its new value)."""
    mem_max: Count | None = None
    """The newest memory limit seen."""
    pids_peak: Count | None = None
    throttled_mean: Percent | None = None
    """Over the lines that have it."""


class ContainerFold:
    """One container's figures so far."""

    __slots__ = ("mem_max", "mem_peak", "oom_kills", "oom_rise", "pids_peak", "throttled", "throttled_count",
                 "throttled_sum")

    def __init__(self) -> None:
        self.mem_peak = 0
        self.oom_kills: list[int] = []
        """The `oom_kill` values of the batch being read."""
        self.oom_rise = Rise()
        self.mem_max: int | None = None
        self.pids_peak = -1
        self.throttled: list[float] = []
        """The `throttled` values of the batch being read."""
        self.throttled_sum = ExactSum()
        self.throttled_count = 0

    def settle(self) -> None:
        """The batch's values taken in."""
        if self.oom_kills:
            self.oom_rise.add(self.oom_kills)
            self.oom_kills = []
        if self.throttled:
            self.throttled_sum.add(sum(self.throttled))
            self.throttled_count += len(self.throttled)
            self.throttled = []

    def merge(self, later: ContainerFold) -> None:
        """`later`'s figures (of the lines after these) taken in."""
        self.oom_rise.merge(later.oom_rise)
        self.mem_peak = max(self.mem_peak, later.mem_peak)
        if later.mem_max is not None:
            self.mem_max = later.mem_max
        self.pids_peak = max(self.pids_peak, later.pids_peak)
        self.throttled_sum.merge(later.throttled_sum)
        self.throttled_count += later.throttled_count

    def summary(self, name: str) -> ContainerSummary:
        throttled = self.throttled_sum.value() / self.throttled_count if self.throttled_count else None
        return ContainerSummary(name, self.mem_peak, self.oom_rise.count(), self.mem_max,
                                None if self.pids_peak < 0 else self.pids_peak, throttled)


class ContainersSection:
    """Each container's figures, by name, in bounded memory (docs/metrics.md, "Many containers"): past twice
    `MAX_CONTAINERS` names the folds of all but the `MAX_CONTAINERS` with the highest memory peak are let go, only
    their names counted (`let_go`), so 400,000 containers of one line each cost what 2,000 do."""

    key = "containers"
    columns = (Column("containers", PEAK),)
    """Each point's highest `mem` of each container, by name: the chart's keyed series `containers`."""
    keyed = True
    __slots__ = ("folds", "let_go")

    def __init__(self) -> None:
        self.folds: dict[str, ContainerFold] = {}
        self.let_go = DistinctCount()

    def add(self, lines: Sequence[Sample]) -> None:
        folds = self.folds
        for line in lines:
            for entry in line.containers or ():
                kept = folds.get(entry.name)
                if kept is None:
                    kept = folds[entry.name] = ContainerFold()
                if entry.mem > kept.mem_peak:
                    kept.mem_peak = entry.mem
                if entry.oom_kill is not None:
                    kept.oom_kills.append(entry.oom_kill)
                if entry.throttled is not None:
                    kept.throttled.append(entry.throttled)
                if entry.mem_max is not None:
                    kept.mem_max = entry.mem_max
                if entry.pids is not None and entry.pids > kept.pids_peak:
                    kept.pids_peak = entry.pids
        for fold in folds.values():
            fold.settle()
        self._bound(2 * MAX_CONTAINERS)

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        """Each stretch's highest `mem` of each container."""
        rows = []
        for begin, end in bounds:
            highest: dict[str, float] = {}
            for line in lines[begin:end]:
                for entry in line.containers or ():
                    if entry.mem > highest.get(entry.name, -1):
                        highest[entry.name] = entry.mem
            rows.append((highest,))
        return rows

    def merge(self, later: ContainersSection) -> None:
        merge_by_name(self.folds, later.folds)
        self.let_go.merge(later.let_go)
        self._bound(2 * MAX_CONTAINERS)

    def summary(self) -> dict[str, Any]:
        """The containers with the highest memory peak, at most `MAX_CONTAINERS`, by name; how many others there
        were, and whether that count is exact (rather than an estimate off by about 1 %)."""
        shown = self._largest(MAX_CONTAINERS)
        others = self.let_go.copy()
        others.add_all(self.folds)
        return {"containers": tuple(self.folds[name].summary(name) for name in sorted(shown)),
                "containers_omitted": others.count() - len(shown), "containers_omitted_estimated": not others.exact}

    def _largest(self, count: int) -> list[str]:
        if len(self.folds) <= count:
            return list(self.folds)
        return sorted(self.folds, key=lambda name: (-self.folds[name].mem_peak, name))[:count]

    def _bound(self, most: int) -> None:
        if len(self.folds) > most:
            kept = self._largest(MAX_CONTAINERS)
            self.let_go.add_all(set(self.folds) - set(kept))
            self.folds = {name: self.folds[name] for name in kept}
