"""The newest minute of a host's samples: what a scheduler decides from before it starts a run there."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from orca.sample.compute.disks import fullness
from orca.sample.line_format import Sample


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
    """The fullest file system in the window: the largest 100 × `used` / (`used` + `free`), as `df` counts Use%
    (`free` is what an unprivileged process may use); None without `disk`."""
    disk_path: str
    """That file system's `path`; "" when `disk_percent` is None."""
    cpu_percent: float | None
    """Mean over the window of `cpu.user` + `cpu.system` + `cpu.steal`, all `busiest` counts as busy; None when no
    line in it had `cpu`."""
    lines: int
    """How many lines the window holds."""


WINDOW_SECONDS = 60.0
"""The window: lines whose `t` is within this of the newest line's `t`."""
STALE_SECONDS = 120.0
"""A newest line older than this at the moment asked about holds nothing."""


def newest_window(samples_newest_first: Iterable[Sample]) -> list[Sample]:
    """The lines of the newest minute, taken from lines given newest first (a file read from its end): it stops at
    the first line older than the window, so nothing before it is read.

    >>> lines = [Sample(v=1, t=t, dt=5.0, host="h") for t in (200.0, 170.0, 140.0, 139.9, 1.0)]
    >>> [sample.t for sample in newest_window(lines)]
    [200.0, 170.0, 140.0]
    """
    window: list[Sample] = []
    newest_t = -math.inf
    for sample in samples_newest_first:
        newest_t = max(newest_t, sample.t)
        if sample.t < newest_t - WINDOW_SECONDS:
            break
        window.append(sample)
    return window


def newest_minute(samples: Iterable[Sample], now: float) -> Now | None:
    """The newest minute of one instance's lines, as seen at Unix time `now`; None when there is no line or the
    newest is more than two minutes old (samples that are old or missing hold nothing). Each figure as `Now` says.

    >>> from orca.sample.line_format import Disk, Mem
    >>> lines = [Sample(v=1, t=100.0, dt=5.0, host="h", mem=Mem(200, 50, 150, 0, 0, 0, 0)),
    ...          Sample(v=1, t=130.0, dt=5.0, host="h", mem=Mem(200, 150, 50, 0, 0, 0, 0),
    ...                 disk=(Disk("/tmp", 10, 3, 1),))]
    >>> minute = newest_minute(lines, now=140.0)
    >>> (minute.t, minute.age, minute.memory_percent, minute.disk_percent, minute.disk_path, minute.lines)
    (130.0, 10.0, 50.0, 75.0, '/tmp', 2)
    >>> newest_minute(lines, now=250.1) is None
    True
    """
    window = list(samples)
    if not window:
        return None
    newest_t = max(sample.t for sample in window)
    age = max(0.0, now - newest_t)
    if age > STALE_SECONDS:
        return None
    window = [sample for sample in window if newest_t - WINDOW_SECONDS <= sample.t <= newest_t]
    memory = [100.0 * s.mem.used / s.mem.total for s in window if s.mem is not None and s.mem.total > 0]
    cpu = [s.cpu.user + s.cpu.system + s.cpu.steal for s in window if s.cpu is not None]
    disks = [
        (percent, disk.path)
        for s in window
        for disk in s.disk or ()
        if (percent := fullness(disk.used, disk.free)) is not None
    ]
    fullest = max(disks, key=lambda entry: entry[0], default=None)
    return Now(
        t=newest_t,
        age=age,
        memory_percent=_mean(memory),
        disk_percent=None if fullest is None else fullest[0],
        disk_path="" if fullest is None else fullest[1],
        cpu_percent=_mean(cpu),
        lines=len(window),
    )


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
