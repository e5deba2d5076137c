"""The `disk` section (docs/behaviour.md §3.5): one entry per file system among the directories."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from toolz import unique

from orca.sample.compute.snapshot import DiskReading
from orca.sample.line_format import Disk

_ST_DEV = attrgetter("st_dev")


def disks_by_filesystem(readings: Sequence[DiskReading]) -> tuple[Disk, ...]:
    """One entry per `st_dev`, the first named winning, in the order named; bytes from `statvfs`.

    `total` f_blocks × f_frsize, `free` f_bavail × f_frsize (what an unprivileged process can use), `used`
    (f_blocks - f_bfree) × f_frsize, never negative.

    >>> tmp = DiskReading("/tmp", 42, f_blocks=100, f_bfree=60, f_bavail=50, f_frsize=4096)
    >>> disks_by_filesystem([tmp, DiskReading("/tmp/spill", 42, 100, 60, 50, 4096)])
    (Disk(path='/tmp', total=409600, used=163840, free=204800),)
    """
    return tuple(map(_disk, unique(readings, key=_ST_DEV)))


def _disk(reading: DiskReading) -> Disk:
    frsize = reading.f_frsize
    return Disk(
        path=reading.path,
        total=reading.f_blocks * frsize,
        used=max(0, (reading.f_blocks - reading.f_bfree) * frsize),
        free=reading.f_bavail * frsize,
    )


def fullness(used: int, free: int) -> float | None:
    """How full a file system is, as `df` counts Use%: 100 × `used` / (`used` + `free`), `free` being what an
    unprivileged process can use; None for one of no size. The one rule the newest minute, the summary and
    the chart share.

    >>> fullness(50, 30)
    62.5
    >>> fullness(0, 0) is None
    True
    """
    size = used + free
    return 100 * used / size if size > 0 else None  # whole numbers divided: a file system's sizes have no bound
