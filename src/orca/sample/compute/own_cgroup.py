"""The line's `cgroup` section (docs/behaviour.md §3.11): the sampler's own cgroup against its limits. Its files'
bytes, as the shell read them, make a reading (`cgroup_limits`, then `cgroup_reading`), the same record for cgroup
v2 and v1; two readings make the section (`cgroup_section`)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import msgspec

from orca.sample.line_format import CgroupSample
from orca.sample.parse import cgroup_v1
from orca.sample.parse.cgroup import CpuPeriods, flat_value
from orca.sample.parse.cpu_limit import cpu_limit_cores, cpu_max_cores
from orca.sample.parse.numbers import USEC_PER_SECOND, u64
from orca.sample.parse.own_cgroup import CgroupFiles

Texts = Mapping[str, bytes | OSError]
"""Path -> the bytes read from it, or why it could not be read (a path not there: not read)."""


class CgroupReading(msgspec.Struct, frozen=True, gc=False):
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
    cpu_usage_of: str = ""
    """The file `cpu_usage_usec` is read from: a reading of another file (the sampler moved to another cgroup) is
    another cgroup's counter, which no difference may be taken against."""
    cpu_periods_of: str = ""
    """The `cpu.stat` `cpu_periods` is read from: another one (the sampler moved, the tightest quota now on another
    directory) counts another cgroup's periods."""

    def limited(self) -> bool:
        """Whether the cgroup runs under a memory or CPU limit, which is when a line has the section (a pids limit
        alone does not count: systemd gives one to nearly every unit)."""
        return self.memory_limit is not None or self.cpu_limit is not None


class Limits(msgspec.Struct, frozen=True, gc=False):
    """The smallest limits of the cgroup and its ancestors."""

    memory: int | None
    cpu: float | None
    cpu_at: int
    """The index (in `CgroupFiles.cpu_quotas`) of the directory whose quota `cpu` is; 0 without one."""

    def any(self) -> bool:
        """A memory or CPU limit: the line has the section (a pids limit alone does not count)."""
        return self.memory is not None or self.cpu is not None


def _bytes(texts: Texts, path: str) -> bytes | None:
    data = texts.get(path) if path else None
    return data if isinstance(data, bytes) else None


def _text(texts: Texts, path: str) -> str | None:
    data = _bytes(texts, path)
    return None if data is None else data.decode("utf-8", errors="replace")


def _number(texts: Texts, path: str) -> int | None:
    """A single-value file's number; None for `max`, junk, or a file not read."""
    data = _bytes(texts, path)
    return None if data is None else u64(data.strip())


def _smallest(values: list[int | None]) -> int | None:
    present = [value for value in values if value is not None]
    return min(present) if present else None


def cgroup_limits(files: CgroupFiles, texts: Texts) -> Limits:
    """The limits, from the texts of `files.limit_paths()`.

    >>> files = CgroupFiles(memory_limits=("a/memory.max", "memory.max"), cpu_quotas=(("a/cpu.max", ""),))
    >>> cgroup_limits(files, {"a/memory.max": b"max\\n", "memory.max": b"536870912\\n", "a/cpu.max": b"max 100000\\n"})
    Limits(memory=536870912, cpu=None, cpu_at=0)
    """
    memories = [_number(texts, path) for path in files.memory_limits]
    if files.memory_v1:
        memories = [None if limit is None else cgroup_v1.no_limit_as_none(limit) for limit in memories]
        stat = _text(texts, files.memory_stat)
        hierarchical = None if stat is None else flat_value(stat, "hierarchical_memory_limit")
        memories.append(None if hierarchical is None else cgroup_v1.no_limit_as_none(hierarchical))
    quotas: list[tuple[float, int]] = []
    for at, (quota, period) in enumerate(files.cpu_quotas):
        if files.cpu_v1:
            cores = cpu_limit_cores(_text(texts, quota) or "", _text(texts, period) or "")
        else:
            cores = cpu_max_cores(_text(texts, quota) or "")
        if cores is not None:
            quotas.append((cores, at))
    cpu, cpu_at = min(quotas) if quotas else (None, 0)
    return Limits(memory=_smallest(memories), cpu=cpu, cpu_at=cpu_at)


def cgroup_reading(files: CgroupFiles, limits: Limits, texts: Texts) -> CgroupReading:
    """The reading, from the texts of `files.usage_paths(limits.cpu_at)` (and the limits' own)."""
    stat = _text(texts, files.memory_stat)
    inactive_key = "total_inactive_file" if files.memory_v1 else "inactive_file"
    inactive = None if stat is None else flat_value(stat, inactive_key) or 0
    events = _text(texts, files.memory_events)
    cpu_stat = _text(texts, files.cpu_stats[limits.cpu_at]) if files.cpu_stats else None
    periods = None
    if cpu_stat is not None:
        count, throttled = flat_value(cpu_stat, "nr_periods"), flat_value(cpu_stat, "nr_throttled")
        periods = None if count is None or throttled is None else CpuPeriods(count, throttled)
    if files.cpu_usage_ns:
        nanoseconds = _number(texts, files.cpu_usage)
        usage = None if nanoseconds is None else nanoseconds // cgroup_v1.NS_PER_USEC
    else:
        own_stat = _text(texts, files.cpu_usage)
        usage = None if own_stat is None else flat_value(own_stat, "usage_usec")
    return CgroupReading(
        memory_used=_number(texts, files.memory_used), inactive_file=inactive, memory_limit=limits.memory,
        oom_kills=None if events is None else flat_value(events, "oom_kill"), cpu_usage_usec=usage,
        cpu_limit=limits.cpu, cpu_periods=periods, pids=_number(texts, files.pids_current),
        pids_limit=_smallest([_number(texts, path) for path in files.pids_limits]),
        cpu_usage_of=files.cpu_usage, cpu_periods_of=files.cpu_stats[limits.cpu_at] if files.cpu_stats else "",
    )


def cgroup_section(prev: CgroupReading | None, cur: CgroupReading | None, dt: float) -> CgroupSample | None:
    """The `cgroup` section between two readings `dt` seconds apart; None (no section) when `cur` is None or runs
    under no memory or CPU limit. A part that cannot be read is None; so are `cpu` and `throttled` without a CPU
    limit, in a line whose previous reading is missing, and where the two readings' counters are two cgroups'.

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
    if prev.cpu_usage_usec is None or cur.cpu_usage_usec is None or prev.cpu_usage_of != cur.cpu_usage_of:
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
    if prev.cpu_periods_of != cur.cpu_periods_of:
        return None
    before, now = prev.cpu_periods, cur.cpu_periods
    periods = now.periods - before.periods
    if periods <= 0:
        return 0.0
    return min(100.0, 100.0 * max(0, now.throttled - before.throttled) / periods)
