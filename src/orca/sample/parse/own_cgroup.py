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
from dataclasses import dataclass
from typing import Literal

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


@dataclass(frozen=True, slots=True)
class Hierarchy:
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

    >>> mounts = (CgroupMount(1, "/", "/cg/memory", frozenset({"memory"})), CgroupMount(2, "/", "/cg/unified",
    ...           frozenset()))
    >>> found = hierarchies({"memory": "/a", "": "/"}, mounts)
    >>> found["memory"], found["pids"].directories
    (Hierarchy(version=1, directories=('/cg/memory/a', '/cg/memory')), ('/cg/unified',))
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
    return found
