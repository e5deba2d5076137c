"""What a run's lines say of the sampler's own cgroup against its limits (docs/behaviour.md §3.11, §11.1), for `orca
metrics`: a fold over the lines' `cgroup` sections, and the summary's and the chart's texts of it.

The fold's sums are taken in exactly once per batch of lines (`ExactSum`), so a file folded in parts and merged gives
exactly the figures of one fold over it all, read in the same batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orca.sample.line_format import Sample
from orca.sample.readback.exact import ExactSum, mean_share, rise

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


@dataclass(frozen=True, slots=True)
class CgroupSummary:
    """The run against its cgroup's limits."""

    mem_peak: int | None
    """The most `mem` of any line; None when no line could read it."""
    mem_max: int | None
    """The newest memory limit (`mem_max`); None when no line had one."""
    cpu_cores: float | None
    """The CPUs used on average over the lines with a CPU limit (`cpu` × `cpu_max`, weighted by `dt`)."""
    cpu_max: float | None
    """The newest CPU limit in CPUs."""
    throttled: float | None
    """The percent of periods throttled on average over the lines that have it, weighted by `dt`."""
    oom_kills: int
    """How much `oom_kill` rose during the run (a counter that goes back counts from its new value)."""
    pids_peak: int | None
    pids_max: int | None


class CgroupFold:
    """The figures of the `cgroup` sections of a run's lines, in the order of the lines."""

    __slots__ = ("cpu_dt", "cpu_max", "cpu_used", "first_oom", "last_oom", "mem_max", "mem_peak", "oom_rise",
                 "pids_max", "pids_peak", "throttled_dt", "throttled_sum")

    def __init__(self) -> None:
        self.mem_peak: int | None = None
        self.mem_max: int | None = None
        self.cpu_max: float | None = None
        self.cpu_used, self.cpu_dt = ExactSum(), ExactSum()
        """Σ `cpu` × `cpu_max` × `dt`, and Σ `dt`, over the lines with both."""
        self.throttled_sum, self.throttled_dt = ExactSum(), ExactSum()
        self.first_oom: int | None = None
        self.last_oom: int | None = None
        self.oom_rise = 0
        self.pids_peak: int | None = None
        self.pids_max: int | None = None

    def add_lines(self, lines: Sequence[Sample]) -> None:  # one loop, on purpose
        """Lines in the order written, those without the section passed over: one plain loop, its figures in locals
        (a call or an attribute written per line would cost as much again); the sums taken in exactly once per
        batch."""
        mem_peak, mem_max, cpu_max, pids_peak, pids_max = (self.mem_peak, self.mem_max, self.cpu_max, self.pids_peak,
                                                           self.pids_max)
        cpu_used = cpu_dt = throttled_sum = throttled_dt = 0.0
        ooms: list[int] = []
        for line in lines:
            section, dt = line.cgroup, line.dt
            if section is None:
                continue
            mem = section.mem
            if mem is not None and (mem_peak is None or mem > mem_peak):
                mem_peak = mem
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
            pids = section.pids
            if pids is not None and (pids_peak is None or pids > pids_peak):
                pids_peak = pids
            if section.pids_max is not None:
                pids_max = section.pids_max
        self.mem_peak, self.mem_max, self.cpu_max, self.pids_peak, self.pids_max = (mem_peak, mem_max, cpu_max,
                                                                                   pids_peak, pids_max)
        for total, term in ((self.cpu_used, cpu_used), (self.cpu_dt, cpu_dt), (self.throttled_sum, throttled_sum),
                            (self.throttled_dt, throttled_dt)):
            total.add(term)
        if ooms:
            self._ooms(ooms)

    def _ooms(self, counts: list[int]) -> None:
        if self.last_oom is None:
            self.first_oom = counts[0]
        self.oom_rise += rise(counts[0] if self.last_oom is None else self.last_oom, counts)
        self.last_oom = counts[-1]

    def merge(self, later: CgroupFold) -> None:
        """`later`'s figures (of the lines after these, folded on their own) taken in."""
        if later.mem_peak is not None:
            self.mem_peak = later.mem_peak if self.mem_peak is None else max(self.mem_peak, later.mem_peak)
        if later.pids_peak is not None:
            self.pids_peak = later.pids_peak if self.pids_peak is None else max(self.pids_peak, later.pids_peak)
        self.mem_max = later.mem_max if later.mem_max is not None else self.mem_max
        self.cpu_max = later.cpu_max if later.cpu_max is not None else self.cpu_max
        self.pids_max = later.pids_max if later.pids_max is not None else self.pids_max
        for total, theirs in ((self.cpu_used, later.cpu_used), (self.cpu_dt, later.cpu_dt),
                              (self.throttled_sum, later.throttled_sum), (self.throttled_dt, later.throttled_dt)):
            total.merge(theirs)
        if later.first_oom is not None:
            self._ooms([later.first_oom])  # the step from this part's last count to the next part's first
            self.oom_rise += later.oom_rise
            self.last_oom = later.last_oom

    def summary(self) -> CgroupSummary | None:
        """None when no line had the section."""
        if self.mem_max is None and self.cpu_max is None:
            return None
        covered = self.cpu_dt.value()
        cpu = self.cpu_used.value() / (100 * covered) if covered > 0 else None
        throttled = mean_share(self.throttled_sum, self.throttled_dt)
        return CgroupSummary(mem_peak=self.mem_peak, mem_max=self.mem_max, cpu_cores=cpu, cpu_max=self.cpu_max,
                             throttled=throttled, oom_kills=self.oom_rise, pids_peak=self.pids_peak,
                             pids_max=self.pids_max)


def size(count: float) -> str:
    """Bytes in the largest binary unit under which they are at least 1, one decimal.

    >>> size(1932735283), size(268435456), size(512), size(0)
    ('1.8 GiB', '256.0 MiB', '512 B', '0 B')
    """
    for unit in _UNITS[:-1]:
        if abs(count) < 1024:
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} {_UNITS[-1]}"


def cores(count: float) -> str:
    """A number of CPUs at the decimals the line gives it (up to 3), at least one.

    >>> cores(1.0), cores(0.5), cores(0.25), cores(2.125)
    ('1.0', '0.5', '0.25', '2.125')
    """
    text = f"{count:.3f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def memory_text(summary: CgroupSummary) -> str | None:
    """The summary's memory against the limit; None without a memory limit.

    >>> memory_text(CgroupSummary(1932735283, 2147483648, None, None, None, 0, None, None))
    'memory peak 1.8 GiB of 2.0 GiB limit (90%)'
    >>> memory_text(CgroupSummary(None, 2147483648, None, None, None, 2, None, None))
    'memory peak unknown of 2.0 GiB limit, 2 OOM kills'
    """
    if summary.mem_max is None:
        return None
    if summary.mem_peak is None:
        text = f"memory peak unknown of {size(summary.mem_max)} limit"
    else:
        share = 100 * summary.mem_peak / summary.mem_max if summary.mem_max else 0.0
        text = f"memory peak {size(summary.mem_peak)} of {size(summary.mem_max)} limit ({share:.0f}%)"
    if summary.oom_kills:
        text += f", {summary.oom_kills} OOM kill" + ("s" if summary.oom_kills > 1 else "")
    return text


def cpu_text(summary: CgroupSummary) -> str | None:
    """The summary's CPU against the quota; None without a CPU limit.

    >>> cpu_text(CgroupSummary(None, None, 0.97, 1.0, 41.0, 0, None, None))
    'CPU 0.97 of 1.0 cores, throttled 41% of periods'
    >>> cpu_text(CgroupSummary(None, None, None, 0.5, None, 0, None, None))
    'CPU unknown of 0.5 cores'
    """
    if summary.cpu_max is None:
        return None
    used = "unknown" if summary.cpu_cores is None else f"{summary.cpu_cores:.2f}"
    text = f"CPU {used} of {cores(summary.cpu_max)} cores"
    if summary.throttled is not None:
        text += f", throttled {summary.throttled:.0f}% of periods"
    return text


def pids_text(summary: CgroupSummary) -> str | None:
    """The summary's processes against the pids limit; None without one or without a count.

    >>> pids_text(CgroupSummary(None, None, None, None, None, 0, 37, 4096))
    'pids peak 37 of 4,096 limit'
    """
    if summary.pids_max is None or summary.pids_peak is None:
        return None
    return f"pids peak {summary.pids_peak:,} of {summary.pids_max:,} limit"


def memory_limit_label(limit: int) -> str:
    """The legend of the chart's memory reference line when the run has a memory limit (else the host's total).

    >>> memory_limit_label(268435456)
    'cgroup limit (256.0 MiB)'
    """
    return f"cgroup limit ({size(limit)})"


def cpu_limit_label(limit: float) -> str:
    """The legend of the chart's CPU reference line at the quota.

    >>> cpu_limit_label(0.5)
    'cgroup limit (0.5 cores)'
    """
    return f"cgroup limit ({cores(limit)} cores)"


def cpu_limit_percent(limit: float, host_cores: int) -> float:
    """Where the quota lies on the chart's CPU panel, whose scale is percent of all the host's cores.

    >>> cpu_limit_percent(1.0, 4), cpu_limit_percent(8.0, 4), cpu_limit_percent(1.0, 0)
    (25.0, 100.0, 100.0)
    """
    if host_cores <= 0:
        return 100.0
    return min(100.0, 100.0 * limit / host_cores)
