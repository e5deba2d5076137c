"""The sampler's own cgroup and its limits, on cgroup v2 and v1 (docs/behaviour.md §3.11), and the CPU limit
`orca metrics` sizes its processes by (docs/behaviour.md §11.1): the one way this package finds its own cgroup.

Everything is found from the proc root it is given: `<proc>/self/cgroup` names the cgroup per hierarchy, and
`<proc>/self/mountinfo` where each hierarchy is mounted (`parse/own_cgroup.py`), so a fixture's mountinfo can point
the mounts at a fixture tree. The cgroup files are read every line through kept descriptors, bounded like the
containers' (`READ_LIMIT`); a file that cannot be read or parsed makes its part None, never the whole reading.
"""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from returns.result import Failure, Result, Success

from orca.sample.compute.own_cgroup import CgroupReading
from orca.sample.parse import cgroup, cgroup_v1
from orca.sample.parse.cgroup import CpuPeriods
from orca.sample.parse.cpu_limit import cpu_limit_cores, cpu_max_cores
from orca.sample.parse.errors import ParseError
from orca.sample.parse.mountinfo import cgroup_mounts
from orca.sample.parse.own_cgroup import Hierarchy, hierarchies, own_paths
from orca.sample.shell.bounded import KeptFiles, read_file
from orca.sample.shell.report import reason_of
from orca.sample.shell.sysconf import open_files_limit

T = TypeVar("T")

READ_LIMIT = 1 << 20
"""At most 1 MiB of a cgroup file is read, as of the containers' (docs/behaviour.md §3.8)."""
KEPT_AT_MOST = 64
"""Descriptors kept: the own cgroup's files and its ancestors' limits, a few dozen at most."""
_NO_CGROUPS = frozenset({errno.ENOENT, errno.ENOTDIR})
"""`/proc/self/cgroup` missing: a kernel without cgroups, so no limit at all."""


def _smallest(limits: Iterable[T | None]) -> T | None:
    present = [limit for limit in limits if limit is not None]
    return min(present) if present else None  # type: ignore[type-var]  # ints or floats, never mixed


class OwnCgroup:
    """Reads the cgroup this process is in, and its ancestors' limits, once per `read()`."""

    def __init__(self, proc: str = "/proc") -> None:
        self._proc = proc
        self._files = KeptFiles(min(KEPT_AT_MOST, open_files_limit() // 4))
        self._found: tuple[str, dict[str, Hierarchy]] | None = None
        """The `/proc/self/cgroup` text the hierarchies were found for, and them: found again when it changes."""

    def read(self) -> Result[CgroupReading | None, ParseError]:
        """The reading; None when the cgroup runs under no memory or CPU limit (or there are no cgroups); a failure
        naming `/proc/self/cgroup` or `/proc/self/mountinfo` when the cgroup cannot be found."""
        return self.hierarchies().map(self._reading)

    def cpu_limit(self) -> float | None:
        """The smallest CFS quota of the cgroup and its ancestors, in CPUs; None without one or when none can be
        read."""
        where = self.hierarchies().value_or({}).get("cpu")
        return None if where is None else self._quota(where)[0]

    def close(self) -> None:
        """Close the descriptors kept between reads; a later read opens what it needs again."""
        self._files.close()

    def hierarchies(self) -> Result[dict[str, Hierarchy], ParseError]:
        """Controller -> where its files are; empty without cgroups."""
        path = os.path.join(self._proc, "self", "cgroup")
        try:
            text = self._files.read(path, READ_LIMIT).decode("utf-8", errors="replace")
        except OSError as error:
            if error.errno in _NO_CGROUPS:
                return Success({})
            return Failure(ParseError(path, reason_of(error)))
        if self._found is not None and self._found[0] == text:
            return Success(self._found[1])
        own = own_paths(text)
        if isinstance(own, Failure):
            return Failure(ParseError(path, own.failure().reason))
        mountinfo = os.path.join(self._proc, "self", "mountinfo")
        try:
            mounts_text = read_file(mountinfo).decode("utf-8", errors="replace")
        except OSError as error:
            return Failure(ParseError(mountinfo, reason_of(error)))
        mounts = cgroup_mounts(mounts_text)
        if isinstance(mounts, Failure):
            return Failure(ParseError(mountinfo, mounts.failure().reason))
        found = {name: _existing(where) for name, where in hierarchies(own.unwrap(), mounts.unwrap()).items()}
        self._found = (text, found)
        return Success(found)

    def _text(self, directory: str, name: str) -> str | None:
        try:
            return self._files.read(_joined(directory, name), READ_LIMIT).decode("utf-8", errors="replace")
        except OSError:
            return None

    def _parsed(self, directory: str, name: str, parse: Callable[[str], Result[T, ParseError]]) -> T | None:
        text = self._text(directory, name)
        return None if text is None else parse(text).value_or(None)

    def _reading(self, found: Mapping[str, Hierarchy]) -> CgroupReading | None:
        """The limits first: without a memory or CPU limit nothing else is read (a plain host's every line)."""
        memory, cpu = found.get("memory"), found.get("cpu")
        memory_stat = None if memory is None else self._text(memory.directories[0], "memory.stat")
        memory_limit = None if memory is None else self._memory_limit(memory, memory_stat)
        cpu_limit, limited = (None, "") if cpu is None else self._quota(cpu)
        if memory_limit is None and cpu_limit is None:
            return None
        used = inactive = oom_kills = None
        if memory is not None:
            used, inactive, oom_kills = self._memory(memory, memory_stat)
        usage = periods = None
        if cpu is not None:
            periods, usage = self._cpu(cpu, limited)
        cpuacct = found.get("cpuacct")
        if cpuacct is not None:
            usage = self._parsed(cpuacct.directories[0], "cpuacct.usage", cgroup_v1.cpuacct_usage_usec)
        pids = pids_limit = None
        where = found.get("pids")
        if where is not None:
            pids = self._parsed(where.directories[0], "pids.current", cgroup.pids_current)
            pids_limit = _smallest(self._parsed(d, "pids.max", cgroup.pids_max) for d in where.directories)
        return CgroupReading(
            memory_used=used, inactive_file=inactive, memory_limit=memory_limit, oom_kills=oom_kills,
            cpu_usage_usec=usage, cpu_limit=cpu_limit, cpu_periods=periods, pids=pids, pids_limit=pids_limit,
        )

    def _memory_limit(self, where: Hierarchy, memory_stat: str | None) -> int | None:
        """The smallest memory limit of the directories (v1: and the one `memory.stat` gives with regard to the
        ancestors)."""
        if where.version == 2:
            return _smallest(self._parsed(d, "memory.max", cgroup.memory_max) for d in where.directories)
        limits = [self._parsed(d, "memory.limit_in_bytes", cgroup_v1.limit_in_bytes) for d in where.directories]
        if memory_stat is not None:
            hierarchical = cgroup.flat_value(memory_stat, "hierarchical_memory_limit")
            limits.append(None if hierarchical is None else cgroup_v1.no_limit_as_none(hierarchical))
        return _smallest(limits)

    def _memory(self, where: Hierarchy, memory_stat: str | None) -> tuple[int | None, int | None, int | None]:
        """Bytes used, inactive file bytes (a `memory.stat` without the key: 0), OOM kills."""
        own = where.directories[0]
        key = "inactive_file" if where.version == 2 else "total_inactive_file"
        inactive = None if memory_stat is None else cgroup.flat_value(memory_stat, key) or 0
        if where.version == 2:
            events = self._text(own, "memory.events")
            oom_kills = None if events is None else cgroup.flat_value(events, "oom_kill")
            return self._parsed(own, "memory.current", cgroup.memory_current), inactive, oom_kills
        used = self._parsed(own, "memory.usage_in_bytes", cgroup_v1.usage_in_bytes)
        return used, inactive, self._parsed(own, "memory.oom_control", cgroup_v1.oom_kills)

    def _quota(self, where: Hierarchy) -> tuple[float | None, str]:
        """The smallest quota in CPUs and the directory that has it (the own one without a quota)."""
        quotas: list[tuple[float, str]] = []
        for directory in where.directories:
            if where.version == 2:
                cores = cpu_max_cores(self._text(directory, "cpu.max") or "")
            else:
                cores = cpu_limit_cores(self._text(directory, "cpu.cfs_quota_us") or "",
                                        self._text(directory, "cpu.cfs_period_us") or "")
            if cores is not None:
                quotas.append((cores, directory))
        if not quotas:
            return None, where.directories[0]
        return min(quotas)

    def _cpu(self, where: Hierarchy, limited: str) -> tuple[CpuPeriods | None, int | None]:
        """The throttling counters where the quota is, and (v2) the CPU microseconds the cgroup used."""
        own = where.directories[0]
        own_stat = self._text(own, "cpu.stat")
        stat = own_stat if limited in ("", own) else self._text(limited, "cpu.stat")
        periods = None
        if stat is not None:
            count, throttled = cgroup.flat_value(stat, "nr_periods"), cgroup.flat_value(stat, "nr_throttled")
            periods = None if count is None or throttled is None else CpuPeriods(count, throttled)
        usage = None if own_stat is None or where.version == 1 else cgroup.flat_value(own_stat, "usage_usec")
        return periods, usage


@functools.lru_cache(maxsize=256)
def _joined(directory: str, name: str) -> str:
    """A cgroup file's path, joined once: the same few dozen are read every line."""
    return os.path.join(directory, name)


def _existing(where: Hierarchy) -> Hierarchy:
    """`where`, or its mount point alone when the cgroup's own directory is not there (a container that sees the
    host's path of its cgroup, its own cgroup mounted as the root)."""
    if len(where.directories) == 1 or os.path.isdir(where.directories[0]):
        return where
    return Hierarchy(version=where.version, directories=where.directories[-1:])


def own_cpu_limit(proc: str = "/proc") -> float | None:
    """The smallest CFS bandwidth limit, in CPUs, of this process's cgroup and its ancestors (cgroup v2's `cpu.max`,
    v1's `cpu.cfs_quota_us` / `cpu.cfs_period_us`); None without one or when none can be read."""
    reader = OwnCgroup(proc)
    try:
        return reader.cpu_limit()
    finally:
        reader.close()
