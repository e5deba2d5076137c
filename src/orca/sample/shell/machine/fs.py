"""The mount points the machine is read from: `/proc` and `/sys`, or whole fixture trees standing in for them
(docs/behaviour.md §7). Every path a reader opens is derived from one `FS` (as prometheus/procfs's `FS` does).

Light to import on purpose (`os` alone): the command reads the baseline through it before anything else loads.
"""

from __future__ import annotations

import os

PRESSURE_RESOURCES = ("cpu", "memory", "io")


class FS:
    """A proc root and a sys root. Plain and slotted rather than a dataclass: it is made before anything heavier
    than `os` is loaded."""

    __slots__ = ("diskstats", "kernel_files", "meminfo", "net_dev", "pressure", "proc", "stat", "sys")

    def __init__(self, proc: str = "/proc", sys: str = "/sys") -> None:
        self.proc = proc
        self.sys = sys
        # The host's kernel files, read every line: their paths joined once.
        self.stat = os.path.join(proc, "stat")
        self.meminfo = os.path.join(proc, "meminfo")
        self.diskstats = os.path.join(proc, "diskstats")
        self.net_dev = os.path.join(proc, "net", "dev")
        self.pressure = tuple(os.path.join(proc, "pressure", resource) for resource in PRESSURE_RESOURCES)
        self.kernel_files = (self.stat, self.meminfo, self.diskstats, self.net_dev, *self.pressure)
        """The paths of the kernel files a line's host readings come from, in `KernelTexts`' order."""

    def sys_path(self, *parts: str) -> str:
        return os.path.join(self.sys, *parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FS) and (self.proc, self.sys) == (other.proc, other.sys)

    def __hash__(self) -> int:
        return hash((self.proc, self.sys))

    def __repr__(self) -> str:
        return f"FS(proc={self.proc!r}, sys={self.sys!r})"
