"""The sampler's own cgroup against its limits, gathered (`section.py`) from the lines' `cgroup` (docs/behaviour.md
§3.11, §11.1): the most memory of the newest limit, the CPUs used of the newest quota and the share of periods
throttled, the OOM kills, the most processes of the newest limit; each point's newest limits, for the run's panels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orca.sample.line_format import CgroupSample, Cores, Count, Percent, Sample
from orca.sample.readback.exact import ExactSum, Rise
from orca.sample.readback.gather.section import NEWEST, Bounds, Column, present


@dataclass(frozen=True, slots=True)
class CgroupSummary:
    """The run against its cgroup's limits: each field as docs/metrics.md's `--json` says it; a limit the newest
    line's, a peak the most of any line."""

    mem_peak: Count | None
    mem_max: Count | None
    cpu_cores: Cores | None
    """Over the lines with a CPU limit (`cpu` × `cpu_max`, weighted by `dt`)."""
    cpu_max: Cores | None
    throttled: Percent | None
    """Over the lines that have it, weighted by `dt`."""
    oom_kills: Count
    """How much `oom_kill` rose during the run (a counter that goes back counts from its new value)."""
    pids_peak: Count | None
    pids_max: Count | None


def _limits(section: CgroupSample | None) -> tuple[int | None, float | None]:
    if section is None:
        return None, None
    return section.mem_max, None if section.cpu_max is None else 100 * section.cpu_max


class CgroupSection:
    key = "cgroup"
    columns = (Column("mem_limit", NEWEST), Column("cpu_limit", NEWEST))
    """`cpu_limit` is the quota in percent of one core (100 × `cpu_max`), the unit of the run's CPU."""
    keyed = False
    __slots__ = ("cpu_max", "mem_max", "mem_peak", "oom_rise", "pids_max", "pids_peak", "sums")

    def __init__(self) -> None:
        self.mem_peak: int | None = None
        self.mem_max: int | None = None
        self.cpu_max: float | None = None
        self.sums = (ExactSum(), ExactSum(), ExactSum(), ExactSum())
        """Σ `cpu` × `cpu_max` × `dt` and Σ `dt` over the lines with both; Σ `throttled` × `dt` and Σ `dt` over the
        lines with it."""
        self.oom_rise = Rise()
        self.pids_peak: int | None = None
        self.pids_max: int | None = None

    def add(self, lines: Sequence[Sample]) -> None:
        sections = [line.cgroup for line in lines]
        if sections.count(None) < len(sections):
            self._add(present(sections), [line.dt for line in lines if line.cgroup is not None])

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        """Each stretch's newest line's limits: memory in bytes, CPU in percent of one core (the run's CPU's unit)."""
        return [_limits(lines[end - 1].cgroup) for _, end in bounds]

    def _add(self, sections: list[CgroupSample], dts: list[float]) -> None:
        mem_peak, mem_max, cpu_max, pids_peak, pids_max = (self.mem_peak, self.mem_max, self.cpu_max, self.pids_peak,
                                                           self.pids_max)
        cpu_used = cpu_dt = throttled_sum = throttled_dt = 0.0
        ooms: list[int] = []
        for section, dt in zip(sections, dts, strict=True):
            if section.mem is not None and (mem_peak is None or section.mem > mem_peak):
                mem_peak = section.mem
            if section.mem_max is not None:
                mem_max = section.mem_max
            limit = section.cpu_max
            if limit is not None:
                cpu_max = limit
                if section.cpu is not None:
                    cpu_used += section.cpu * limit * dt
                    cpu_dt += dt
            if section.throttled is not None:
                throttled_sum += section.throttled * dt
                throttled_dt += dt
            if section.oom_kill is not None:
                ooms.append(section.oom_kill)
            if section.pids is not None and (pids_peak is None or section.pids > pids_peak):
                pids_peak = section.pids
            if section.pids_max is not None:
                pids_max = section.pids_max
        self.mem_peak, self.mem_max, self.cpu_max, self.pids_peak, self.pids_max = (mem_peak, mem_max, cpu_max,
                                                                                   pids_peak, pids_max)
        for total, term in zip(self.sums, (cpu_used, cpu_dt, throttled_sum, throttled_dt), strict=True):
            total.add(term)
        self.oom_rise.add(ooms)

    def merge(self, later: CgroupSection) -> None:
        if later.mem_peak is not None:
            self.mem_peak = later.mem_peak if self.mem_peak is None else max(self.mem_peak, later.mem_peak)
        if later.pids_peak is not None:
            self.pids_peak = later.pids_peak if self.pids_peak is None else max(self.pids_peak, later.pids_peak)
        self.mem_max = later.mem_max if later.mem_max is not None else self.mem_max
        self.cpu_max = later.cpu_max if later.cpu_max is not None else self.cpu_max
        self.pids_max = later.pids_max if later.pids_max is not None else self.pids_max
        for total, theirs in zip(self.sums, later.sums, strict=True):
            total.merge(theirs)
        self.oom_rise.merge(later.oom_rise)

    def summary(self) -> dict[str, Any]:
        if self.mem_max is None and self.cpu_max is None:
            return {"cgroup": None}
        used, covered, throttled_sum, throttled = (total.value() for total in self.sums)
        return {"cgroup": CgroupSummary(
            mem_peak=self.mem_peak, mem_max=self.mem_max,
            cpu_cores=used / (100 * covered) if covered > 0 else None, cpu_max=self.cpu_max,
            throttled=min(100.0, throttled_sum / throttled) if throttled > 0 else None,
            oom_kills=self.oom_rise.count(), pids_peak=self.pids_peak, pids_max=self.pids_max)}
