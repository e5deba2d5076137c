"""Properties of `build_line` (SPEC 3, 3.10, issue 6): each section from the readings it needs, null without them."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.build import build_line
from orca.sample.compute.containers import container_entries
from orca.sample.compute.cpu import cpu_share_between
from orca.sample.compute.encode import encode_line
from orca.sample.compute.line import CpuShare, IoRate, NetRate
from orca.sample.compute.snapshot import ContainerReading, Snapshot
from orca.sample.parse.cgroup import CpuPeriods, DeviceIo
from orca.sample.parse.pressure import Pressure, PressureLine
from tests.property.test_cpu import proc_stats
from tests.property.test_disks import disk_readings
from tests.property.test_memory import meminfos
from tests.property.test_rates import disk_stats, net_devs

U64_MAX = 2**64 - 1
maybe = st.one_of  # reads as "maybe(st.none(), x)"

# psi.rst: `some avg10=0.00 avg60=0.00 avg300=0.00 total=0`, total in microseconds (u64).
pressure_lines = st.builds(
    PressureLine, *[st.floats(0.0, 100.0)] * 3, st.integers(min_value=0, max_value=U64_MAX)
)
pressures = st.dictionaries(
    st.sampled_from(["cpu", "memory", "io"]), st.builds(Pressure, pressure_lines, maybe(st.none(), pressure_lines))
)
# cgroup-v2.rst: memory.current and the memory.stat/memory.events/cpu.stat values are u64.
container_readings = st.builds(
    ContainerReading,
    st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),
    st.text(max_size=12),
    st.integers(0, 2**50),
    st.dictionaries(st.sampled_from(["inactive_file", "active_file", "anon"]), st.integers(0, 2**50)),
    maybe(st.none(), st.dictionaries(st.sampled_from(["oom", "oom_kill", "max"]), st.integers(0, 1000))),
    maybe(st.none(), st.integers(0, U64_MAX)),
    cpu_periods=maybe(st.none(), st.builds(CpuPeriods, st.integers(0, U64_MAX), st.integers(0, U64_MAX))),
    io=maybe(st.none(), st.dictionaries(st.sampled_from(["254:0", "252:0"]),
                                        st.builds(DeviceIo, st.integers(0, U64_MAX), st.integers(0, U64_MAX)))),
)
snapshots = st.builds(
    Snapshot,
    monotonic_ns=st.integers(min_value=0, max_value=2**63 - 1),
    wall=st.floats(min_value=0.0, max_value=2**33),
    host=st.text(max_size=20),
    stat=maybe(st.none(), proc_stats()),
    meminfo=maybe(st.none(), meminfos),
    rss_bytes=maybe(st.none(), st.integers(0, 2**50)),
    disks=maybe(st.none(), st.lists(disk_readings(), max_size=4).map(tuple)),
    diskstats=maybe(st.none(), disk_stats),
    whole_disks=maybe(st.none(), st.frozensets(st.sampled_from(["sda", "vda", "nvme0n1", "loop0"]))),
    net=maybe(st.none(), net_devs),
    containers_enabled=st.booleans(),
    containers=maybe(st.none(), st.lists(container_readings, max_size=3).map(tuple)),
    pressure=maybe(st.none(), pressures),
    self_cpu=st.floats(min_value=0.0, max_value=1e6),
    container_disks=maybe(st.none(), st.frozensets(st.sampled_from(["254:0", "252:0"]))),
)


@given(snapshots, snapshots)
def test_any_two_snapshots_give_a_line_that_encodes(prev: Snapshot, cur: Snapshot) -> None:
    """SPEC 3.10: a sampler never fails because one source misbehaved; whatever the readings, a line is written."""
    document = json.loads(encode_line(build_line(prev, cur)))
    assert document["v"] == 1


@given(snapshots, snapshots)
def test_each_section_is_null_exactly_when_a_reading_it_needs_is_missing(prev: Snapshot, cur: Snapshot) -> None:
    line = build_line(prev, cur)
    assert (line.cpu is None) == (prev.stat is None or cur.stat is None)
    assert (line.cores is None) == (cur.stat is None)
    has_total = cur.meminfo is not None and "MemTotal" in cur.meminfo.bytes_by_key
    assert (line.mem is None) == (not has_total or cur.rss_bytes is None)
    assert (line.disk is None) == (cur.disks is None)
    assert (line.io is None) == (prev.diskstats is None or cur.diskstats is None)
    assert (line.net is None) == (prev.net is None or cur.net is None)
    assert line.containers_enabled == cur.containers_enabled
    assert (line.containers is None) == (not cur.containers_enabled or cur.containers is None)
    assert (line.pressure is None) == (cur.pressure is None)


@given(snapshots, snapshots)
def test_time_host_cores_and_self_cpu_come_from_the_later_snapshot(prev: Snapshot, cur: Snapshot) -> None:
    """SPEC 3.2, 3.9: `t` the wall clock of the readings, `dt` the monotonic seconds since the previous ones."""
    line = build_line(prev, cur)
    assert line.t == cur.wall
    assert line.dt == (cur.monotonic_ns - prev.monotonic_ns) / 1_000_000_000
    assert line.host == cur.host
    assert line.self_cpu == cur.self_cpu
    if cur.stat is not None:
        assert line.cores == len(cur.stat.cores)


@given(snapshots, snapshots)
def test_sections_are_the_core_functions_of_the_two_readings(prev: Snapshot, cur: Snapshot) -> None:
    line = build_line(prev, cur)
    if prev.stat is not None and cur.stat is not None:
        assert line.cpu == cpu_share_between(prev.stat, cur.stat)
    if cur.containers_enabled and cur.containers is not None:
        assert line.containers == container_entries(prev.containers, cur.containers, line.dt, cur.container_disks)


@given(snapshots)
def test_a_snapshot_against_itself_has_nothing_to_report(snapshot: Snapshot) -> None:
    """dt 0: no CPU time, no bytes moved; the point-in-time sections (mem, disk) are still there."""
    line = build_line(snapshot, snapshot)
    assert line.dt == 0.0
    assert line.cpu in (None, CpuShare(0.0, 0.0, 0.0, 0.0, 0.0))
    assert line.io in (None, IoRate(0, 0))
    assert line.net in (None, NetRate(0, 0))
    assert (line.disk is None) == (snapshot.disks is None)


@given(snapshots, snapshots)
def test_rates_use_the_monotonic_interval(prev: Snapshot, cur: Snapshot) -> None:
    """The same readings one second apart and two seconds apart: the byte rates halve (to within rounding)."""
    later = dataclasses.replace(cur, monotonic_ns=prev.monotonic_ns + 1_000_000_000)
    twice = dataclasses.replace(cur, monotonic_ns=prev.monotonic_ns + 2_000_000_000)
    one, two = build_line(prev, later), build_line(prev, twice)
    if one.net is not None and two.net is not None:
        assert abs(two.net.received - one.net.received / 2) <= 1
        assert abs(two.net.sent - one.net.sent / 2) <= 1
