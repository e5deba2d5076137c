"""The `io` and `net` sections (docs/behaviour.md §3.6, §3.7): bytes per second from per-device counter deltas."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from operator import attrgetter

from orca.sample.line_format import IoRate, NetRate
from orca.sample.parse import diskstats
from orca.sample.parse.block import skipped_disk
from orca.sample.parse.diskstats import SECTOR_BYTES, DiskIo, DiskStats
from orca.sample.parse.net_dev import LOOPBACK, NetDev

_NAME = attrgetter("name")


def net_rate(prev: NetDev, cur: NetDev, dt: float) -> NetRate:
    """Bytes received and sent per second over every interface but `lo` (docs/behaviour.md §3.7).

    Deltas are per interface: one that appears counts 0 for the interval it appears in (its first reading is its
    baseline), one that vanished counts 0, and a counter that went backwards (a reset) counts 0.

    >>> prev = NetDev({"eth0": (1000, 500), "gone": (9, 9)})
    >>> net_rate(prev, NetDev({"eth0": (3000, 1500), "new0": (7777, 7777)}), 2.0)
    NetRate(received=1000, sent=500)
    """
    before = prev.bytes_by_interface
    received = sent = 0
    for name, (received_now, sent_now) in cur.bytes_by_interface.items():
        counted = before.get(name)
        # The parser already leaves `lo` out; the check keeps the rate right on its own.
        if counted is not None and name != LOOPBACK:
            received += max(0, received_now - counted[0])
            sent += max(0, sent_now - counted[1])
    return NetRate(received=per_second(received, dt), sent=per_second(sent, dt))


def pair_rates(prev: Mapping[str, tuple[int, int]], cur: Mapping[str, tuple[int, int]], dt: float) -> tuple[int, int]:
    """Two byte counters per key (an interface, a device) to two sums per second of their per-key deltas.

    A key new in `cur` counts 0 (its first reading is its baseline), one gone counts 0, one that went backwards 0.

    >>> pair_rates({"8:0": (100, 10), "8:16": (5, 5)}, {"8:0": (300, 10), "7:0": (999, 999)}, 2.0)
    (100, 0)
    """
    # One pass, no per-key mapping made: this runs for every line.
    first = second = 0
    for key, (now_first, now_second) in cur.items():
        before = prev.get(key)
        if before is not None:
            first += max(0, now_first - before[0])
            second += max(0, now_second - before[1])
    return per_second(first, dt), per_second(second, dt)


def io_rate(prev: DiskStats, cur: DiskStats, whole_disks: frozenset[str] | None, dt: float) -> IoRate:
    """Bytes read and written per second, summed over the whole disks (docs/behaviour.md §3.6).

    `whole_disks` is /sys/block's list; with None, every device but the skipped ones (loop, ram, zram, dm-,
    md, sr, fd) counts, partitions included. Deltas are per device, as for `net_rate`.

    >>> prev = DiskStats((DiskIo("vda", 100, 200), DiskIo("vda1", 100, 200)))
    >>> io_rate(prev, DiskStats((DiskIo("vda", 110, 220), DiskIo("vda1", 110, 220))), frozenset({"vda"}), 5.0)
    IoRate(read=1024, write=2048)
    """
    # Name -> device, built in C; a name listed twice keeps its last line, in both.
    before = dict(zip(map(_NAME, prev.devices), prev.devices, strict=True))
    after = dict(zip(map(_NAME, cur.devices), cur.devices, strict=True))
    read = written = 0
    for name, device in after.items():
        old = before.get(name)
        if old is not None and ((name in whole_disks) if whole_disks is not None else not skipped_disk(name)):
            read += max(0, device.sectors_read - old.sectors_read)
            written += max(0, device.sectors_written - old.sectors_written)
    return IoRate(read=per_second(read * SECTOR_BYTES, dt), write=per_second(written * SECTOR_BYTES, dt))


def parse_diskstats(text: str, disks: Collection[str]) -> tuple[int, int]:
    """The documented API's `parse_diskstats`: bytes read and written so far over `disks`, or, when `disks` is
    empty, over every device but the skipped ones (as `io_rate` counts them without /sys/block's list).

    A name counts once per line however often `disks` holds it; text that does not parse gives (0, 0).

    >>> parse_diskstats(" 254 0 vda 1 0 8 0 1 0 2 0 0 0 0\\n 7 0 loop0 1 0 16 0 1 0 4 0 0 0 0\\n", ())
    (4096, 1024)
    >>> parse_diskstats(" 254 0 vda 1 0 8 0 1 0 2 0 0 0 0\\n 7 0 loop0 1 0 16 0 1 0 4 0 0 0 0\\n", ["loop0"])
    (8192, 2048)
    """
    stats = diskstats.parse(text).value_or(None)
    if stats is None:
        return (0, 0)
    counts = _counted(frozenset(disks) or None)
    counted = [device for device in stats.devices if counts(device.name)]
    return (
        sum(map(_sectors_read, counted)) * SECTOR_BYTES,
        sum(map(_sectors_written, counted)) * SECTOR_BYTES,
    )


def _counted(whole_disks: frozenset[str] | None) -> Callable[[str], bool]:
    """Whether a device's sectors count: it is one of `whole_disks`, or, without that list, not a skipped device."""
    return (lambda name: not skipped_disk(name)) if whole_disks is None else whole_disks.__contains__


def per_second(amount: int, dt: float) -> int:
    """`amount / dt` rounded to whole; 0 for a dt that isn't a positive finite number."""
    if not (dt > 0 and math.isfinite(dt)):
        return 0
    try:
        rate = amount / dt
    except OverflowError:  # an amount beyond any float: no kernel counter gets there
        return 0
    # A denormal dt could overflow the quotient to inf, which has no whole value.
    return round(rate) if math.isfinite(rate) else 0


def _sectors_read(device: DiskIo) -> int:
    return device.sectors_read


def _sectors_written(device: DiskIo) -> int:
    return device.sectors_written
