"""Properties of the `io` and `net` rates (docs/behaviour.md §3.6, §3.7): per-device deltas, never negative."""

from __future__ import annotations

import math

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.compute.rates import io_rate, net_rate
from orca.sample.line_format import IoRate, NetRate
from orca.sample.parse.block import skipped_disk
from orca.sample.parse.diskstats import DiskIo, DiskStats
from orca.sample.parse.net_dev import NetDev
from tests.property.strategies_core import (
    U64_MAX,
    counters,
    device_names,
    disk_stats,
    interface_names,
    net_devs,
)

increments = st.integers(min_value=0, max_value=10**12)
# Any float at all, including the ones a broken clock could give: rates must stay whole and non-negative.
any_dt = st.floats(allow_nan=True, allow_infinity=True)
positive_dt = st.floats(min_value=1e-3, max_value=1e6)


@given(net_devs, net_devs, any_dt)
@example(NetDev({"eth0": (10, 10)}), NetDev({"eth0": (U64_MAX, U64_MAX)}), 5e-324)  # overflows to inf
@example(NetDev({"eth0": (0, 0)}), NetDev({"eth0": (1, 1)}), math.nan)
def test_net_rate_is_never_negative(prev: NetDev, cur: NetDev, dt: float) -> None:
    rate = net_rate(prev, cur, dt)
    assert isinstance(rate.received, int) and isinstance(rate.sent, int)
    assert rate.received >= 0 and rate.sent >= 0


@given(disk_stats, disk_stats, st.one_of(st.none(), st.frozensets(device_names)), any_dt)
def test_io_rate_is_never_negative(
    prev: DiskStats, cur: DiskStats, whole_disks: frozenset[str] | None, dt: float
) -> None:
    rate = io_rate(prev, cur, whole_disks, dt)
    assert isinstance(rate.read, int) and isinstance(rate.write, int)
    assert rate.read >= 0 and rate.write >= 0


@given(net_devs, net_devs, disk_stats, disk_stats, st.floats(max_value=0.0))
def test_a_dt_that_is_not_positive_gives_zero_rates(
    net_prev: NetDev, net_cur: NetDev, io_prev: DiskStats, io_cur: DiskStats, dt: float
) -> None:
    assert net_rate(net_prev, net_cur, dt) == NetRate(0, 0)
    assert io_rate(io_prev, io_cur, None, dt) == IoRate(0, 0)


@st.composite
def net_intervals(draw: st.DrawFn) -> tuple[NetDev, NetDev, int, int]:
    """Two readings of the same interfaces, each counter increased: and the summed increases, worked out apart."""
    prev = draw(st.dictionaries(interface_names.filter(lambda name: name != "lo"), st.tuples(counters, counters)))
    cur: dict[str, tuple[int, int]] = {}
    received = sent = 0
    for name, (rx, tx) in prev.items():
        more_rx, more_tx = draw(increments), draw(increments)
        cur[name] = (rx + more_rx, tx + more_tx)
        received, sent = received + more_rx, sent + more_tx
    return NetDev(prev), NetDev(cur), received, sent


@given(net_intervals(), positive_dt)
def test_net_rate_is_the_summed_increase_over_dt(interval: tuple[NetDev, NetDev, int, int], dt: float) -> None:
    prev, cur, received, sent = interval
    assert net_rate(prev, cur, dt) == NetRate(round(received / dt), round(sent / dt))


@given(net_intervals(), positive_dt, interface_names.filter(lambda name: name != "lo"), counters, counters)
def test_an_interface_that_appears_or_vanishes_counts_zero(
    interval: tuple[NetDev, NetDev, int, int], dt: float, name: str, rx: int, tx: int
) -> None:
    """docs/behaviour.md §3.7: a new interface's first reading is its baseline; one that vanished counts 0."""
    prev, cur, _, _ = interval
    if name in prev.bytes_by_interface:
        return
    expected = net_rate(prev, cur, dt)
    assert net_rate(prev, NetDev({**cur.bytes_by_interface, name: (rx, tx)}), dt) == expected
    assert net_rate(NetDev({**prev.bytes_by_interface, name: (rx, tx)}), cur, dt) == expected


@given(net_intervals(), positive_dt, counters, counters, increments)
def test_loopback_never_counts(
    interval: tuple[NetDev, NetDev, int, int], dt: float, rx: int, tx: int, more: int
) -> None:
    prev, cur, _, _ = interval
    with_lo_prev = NetDev({**prev.bytes_by_interface, "lo": (rx, tx)})
    with_lo_cur = NetDev({**cur.bytes_by_interface, "lo": (rx + more, tx + more)})
    assert net_rate(with_lo_prev, with_lo_cur, dt) == net_rate(prev, cur, dt)


@given(net_intervals(), positive_dt, st.data())
def test_an_interface_whose_counters_went_backwards_counts_zero(
    interval: tuple[NetDev, NetDev, int, int], dt: float, data: st.DataObject
) -> None:
    """docs/behaviour.md §3.7: a reset interface (counters below their previous values) adds nothing that interval."""
    prev, cur, received, sent = interval
    if not prev.bytes_by_interface:
        return
    name = data.draw(st.sampled_from(sorted(prev.bytes_by_interface)))
    old_rx, old_tx = prev.bytes_by_interface[name]
    new_rx, new_tx = cur.bytes_by_interface[name]
    reset = (data.draw(st.integers(0, old_rx)), data.draw(st.integers(0, old_tx)))
    expected = NetRate(round((received - (new_rx - old_rx)) / dt), round((sent - (new_tx - old_tx)) / dt))
    assert net_rate(prev, NetDev({**cur.bytes_by_interface, name: reset}), dt) == expected


@st.composite
def disk_intervals(draw: st.DrawFn) -> tuple[DiskStats, DiskStats, dict[str, tuple[int, int]]]:
    """Two readings of the same devices, each counter increased, and each device's increase in sectors."""
    devices = draw(st.lists(st.builds(DiskIo, device_names, counters, counters), unique_by=lambda d: d.name))
    later: list[DiskIo] = []
    increase: dict[str, tuple[int, int]] = {}
    for device in devices:
        more_read, more_written = draw(increments), draw(increments)
        later.append(DiskIo(device.name, device.sectors_read + more_read, device.sectors_written + more_written))
        increase[device.name] = (more_read, more_written)
    return DiskStats(tuple(devices)), DiskStats(tuple(later)), increase


@given(disk_intervals(), st.frozensets(device_names), positive_dt)
def test_io_rate_sums_the_whole_disks_only(
    interval: tuple[DiskStats, DiskStats, dict[str, tuple[int, int]]], whole_disks: frozenset[str], dt: float
) -> None:
    """docs/behaviour.md §3.6: sectors × 512 over the devices /sys/block lists, whatever else /proc/diskstats holds."""
    prev, cur, increase = interval
    read = sum(sectors for name, (sectors, _) in increase.items() if name in whole_disks)
    written = sum(sectors for name, (_, sectors) in increase.items() if name in whole_disks)
    assert io_rate(prev, cur, whole_disks, dt) == IoRate(round(read * 512 / dt), round(written * 512 / dt))


@given(disk_intervals(), positive_dt)
def test_io_rate_without_sys_block_skips_the_listed_virtual_devices(
    interval: tuple[DiskStats, DiskStats, dict[str, tuple[int, int]]], dt: float
) -> None:
    """docs/behaviour.md §3.6: with no /sys/block list, every device but loop, ram, zram, dm-, md, sr and fd counts."""
    prev, cur, increase = interval
    read = sum(sectors for name, (sectors, _) in increase.items() if not skipped_disk(name))
    written = sum(sectors for name, (_, sectors) in increase.items() if not skipped_disk(name))
    assert io_rate(prev, cur, None, dt) == IoRate(round(read * 512 / dt), round(written * 512 / dt))


def test_a_device_that_appears_counts_from_its_first_reading() -> None:
    """A disk hot-added between two readings has no baseline yet: its whole counter is not one interval's work."""
    prev = DiskStats((DiskIo("sda", 1000, 2000),))
    cur = DiskStats((DiskIo("sda", 1010, 2020), DiskIo("sdb", 10**9, 10**9)))
    # sda: 10 sectors read, 20 written, × 512 bytes, over 2 s: 2560 and 5120 bytes/s; sdb adds nothing.
    assert io_rate(prev, cur, frozenset({"sda", "sdb"}), 2.0) == IoRate(2560, 5120)
