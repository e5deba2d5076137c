"""The newest minute of a host's samples: what a scheduler decides from before it starts a run there."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Now:
    """The newest minute of one instance's lines: those whose `t` is within 60 s of the newest line's `t`."""

    t: float
    """`t` of the newest line (Unix seconds)."""
    age: float
    """Seconds from `t` to the moment asked about (never below 0)."""
    memory_percent: float | None
    """Mean over the window of 100 × `mem.used` / `mem.total`; None when no line in it had `mem`."""
    disk_percent: float | None
    """The fullest file system in the window: the largest 100 × `used` / (`used` + `free`); None without `disk`."""
    disk_path: str
    """That file system's `path`; "" when `disk_percent` is None."""
    cpu_percent: float | None
    """Mean over the window of `cpu.user` + `cpu.system` + `cpu.steal`; None when no line in it had `cpu`."""
    lines: int
    """How many lines the window holds."""
