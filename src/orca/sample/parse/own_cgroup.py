"""Where a process's own cgroup is, per controller: its `/proc/self/cgroup` lines (parsed by
`cpu_limit.own_cgroups`) matched with the cgroup mounts of its `/proc/self/mountinfo` (`mountinfo.cgroup_mounts`).

A controller on a cgroup v1 hierarchy has its own `/proc/self/cgroup` line (`4:memory:/docker/1a`) and a mount with
that controller among its options; any other is looked for in the v2 hierarchy (the `0::` line, a `cgroup2` mount), so
a hybrid machine (controllers on v1, a v2 hierarchy beside them) reads each controller where it is. The path of the
line is relative to the mount's root: inside a cgroup namespace both are `/`, the namespace's root; without one, a
container's own cgroup mounted alone shows the same path in both (`/docker/1a`). A path outside the mount's root (a
`/..` one, of a process moved out of its namespace's root) is looked for at the mount point alone.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec
from msgspec.structs import replace
from returns.result import Failure, Result, Success

from orca.sample.parse.cpu_limit import own_cgroups
from orca.sample.parse.errors import ParseError
from orca.sample.parse.mountinfo import CgroupMount

SOURCE = "/proc/self/cgroup"
CONTROLLERS = ("memory", "cpu", "cpuacct", "pids")
"""The controllers whose files the own cgroup's section reads (`cpuacct`: v1's CPU usage; v2 counts it in the cpu
controller's `cpu.stat`)."""
V2 = ""
"""The key `own_cgroups` gives the v2 hierarchy's path."""


class Hierarchy(msgspec.Struct, frozen=True, gc=False):
    """Where one controller's files are for the process's cgroup."""

    version: Literal[1, 2]
    directories: tuple[str, ...]
    """The cgroup's own directory first, then each ancestor's, up to the mount point (last); the mount point alone
    when the cgroup is not below the mount's root."""


def own_paths(text: str) -> Result[dict[str, str], ParseError]:
    """`/proc/self/cgroup` as `own_cgroups` reads it; a failure when text with lines has none of its shape.

    >>> own_paths("0::/user.slice/session-1.scope\\n").unwrap()
    {'': '/user.slice/session-1.scope'}
    >>> own_paths("garbage\\n").failure().reason
    'no `hierarchy-ID:controller-list:cgroup-path` line'
    """
    paths = own_cgroups(text)
    if not paths and text.strip():
        return Failure(ParseError(SOURCE, "no `hierarchy-ID:controller-list:cgroup-path` line"))
    return Success(paths)


def _relative(root: str, path: str) -> str | None:
    """`path` relative to the mount's `root` ("" for the root itself); None when it is not below it."""
    if ".." in path.split("/"):
        return None
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    if root == "/":
        return path.lstrip("/")
    if path == root:
        return ""
    return path[len(root) + 1:] if path.startswith(root + "/") else None


def directories(mount: CgroupMount, path: str) -> tuple[str, ...]:
    """The directories of the cgroup at `path` (as `/proc/self/cgroup` gives it) and of its ancestors under
    `mount`, its own first, the mount point last.

    >>> m = CgroupMount(1, "/", "/sys/fs/cgroup/memory", frozenset({"memory"}))
    >>> directories(m, "/kubepods/pod1")
    ('/sys/fs/cgroup/memory/kubepods/pod1', '/sys/fs/cgroup/memory/kubepods', '/sys/fs/cgroup/memory')
    >>> directories(CgroupMount(1, "/docker/1a", "/sys/fs/cgroup/memory", frozenset({"memory"})), "/docker/1a")
    ('/sys/fs/cgroup/memory',)
    """
    top = posixpath.normpath(mount.mount_point)
    relative = _relative(mount.root, path)
    if not relative:
        return (top,)
    chain = [posixpath.join(top, relative)]
    while chain[-1] != top and chain[-1] != "/":
        chain.append(posixpath.dirname(chain[-1]))
    return tuple(chain)


def _mount_for(path: str, mounts: Sequence[CgroupMount]) -> CgroupMount:
    """The first of `mounts` (not empty) whose root holds `path`, else the first of them."""
    for mount in mounts:
        if _relative(mount.root, path) is not None:
            return mount
    return mounts[0]


def hierarchies(own: Mapping[str, str], mounts: Sequence[CgroupMount]) -> dict[str, Hierarchy]:
    """Controller -> where its files are, for each of `CONTROLLERS` that has a hierarchy (v1 first, else v2).

    `cpuacct` only where it counts the CPU of the cpu controller's cgroup, whose quota the usage is a share of: the
    cpu controller on v1 too, and the same path in both (always so when they are mounted together). Mounted apart,
    the two can place the process differently (in a cpu cgroup with a quota, at the cpuacct root that counts every
    process of the machine).

    >>> mounts = (CgroupMount(1, "/", "/cg/memory", frozenset({"memory"})), CgroupMount(2, "/", "/cg/unified",
    ...           frozenset()))
    >>> found = hierarchies({"memory": "/a", "": "/"}, mounts)
    >>> found["memory"], found["pids"].directories
    (Hierarchy(version=1, directories=('/cg/memory/a', '/cg/memory')), ('/cg/unified',))
    >>> apart = (CgroupMount(1, "/", "/cg/cpu", frozenset({"cpu"})), CgroupMount(1, "/", "/cg/cpuacct",
    ...          frozenset({"cpuacct"})))
    >>> "cpuacct" in hierarchies({"cpu": "/q", "cpuacct": "/"}, apart), "cpuacct" in hierarchies({"cpu": "/q",
    ...                                                                                        "cpuacct": "/q"}, apart)
    (False, True)
    """
    found: dict[str, Hierarchy] = {}
    for controller in CONTROLLERS:
        v1 = [mount for mount in mounts if mount.version == 1 and controller in mount.controllers]
        v2 = [mount for mount in mounts if mount.version == 2]
        if controller in own and v1:
            path = own[controller]
            found[controller] = Hierarchy(version=1, directories=directories(_mount_for(path, v1), path))
        elif V2 in own and v2 and controller != "cpuacct":
            path = own[V2]
            found[controller] = Hierarchy(version=2, directories=directories(_mount_for(path, v2), path))
    cpu = found.get("cpu")
    if "cpuacct" in found and (cpu is None or cpu.version != 1 or own.get("cpuacct") != own.get("cpu")):
        del found["cpuacct"]
    return found


class CgroupFiles(msgspec.Struct, frozen=True, gc=False):
    """The paths of the files one reading of the cgroup takes (`cgroup_files`); "" where there is no such file (its
    controller has no hierarchy). The limits are read for every reading; the rest only under a limit."""

    memory_v1: bool = False
    memory_limits: tuple[str, ...] = ()
    """`memory.max` (v2) or `memory.limit_in_bytes` (v1) of the cgroup and of each ancestor."""
    memory_stat: str = ""
    memory_used: str = ""
    """`memory.current` (v2) or `memory.usage_in_bytes` (v1)."""
    memory_events: str = ""
    """`memory.events` (v2) or `memory.oom_control` (v1): the OOM kills."""
    cpu_v1: bool = False
    cpu_quotas: tuple[tuple[str, str], ...] = ()
    """Per directory, the cgroup's first: (`cpu.max`, "") on v2, (`cpu.cfs_quota_us`, `cpu.cfs_period_us`) on v1."""
    cpu_stats: tuple[str, ...] = ()
    """`cpu.stat` of the same directories, in the same order."""
    cpu_usage: str = ""
    """The CPU the cgroup used: v2 its `cpu.stat` (`usage_usec`), v1 its `cpuacct.usage`."""
    cpu_usage_ns: bool = False
    """`cpu_usage` is v1's `cpuacct.usage`, in nanoseconds."""
    pids_current: str = ""
    pids_limits: tuple[str, ...] = ()

    def limit_paths(self) -> tuple[str, ...]:
        """The files the limits are read from (v1's `memory.stat` among them: `hierarchical_memory_limit`)."""
        quotas = tuple(path for pair in self.cpu_quotas for path in pair if path)
        return (*self.memory_limits, *((self.memory_stat,) if self.memory_v1 else ()), *quotas)

    def usage_paths(self, cpu_at: int) -> tuple[str, ...]:
        """The files read under a limit, `cpu_at` the index of the directory whose quota is the smallest."""
        stats = (self.cpu_stats[cpu_at],) if 0 <= cpu_at < len(self.cpu_stats) else ()
        paths = (self.memory_stat, self.memory_used, self.memory_events, *stats, self.cpu_usage, self.pids_current,
                 *self.pids_limits)
        return tuple(dict.fromkeys(path for path in paths if path))



def cgroup_files(found: Mapping[str, Hierarchy]) -> CgroupFiles:
    """The files of each part, from where each controller's files are (`hierarchies`).

    >>> files = cgroup_files({"memory": Hierarchy(2, ("/cg/a", "/cg")), "cpu": Hierarchy(2, ("/cg/a", "/cg"))})
    >>> files.memory_limits, files.cpu_quotas, files.cpu_usage
    (('/cg/a/memory.max', '/cg/memory.max'), (('/cg/a/cpu.max', ''), ('/cg/cpu.max', '')), '/cg/a/cpu.stat')
    """
    join = posixpath.join
    files = CgroupFiles()
    memory = found.get("memory")
    if memory is not None:
        own, v1 = memory.directories[0], memory.version == 1
        limit = "memory.limit_in_bytes" if v1 else "memory.max"
        files = replace(files, memory_v1=v1, memory_limits=tuple(join(d, limit) for d in memory.directories),
                        memory_stat=join(own, "memory.stat"),
                        memory_used=join(own, "memory.usage_in_bytes" if v1 else "memory.current"),
                        memory_events=join(own, "memory.oom_control" if v1 else "memory.events"))
    cpu = found.get("cpu")
    if cpu is not None:
        v1 = cpu.version == 1
        quotas = tuple((join(d, "cpu.cfs_quota_us"), join(d, "cpu.cfs_period_us")) if v1 else (join(d, "cpu.max"), "")
                       for d in cpu.directories)
        stats = tuple(join(d, "cpu.stat") for d in cpu.directories)
        files = replace(files, cpu_v1=v1, cpu_quotas=quotas, cpu_stats=stats, cpu_usage="" if v1 else stats[0])
    cpuacct = found.get("cpuacct")
    if cpuacct is not None:
        files = replace(files, cpu_usage=join(cpuacct.directories[0], "cpuacct.usage"), cpu_usage_ns=True)
    pids = found.get("pids")
    if pids is not None:
        files = replace(files, pids_current=join(pids.directories[0], "pids.current"),
                        pids_limits=tuple(join(d, "pids.max") for d in pids.directories))
    return files
