"""The sampler's own cgroup and its limits, on cgroup v2 and v1 (docs/behaviour.md §3.11), and the CPU limit
`orca metrics` sizes its processes by (docs/behaviour.md §11.1): the one way this package finds its own cgroup.

Everything is found from the proc root it is given: `<proc>/self/cgroup` names the cgroup per hierarchy, and
`<proc>/self/mountinfo` where each hierarchy is mounted (`parse/own_cgroup.py`), so a fixture's mountinfo can point
the mounts at a fixture tree. The cgroup files are read every line through kept descriptors, bounded like the
containers' (`READ_LIMIT`); a file that cannot be read or parsed makes its part None, never the whole reading.
"""

from __future__ import annotations

import errno
import os

from returns.result import Failure, Result, Success

from orca.sample.compute.own_cgroup import CgroupReading, cgroup_limits, cgroup_reading
from orca.sample.parse.errors import ParseError
from orca.sample.parse.mountinfo import cgroup_mounts
from orca.sample.parse.own_cgroup import CgroupFiles, Hierarchy, cgroup_files, hierarchies, own_paths
from orca.sample.shared.bounded import KeptFiles, read_file
from orca.sample.shared.sysconf import kept_files_at_most

READ_LIMIT = 1 << 20
"""At most 1 MiB of a cgroup file is read, as of the containers' (docs/behaviour.md §3.8)."""
KEPT_AT_MOST = 64
"""Descriptors kept: the own cgroup's files and its ancestors' limits, a few dozen at most."""
_NO_CGROUPS = frozenset({errno.ENOENT, errno.ENOTDIR})
"""`/proc/self/cgroup` missing: a kernel without cgroups, so no limit at all."""


class OwnCgroup:
    """Reads the cgroup this process is in, and its ancestors' limits, once per `read()`."""

    def __init__(self, proc: str = "/proc") -> None:
        self._proc = proc
        self._files = KeptFiles(min(KEPT_AT_MOST, kept_files_at_most()))
        self._found: tuple[str, CgroupFiles] | None = None
        """The `/proc/self/cgroup` text the files were found for, and them: found again when it changes."""

    def read(self) -> Result[CgroupReading | None, ParseError]:
        """The reading; None when the cgroup runs under no memory or CPU limit (or there are no cgroups); a failure
        naming `/proc/self/cgroup` or `/proc/self/mountinfo` when the cgroup cannot be found."""
        return self.files().map(self._reading)

    def cpu_limit(self) -> float | None:
        """The smallest CFS quota of the cgroup and its ancestors, in CPUs; None without one or when none can be
        read."""
        files = self.files().value_or(CgroupFiles())
        return cgroup_limits(files, self._files.read_each(files.limit_paths(), READ_LIMIT)).cpu

    def close(self) -> None:
        """Close the descriptors kept between reads; a later read opens what it needs again."""
        self._files.close()

    def files(self) -> Result[CgroupFiles, ParseError]:
        """The files a reading takes; none without cgroups."""
        path = os.path.join(self._proc, "self", "cgroup")
        try:
            text = self._files.read(path, READ_LIMIT).decode("utf-8", errors="replace")
        except OSError as error:
            if error.errno in _NO_CGROUPS:
                return Success(CgroupFiles())
            return Failure(ParseError.of(path, error))
        if self._found is not None and self._found[0] == text:
            return Success(self._found[1])
        own = own_paths(text)
        if isinstance(own, Failure):
            return Failure(ParseError(path, own.failure().reason))
        mountinfo = os.path.join(self._proc, "self", "mountinfo")
        try:
            mounts_text = read_file(mountinfo).decode("utf-8", errors="replace")
        except OSError as error:
            return Failure(ParseError.of(mountinfo, error))
        mounts = cgroup_mounts(mounts_text)
        if isinstance(mounts, Failure):
            return Failure(ParseError(mountinfo, mounts.failure().reason))
        found = {name: _existing(where) for name, where in hierarchies(own.unwrap(), mounts.unwrap()).items()}
        self._found = (text, cgroup_files(found))
        return Success(self._found[1])

    def _reading(self, files: CgroupFiles) -> CgroupReading | None:
        """The limits first: without a memory or CPU limit nothing else is read (a plain host's every line)."""
        texts = self._files.read_each(files.limit_paths(), READ_LIMIT)
        limits = cgroup_limits(files, texts)
        if not limits.any():
            return None
        usage = tuple(path for path in files.usage_paths(limits.cpu_at) if path not in texts)
        texts.update(self._files.read_each(usage, READ_LIMIT))
        return cgroup_reading(files, limits, texts)


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
