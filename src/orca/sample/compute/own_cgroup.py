"""The line's `cgroup` section (docs/behaviour.md §3.11): the sampler's own cgroup against its limits, from two
readings of its files, the same record for cgroup v2 and v1."""

from __future__ import annotations

import math
from dataclasses import dataclass

from orca.sample.line_format import CgroupSample
from orca.sample.parse.cgroup import CpuPeriods
from orca.sample.parse.numbers import USEC_PER_SECOND


@dataclass(frozen=True, slots=True)
class CgroupReading:
    """The own cgroup's files at one moment. A field is None when its file cannot be read or parsed, a limit also
    when there is none."""

    memory_used: int | None
    """Bytes in use by the cgroup and its descendants: v2 `memory.current`, v1 `memory.usage_in_bytes`."""
    inactive_file: int | None
    """`memory.stat`'s `inactive_file` (v1: `total_inactive_file`), 0 when it has no such key."""
    memory_limit: int | None
    """The smallest memory limit of the cgroup and its ancestors that can be read: v2 `memory.max`, v1
    `memory.limit_in_bytes` and `memory.stat`'s `hierarchical_memory_limit`."""
    oom_kills: int | None
    """v2 `memory.events`' `oom_kill`, v1 `memory.oom_control`'s."""
    cpu_usage_usec: int | None
    """CPU microseconds used so far: v2 `cpu.stat`'s `usage_usec`, v1 `cpuacct.usage` / 1000."""
    cpu_limit: float | None
    """The smallest CFS quota of the cgroup and its ancestors, in CPUs: v2 `cpu.max`, v1 `cpu.cfs_quota_us` /
    `cpu.cfs_period_us`."""
    cpu_periods: CpuPeriods | None
    """`cpu.stat`'s `nr_periods` and `nr_throttled` of the cgroup whose quota is `cpu_limit`: a cgroup under its
    parent's quota counts no periods of its own."""
    pids: int | None
    """`pids.current`."""
    pids_limit: int | None
    """The smallest `pids.max` of the cgroup and its ancestors."""

    def limited(self) -> bool:
        """Whether the cgroup runs under a memory or CPU limit, which is when a line has the section (a pids limit
        alone does not count: systemd gives one to nearly every unit)."""
        return self.memory_limit is not None or self.cpu_limit is not None


def cgroup_section(prev: CgroupReading | None, cur: CgroupReading | None, dt: float) -> CgroupSample | None:
    """The `cgroup` section between two readings `dt` seconds apart; None (no section) when `cur` is None or runs
    under no memory or CPU limit. A part that cannot be read is None; so are `cpu` and `throttled` without a CPU
    limit, and in a line whose previous reading is missing.

    >>> before = CgroupReading(300, 100, 1000, 0, 1_000_000, 0.5, CpuPeriods(10, 2), 4, None)
    >>> after = CgroupReading(900, 100, 1000, 1, 1_500_000, 0.5, CpuPeriods(20, 7), 5, None)
    >>> cgroup_section(before, after, 2.0)
    CgroupSample(mem=800, mem_max=1000, cpu=50.0, cpu_max=0.5, throttled=50.0, oom_kill=1, pids=5, pids_max=None)
    """
    if cur is None or not cur.limited():
        return None
    return CgroupSample(
        mem=_mem(cur),
        mem_max=cur.memory_limit,
        cpu=_cpu(prev, cur, dt),
        cpu_max=cur.cpu_limit,
        throttled=_throttled(prev, cur),
        oom_kill=cur.oom_kills,
        pids=cur.pids,
        pids_max=cur.pids_limit,
    )


def _mem(reading: CgroupReading) -> int | None:
    """`docker stats`' number: usage less the inactive file pages, never below 0."""
    if reading.memory_used is None or reading.inactive_file is None:
        return None
    return max(0, reading.memory_used - reading.inactive_file)


def _cpu(prev: CgroupReading | None, cur: CgroupReading, dt: float) -> float | None:
    """Percent of the quota over `dt` (100 = all of it): 0.0 for a counter that went backwards or a `dt` that is
    not a positive number."""
    if cur.cpu_limit is None or not cur.cpu_limit > 0 or prev is None:
        return None
    if prev.cpu_usage_usec is None or cur.cpu_usage_usec is None:
        return None
    used = cur.cpu_usage_usec - prev.cpu_usage_usec
    if used <= 0 or not dt > 0:
        return 0.0
    share = 100.0 * used / (dt * USEC_PER_SECOND * cur.cpu_limit)
    return share if math.isfinite(share) else 0.0  # a vanishing dt can overflow, which JSON cannot carry


def _throttled(prev: CgroupReading | None, cur: CgroupReading) -> float | None:
    """100 × Δnr_throttled / Δnr_periods, within 0..100; 0.0 when no period elapsed (or the counter went back)."""
    if cur.cpu_limit is None or prev is None or prev.cpu_periods is None or cur.cpu_periods is None:
        return None
    before, now = prev.cpu_periods, cur.cpu_periods
    periods = now.periods - before.periods
    if periods <= 0:
        return 0.0
    return min(100.0, 100.0 * max(0, now.throttled - before.throttled) / periods)
