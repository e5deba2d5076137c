"""Properties of `build_line` (docs/behaviour.md §3, §3.10): each section from the readings it needs, null without
them. Expected values are worked out by hand or are relations between lines; none comes from the functions
`build_line` delegates to."""

from __future__ import annotations

import json

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.build import build_line
from orca.sample.compute.encode import encode_line
from orca.sample.compute.run import CommandEnd
from orca.sample.compute.run_reading import RunReading
from orca.sample.compute.snapshot import ContainerReading, DiskReading, Snapshot
from orca.sample.line_format import UNSET, ContainerSample, CpuShare, Disk, IoRate, Mem, NetRate, PressureShare
from orca.sample.parse.cgroup import CpuPeriods, DeviceIo
from orca.sample.parse.diskstats import DiskIo, DiskStats
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.pressure import Pressure, PressureLine
from orca.sample.parse.proc_stat import CpuTimes, ProcStat
from tests.examples import costly
from tests.property.strategies_core import U64_MAX, disk_readings, disk_stats, meminfos, net_devs, proc_stats

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
PIDS = st.integers(1, 8)
U64 = st.integers(0, U64_MAX)
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
    start=maybe(st.none(), st.floats(min_value=0.0, max_value=2**33)),
    run_enabled=st.booleans(),
    # proc(5): starttime and the times are ticks (u64); a pid up to 2**22; `io`'s counters are u64 too.
    run=maybe(st.none(), st.builds(
        RunReading,
        st.integers(0, 2**63 - 1),
        st.integers(0, U64_MAX),
        st.sampled_from([100, 1_000_000]),
        st.dictionaries(PIDS, st.tuples(*[st.integers(0, U64_MAX)] * 4, st.none() | st.tuples(U64, U64)), max_size=4),
        st.integers(0, 4),
        resident=st.dictionaries(PIDS, st.integers(0, 2**50), max_size=4),
        names=st.dictionaries(PIDS, st.text(max_size=80), max_size=4),
    )),
    command=maybe(st.none(), st.lists(st.text(max_size=300), max_size=40).map(tuple)),
    ended=maybe(st.none(), st.builds(CommandEnd, returncode=st.integers(-64, 255))),
)


@given(snapshots, snapshots)
@costly(0.5)
def test_any_two_snapshots_give_a_line_that_encodes(prev: Snapshot, cur: Snapshot) -> None:
    """docs/behaviour.md §3.10: a sampler never fails because one source misbehaved; whatever the readings, a
    line is written."""
    document = json.loads(encode_line(build_line(prev, cur)))
    assert document["v"] == 1


@given(snapshots, snapshots)
@costly(0.5)
def test_each_section_is_null_exactly_when_a_reading_it_needs_is_missing(prev: Snapshot, cur: Snapshot) -> None:
    line = build_line(prev, cur)
    assert (line.cpu is None) == (prev.stat is None or cur.stat is None)
    assert (line.cores is None) == (cur.stat is None)
    has_total = cur.meminfo is not None and "MemTotal" in cur.meminfo.bytes_by_key
    assert (line.mem is None) == (not has_total or cur.rss_bytes is None)
    assert (line.disk is None) == (cur.disks is None)
    assert (line.io is None) == (prev.diskstats is None or cur.diskstats is None)
    assert (line.net is None) == (prev.net is None or cur.net is None)
    assert (line.containers is UNSET) == (not cur.containers_enabled)
    assert (line.containers is None) == (cur.containers_enabled and cur.containers is None)
    assert (line.pressure is None) == (cur.pressure is None)
    assert (line.run is None) == (not cur.run_enabled)
    if line.run is not None:
        assert (line.run.cpu is None) == (prev.run is None or cur.run is None or cur.stat is None)
        assert (line.run.procs is None) == (cur.run is None)
        assert (line.run.command is None) == (cur.command is None)
        assert (line.run.exit is None) == (cur.ended is None)
    assert line.start == cur.start


@given(snapshots, snapshots)
@costly(0.5)
def test_time_host_cores_and_self_cpu_come_from_the_later_snapshot(prev: Snapshot, cur: Snapshot) -> None:
    """docs/behaviour.md §3.2, §3.9: `t` the wall clock of the readings, `dt` the monotonic seconds since the
    previous ones, at least the millisecond it is written to."""
    line = build_line(prev, cur)
    assert line.t == cur.wall
    assert line.dt == max((cur.monotonic_ns - prev.monotonic_ns) / 1_000_000_000, 0.001)
    assert line.host == cur.host
    assert line.self_cpu == cur.self_cpu
    if cur.stat is not None:
        assert line.cores == len(cur.stat.cores)


# The readings a section is computed from (the clocks aside, which every rate needs).
SECTION_READINGS = {
    "cpu": ("stat",),
    "cores": ("stat",),
    "mem": ("meminfo", "rss_bytes"),
    "disk": ("disks",),
    "io": ("diskstats", "whole_disks"),
    "net": ("net",),
    "containers": ("containers_enabled", "containers", "container_disks"),
    "pressure": ("pressure",),
    "run": ("run_enabled", "run", "stat", "command", "ended"),
    "start": ("start",),
}


def with_readings(snapshot: Snapshot, others: Snapshot, fields: tuple[str, ...]) -> Snapshot:
    """`others`' readings but `fields` and the clocks of `snapshot`."""
    kept = {name: getattr(snapshot, name) for name in ("monotonic_ns", "wall", *fields)}
    return msgspec.structs.replace(others, **kept)


@given(snapshots, snapshots, snapshots, snapshots)
@costly(0.5)
def test_each_section_depends_only_on_its_own_readings(
    prev: Snapshot, cur: Snapshot, other_prev: Snapshot, other_cur: Snapshot
) -> None:
    """Every other reading swapped for one of an unrelated pair of snapshots: the section is the same."""
    line = build_line(prev, cur)
    for section, fields in SECTION_READINGS.items():
        mixed = build_line(with_readings(prev, other_prev, fields), with_readings(cur, other_cur, fields))
        assert getattr(mixed, section) == getattr(line, section), section


def hand_worked(snapshot: Snapshot, at_ns: int, later: bool) -> Snapshot:
    """`snapshot` with readings whose differences are worked out by hand below; `later` for the second one."""
    k = 1 if later else 0
    stat = CpuTimes(100 + 50 * k, 0 + 10 * k, 50 + 20 * k, 800 + 100 * k, 0 + 20 * k, 5 * k, 5 * k, 0)
    return msgspec.structs.replace(
        snapshot,
        monotonic_ns=at_ns,
        stat=ProcStat(total=stat, cores=((0, stat),)),
        meminfo=MemInfo({"MemTotal": 1000, "MemAvailable": 400, "Cached": 250, "SwapTotal": 100, "SwapFree": 40}),
        rss_bytes=7,
        disks=(DiskReading("/tmp", 42, 100, 60, 50, 4096), DiskReading("/tmp/spill", 42, 1, 1, 1, 512)),
        diskstats=DiskStats((DiskIo("vda", 100 + 8 * k, 200 + 16 * k), DiskIo("loop0", 0, 999 * k))),
        whole_disks=frozenset({"vda"}),
        net=NetDev({"eth0": (1000 + 4000 * k, 500 + 1000 * k)}),
        containers_enabled=True,
        containers=(
            ContainerReading("b" * 64, "web", 1000, {"inactive_file": 300, "active_file": 200}, {"oom_kill": 1},
                             1_000_000 + 1_000_000 * k),
            ContainerReading("a" * 64, "api", 50, {"inactive_file": 80}, None, None),
        ),
        pressure={"cpu": Pressure(PressureLine(0.0, 0.0, 0.0, 500_000 * k), None)},
    )


@given(snapshots, snapshots)
@costly(0.5)
def test_hand_worked_sections_whatever_else_the_snapshots_hold(prev: Snapshot, cur: Snapshot) -> None:
    """Two readings 2 s apart with every section's values worked out by hand; the drawn snapshots give the rest
    (host, wall clock, self_cpu), which must not matter."""
    start = prev.monotonic_ns
    line = build_line(hand_worked(prev, start, later=False), hand_worked(cur, start + 2_000_000_000, later=True))
    # Deltas: user 50, nice 10, system 20, idle 100, iowait 20, irq 5, softirq 5, steal 0; total 210.
    # user = 60/210, system = 30/210, iowait = 20/210; the one core is the total: busy = 210 - 100 - 20 = 90.
    assert line.cpu == CpuShare(user=6000 / 210, system=3000 / 210, iowait=2000 / 210, steal=0.0, busiest=9000 / 210)
    assert line.cores == 1
    # used = 1000 - 400; cache = Cached without Active(file)/Inactive(file); swap_used = 100 - 40.
    assert line.mem == Mem(total=1000, used=600, available=400, cache=250, swap_total=100, swap_used=60, rss=7)
    # One file system (st_dev 42), the first named: total 100 × 4096, used (100 - 60) × 4096, free 50 × 4096.
    assert line.disk == (Disk("/tmp", 409_600, 163_840, 204_800),)
    # vda only (loop0 is not a whole disk): 8 and 16 sectors of 512 bytes over 2 s.
    assert line.io == IoRate(read=2048, write=4096)
    assert line.net == NetRate(received=2000, sent=500)
    # Sorted by name: api (no previous cpu.stat: 0.0; mem 50 - 80 is below 0: 0), then web: 1 s of CPU in 2 s.
    assert line.containers == (
        ContainerSample(name="api", mem=0, cpu=0.0, mem_nocache=0, oom_kill=None),
        ContainerSample(name="web", mem=700, cpu=50.0, mem_nocache=500, oom_kill=1),
    )
    # 0.5 s of stall in 2 s; memory and io have no file: left out.
    assert line.pressure == PressureShare(cpu=25.0, memory=None, io=None)


@given(snapshots)
def test_a_snapshot_against_itself_has_nothing_to_report(snapshot: Snapshot) -> None:
    """No time between them (written as the shortest `dt`, 0.001): no CPU time, no bytes moved; the point-in-time
    sections (mem, disk) are still there."""
    line = build_line(snapshot, snapshot)
    assert line.dt == 0.001
    assert line.cpu in (None, CpuShare(0.0, 0.0, 0.0, 0.0, 0.0))
    assert line.io in (None, IoRate(0, 0))
    assert line.net in (None, NetRate(0, 0))
    assert (line.disk is None) == (snapshot.disks is None)


@given(snapshots, snapshots)
@costly(0.5)
def test_rates_use_the_monotonic_interval(prev: Snapshot, cur: Snapshot) -> None:
    """The same readings one second apart and two seconds apart: the byte rates halve (to within rounding)."""
    later = msgspec.structs.replace(cur, monotonic_ns=prev.monotonic_ns + 1_000_000_000)
    twice = msgspec.structs.replace(cur, monotonic_ns=prev.monotonic_ns + 2_000_000_000)
    one, two = build_line(prev, later), build_line(prev, twice)
    if one.net is not None and two.net is not None:
        assert abs(two.net.received - one.net.received / 2) <= 1
        assert abs(two.net.sent - one.net.sent / 2) <= 1
