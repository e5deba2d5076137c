"""`/proc/<pid>/mountinfo` (proc_pid_mountinfo(5)), read for where the cgroup hierarchies are mounted.

A line is `ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL-FIELDS...] - FSTYPE SOURCE SUPER-OPTIONS`: zero or
more optional fields, then a lone `-`. ROOT is the directory of the file system at the mount's top (for a cgroup
file system, the cgroup path that is the mount point: `/` for the whole hierarchy, or inside a cgroup namespace;
`/docker/<id>` for a container's own cgroup mounted without one). Paths have a space, tab, newline and backslash
written as octal escapes (`\\040`, `\\011`, `\\012`, `\\134`). A cgroup v1 hierarchy is FSTYPE `cgroup`, its
controllers among its SUPER-OPTIONS (`rw,cpu,cpuacct`; a named one as `name=systemd`); the v2 hierarchy is `cgroup2`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from returns.result import Failure, Result, Success

from orca.sample.parse.errors import ParseError

SOURCE = "/proc/self/mountinfo"
_ESCAPE = re.compile(r"\\([0-7]{3})")
_FIELDS_BEFORE_OPTIONAL = 6
_FIELDS_AFTER_SEPARATOR = 3
_V1_OPTIONS = frozenset({"rw", "ro"})
"""Super options of a v1 cgroup mount that name no controller (`rw`, `ro`, and any `key=value` but `name=`)."""


@dataclass(frozen=True, slots=True)
class CgroupMount:
    """One cgroup file system mounted in this mount namespace."""

    version: Literal[1, 2]
    root: str
    """The cgroup path at the top of the mount (`/`: the hierarchy's root, or a cgroup namespace's)."""
    mount_point: str
    controllers: frozenset[str]
    """A v1 hierarchy's controllers (`memory`; `cpu` and `cpuacct` together; `name=systemd`); empty for v2."""


def unescaped(path: str) -> str:
    r"""A mountinfo path with its octal escapes decoded.

    >>> unescaped(r"/mnt/with\040space\134x")
    '/mnt/with space\\x'
    """
    return _ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), path) if "\\" in path else path


def _mount(line: str) -> CgroupMount | Literal[False] | None:
    """The cgroup mount of one line; None for a mount of another file system; False for a line of another shape."""
    fields = line.split(" ")
    try:
        separator = fields.index("-", _FIELDS_BEFORE_OPTIONAL)
    except ValueError:
        return False
    if len(fields) != separator + 1 + _FIELDS_AFTER_SEPARATOR or not fields[3].startswith("/"):
        return False
    fstype, options = fields[separator + 1], fields[separator + 3]
    root, mount_point = unescaped(fields[3]), unescaped(fields[4])
    if fstype == "cgroup2":
        return CgroupMount(version=2, root=root, mount_point=mount_point, controllers=frozenset())
    if fstype != "cgroup":
        return None
    controllers = frozenset(
        option for option in options.split(",")
        if option and option not in _V1_OPTIONS and ("=" not in option or option.startswith("name="))
    )
    return CgroupMount(version=1, root=root, mount_point=mount_point, controllers=controllers)


def cgroup_mounts(text: str) -> Result[tuple[CgroupMount, ...], ParseError]:
    """The cgroup mounts of a mountinfo text, in its order; empty when none is a cgroup file system. A line of
    another shape is skipped; text with lines but none of mountinfo's shape is a failure.

    >>> cgroup_mounts("35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\\n").unwrap()
    (CgroupMount(version=1, root='/', mount_point='/sys/fs/cgroup/memory', controllers=frozenset({'memory'})),)
    >>> cgroup_mounts("29 23 0:26 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw,nsdelegate\\n").unwrap()[0].version
    2
    """
    mounts: list[CgroupMount] = []
    shaped = lines = 0
    for line in text.split("\n"):  # not `splitlines`: a path may hold U+0085 or U+2028, which it splits at
        if not line.strip():
            continue
        lines += 1
        mount = _mount(line)
        if mount is False:
            continue
        shaped += 1
        if mount is not None:
            mounts.append(mount)
    if lines and not shaped:
        return Failure(ParseError(SOURCE, "no line of mountinfo's shape"))
    return Success(tuple(mounts))
