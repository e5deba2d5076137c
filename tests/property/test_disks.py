"""Properties of the `disk` section (docs/behaviour.md §3.5): one entry per file system, the first named wins."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.disks import disks_by_filesystem
from orca.sample.compute.snapshot import DiskReading
from orca.sample.line_format import Disk
from tests.property.strategies_core import disk_readings, paths


@given(st.lists(disk_readings(), max_size=8))
def test_one_entry_per_st_dev_the_first_named_in_order(readings: list[DiskReading]) -> None:
    disks = disks_by_filesystem(readings)
    first_of_each: dict[int, DiskReading] = {}
    for reading in readings:
        first_of_each.setdefault(reading.st_dev, reading)
    # dicts keep insertion order: the order in which each file system was first named.
    assert [disk.path for disk in disks] == [reading.path for reading in first_of_each.values()]


@given(st.lists(disk_readings(), max_size=8))
def test_sizes_are_statvfs_counts_times_fragment_size(readings: list[DiskReading]) -> None:
    for disk, reading in zip(disks_by_filesystem(readings), _firsts(readings), strict=True):
        assert disk == Disk(
            path=reading.path,
            total=reading.f_blocks * reading.f_frsize,
            used=(reading.f_blocks - reading.f_bfree) * reading.f_frsize,
            free=reading.f_bavail * reading.f_frsize,
        )
        assert 0 <= disk.free <= disk.total and 0 <= disk.used <= disk.total


@given(st.lists(st.builds(DiskReading, paths, st.integers(0, 3), *[st.integers(0, 2**64 - 1)] * 4), max_size=6))
def test_inconsistent_counts_never_give_a_negative_used(readings: list[DiskReading]) -> None:
    """A file system that reports more free blocks than blocks (a racing or broken statvfs) gives used 0."""
    assert all(disk.used >= 0 for disk in disks_by_filesystem(readings))


def test_two_directories_on_one_file_system() -> None:
    """docs/behaviour.md §3.5: $TMPDIR and a spill directory on the same device: one entry, under the first path."""
    tmp = DiskReading("/tmp", 2049, f_blocks=1000, f_bfree=400, f_bavail=300, f_frsize=4096)
    spill = DiskReading("/tmp/spill", 2049, f_blocks=1000, f_bfree=399, f_bavail=299, f_frsize=4096)
    store = DiskReading("/data/store", 2050, f_blocks=10, f_bfree=10, f_bavail=10, f_frsize=1024)
    # /tmp: 1000 × 4096 = 4096000 total, (1000 - 400) × 4096 = 2457600 used, 300 × 4096 = 1228800 free.
    assert disks_by_filesystem([tmp, spill, store]) == (
        Disk("/tmp", 4096000, 2457600, 1228800),
        Disk("/data/store", 10240, 0, 10240),
    )


def _firsts(readings: list[DiskReading]) -> list[DiskReading]:
    seen: set[int] = set()
    firsts = []
    for reading in readings:
        if reading.st_dev not in seen:
            seen.add(reading.st_dev)
            firsts.append(reading)
    return firsts
