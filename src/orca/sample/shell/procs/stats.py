"""Every process's raw `/proc/<pid>/stat`, for code outside the sampler that judges processes by fields the sampler
does not parse (its process group and session: `orca.control` finds a run's processes by them).

The bytes are the kernel's, read the one way the shell reads a process's file (`ProcRoot`); a process that ends
mid-pass is left out. A root other than the kernel's procfs (a fixture tree) has every file checked.
"""

from __future__ import annotations

from orca.sample.shell.procs.walk import ProcRoot


def process_stats(proc: str = "/proc") -> dict[int, bytes]:
    """pid -> the raw `stat` of every process under `proc`, from one pass; empty where there is no such root.
    `OSError` when no descriptor was left to read with (docs/behaviour.md §4.6)."""
    return dict(ProcRoot.at(proc).stats())


def process_stat(pid: int, proc: str = "/proc") -> bytes | None:
    """The raw `stat` of process `pid`; None when it does not exist (or cannot be read, or `pid` is not positive).
    `OSError` when no descriptor was left to read it with (docs/behaviour.md §4.6)."""
    if pid <= 0:
        return None
    return ProcRoot.at(proc).read(pid, "stat")
