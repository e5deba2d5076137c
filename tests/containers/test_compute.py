"""The pure container and pressure arithmetic (docs/behaviour.md §3.8, §3.9), with values worked out by hand."""

from __future__ import annotations

import msgspec
import pytest

from orca.sample.compute.containers import container_entries
from orca.sample.compute.pressure import pressure_share
from orca.sample.compute.snapshot import ContainerNet, ContainerReading
from orca.sample.line_format import ContainerSample, IoRate, NetRate, PressureShare
from orca.sample.parse.cgroup import CpuPeriods, DeviceIo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.pressure import Pressure, PressureLine

from .fixtures import ID_POSTGRES, ID_SCHEDULER, ID_UI

MIB = 1 << 20


def reading(
    container_id: str,
    name: str,
    usage_usec: int | None,
    *,
    current: int = 400 * MIB,
    active_file: int = 30 * MIB,
    inactive_file: int = 50 * MIB,
    events: dict[str, int] | None = None,
) -> ContainerReading:
    return ContainerReading(
        container_id=container_id,
        name=name,
        memory_current=current,
        memory_stat={"anon": 300 * MIB, "active_file": active_file, "inactive_file": inactive_file},
        memory_events=events,
        cpu_usage_usec=usage_usec,
    )


def test_memory_is_docker_stats_and_nocache_drops_all_file_cache() -> None:
    """docs/behaviour.md §3.8: mem = memory.current − inactive_file; mem_nocache also less active_file."""
    [entry] = container_entries(None, (reading(ID_POSTGRES, "postgres", 10),), 5.0)
    assert entry.mem == 350 * MIB  # 400 − 50
    assert entry.mem_nocache == 320 * MIB  # 400 − 30 − 50


def test_memory_never_below_zero_when_cache_outgrows_current() -> None:
    """The files are read one after another, so the stat can be ahead of memory.current: clamp at 0 (docs/behaviour.md
    §3.8)."""
    racy = reading(ID_POSTGRES, "postgres", 10, current=10 * MIB, active_file=8 * MIB, inactive_file=12 * MIB)
    [entry] = container_entries(None, (racy,), 5.0)
    assert (entry.mem, entry.mem_nocache) == (0, 0)


def test_missing_cache_keys_count_zero() -> None:
    bare = ContainerReading(ID_UI, "ui", 4096, {"anon": 4096}, None, None)
    assert container_entries(None, (bare,), 5.0) == (ContainerSample(name="ui", mem=4096, cpu=0.0, mem_nocache=4096),)


def test_cpu_is_percent_of_one_core_over_dt() -> None:
    """docs/behaviour.md §3.8: 100 × Δusage_usec / (dt × 10⁶). 7 500 000 µs over 5 s = 1.5 cores = 150 %."""
    before = (reading(ID_POSTGRES, "postgres", 1_000_000), reading(ID_UI, "ui", 20_000))
    after = (reading(ID_POSTGRES, "postgres", 8_500_000), reading(ID_UI, "ui", 70_000))
    entries = container_entries(before, after, 5.0)
    assert [(entry.name, entry.cpu) for entry in entries] == [("postgres", 150.0), ("ui", 1.0)]


def test_cpu_zero_on_first_line_after_reset_and_without_time() -> None:
    """0.0 for a container with no previous reading, a counter that went backwards, a dt that isn't > 0."""
    before = (reading(ID_POSTGRES, "postgres", 9_000_000),)
    after = (reading(ID_POSTGRES, "postgres", 1_000), reading(ID_UI, "ui", 5_000_000))
    assert [entry.cpu for entry in container_entries(before, after, 5.0)] == [0.0, 0.0]
    grown = (reading(ID_POSTGRES, "postgres", 9_500_000),)
    for dt in (0.0, -1.0, float("nan")):
        assert container_entries(before, grown, dt)[0].cpu == 0.0
    assert container_entries(before, (reading(ID_POSTGRES, "postgres", None),), 5.0)[0].cpu == 0.0


def test_cpu_matches_by_id_not_by_name_or_position() -> None:
    """A container recreated under the same name has a new id: its counter starts again, no delta across them."""
    before = (reading(ID_SCHEDULER, "scheduler", 50_000_000),)
    after = (reading(ID_UI, "scheduler", 60_000_000),)
    assert container_entries(before, after, 5.0)[0].cpu == 0.0


def test_sorted_by_name_and_oom_kill_from_memory_events() -> None:
    """docs/behaviour.md §3.8: sorted by name (not id); oom_kill is memory.events' count so far, None without the
    file/key."""
    cur = (
        reading(ID_UI, "ui", 1, events={"low": 0, "oom": 2, "oom_kill": 2}),
        reading(ID_POSTGRES, "postgres", 1, events={"low": 0}),
        reading(ID_SCHEDULER, "api", 1, events=None),
    )
    entries = container_entries(None, cur, 5.0)
    assert [(entry.name, entry.oom_kill) for entry in entries] == [("api", None), ("postgres", None), ("ui", 2)]


def test_a_container_gone_from_cur_is_gone_from_the_line() -> None:
    before = (reading(ID_POSTGRES, "postgres", 1), reading(ID_UI, "ui", 1))
    assert [entry.name for entry in container_entries(before, (reading(ID_UI, "ui", 1),), 5.0)] == ["ui"]
    assert container_entries(before, (), 5.0) == ()


def extended(
    container_id: str,
    name: str,
    *,
    cpu_periods: CpuPeriods | None = None,
    memory_max: int | None = None,
    pids: int | None = None,
    io: dict[str, DeviceIo] | None = None,
    net: ContainerNet | None = None,
) -> ContainerReading:
    """A reading with the second round's fields set as given (memory and cpu as `reading` gives them)."""
    return msgspec.structs.replace(
        reading(container_id, name, 1_000), cpu_periods=cpu_periods, memory_max=memory_max, pids=pids, io=io, net=net
    )


VDA, DM0, LOOP0 = "254:0", "252:0", "7:0"
WHOLE_DISKS = frozenset({VDA})
"""/sys/block: vda is the only whole disk; dm-0 (a device-mapper volume over vda) and loop0 are virtual."""


def test_throttled_is_the_share_of_periods_throttled() -> None:
    """cpu.max 10000 100000 and a busy process: 50 periods in 5 s, all 50 throttled → 100.0; a container that was
    throttled in 30 of its 50 periods → 60.0; 1 of 3 → 33.3 (one decimal in the line)."""
    before = (
        extended(ID_POSTGRES, "postgres", cpu_periods=CpuPeriods(periods=1000, throttled=900)),
        extended(ID_SCHEDULER, "scheduler", cpu_periods=CpuPeriods(periods=1000, throttled=100)),
        extended(ID_UI, "ui", cpu_periods=CpuPeriods(periods=10, throttled=0)),
    )
    after = (
        extended(ID_POSTGRES, "postgres", cpu_periods=CpuPeriods(periods=1050, throttled=950)),
        extended(ID_SCHEDULER, "scheduler", cpu_periods=CpuPeriods(periods=1050, throttled=130)),
        extended(ID_UI, "ui", cpu_periods=CpuPeriods(periods=13, throttled=1)),
    )
    entries = container_entries(before, after, 5.0)
    assert [(entry.name, entry.throttled) for entry in entries] == [
        ("postgres", 100.0), ("scheduler", 60.0), ("ui", pytest.approx(33.333, abs=1e-3))
    ]


def test_throttled_without_a_limit_first_line_reset_and_no_controller() -> None:
    """No cpu.max limit: nr_periods stays 0, no period elapsed → 0.0; a container's first line → 0.0; counters
    that went backwards (a cgroup made again) → 0.0; no nr_periods at all (no cpu controller) → absent."""
    unlimited = extended(ID_UI, "ui", cpu_periods=CpuPeriods(0, 0))
    assert container_entries((unlimited,), (unlimited,), 5.0)[0].throttled == 0.0
    first = extended(ID_POSTGRES, "postgres", cpu_periods=CpuPeriods(500, 400))
    assert container_entries(None, (first,), 5.0)[0].throttled == 0.0
    # A limit set since the previous reading: 5 periods elapsed, all of them throttled.
    limited = extended(ID_UI, "ui", cpu_periods=CpuPeriods(5, 5))
    assert container_entries((unlimited,), (limited,), 5.0)[0].throttled == 100.0
    reset = extended(ID_POSTGRES, "postgres", cpu_periods=CpuPeriods(20, 20))
    assert container_entries((first,), (reset,), 5.0)[0].throttled == 0.0
    bare = extended(ID_UI, "ui")
    assert container_entries((unlimited,), (bare,), 5.0)[0].throttled is None


def test_mem_max_and_pids_are_the_readings() -> None:
    """memory.max in bytes (None for `max`: no limit, absent from the line); pids.current as read."""
    cur = (extended(ID_POSTGRES, "postgres", memory_max=512 * MIB, pids=17), extended(ID_UI, "ui", pids=0))
    entries = container_entries(None, cur, 5.0)
    assert [(entry.mem_max, entry.pids) for entry in entries] == [(512 * MIB, 17), (None, 0)]


def test_io_counts_the_whole_disk_once_and_not_the_dm_over_it() -> None:
    """Over 4 s: vda read 8 MiB and wrote 2 MiB; the same bytes went through dm-0 on top of it, and loop0 read
    1 MiB (its file lives on vda too). Only vda counts: 8 MiB / 4 s = 2 MiB/s read, 2 MiB / 4 s = 512 KiB/s written.
    A device seen for the first time (8:16) counts 0."""
    before = extended(ID_POSTGRES, "postgres", io={
        VDA: DeviceIo(100 * MIB, 50 * MIB), DM0: DeviceIo(90 * MIB, 50 * MIB), LOOP0: DeviceIo(0, 0),
    })
    after = extended(ID_POSTGRES, "postgres", io={
        VDA: DeviceIo(108 * MIB, 52 * MIB), DM0: DeviceIo(98 * MIB, 52 * MIB), LOOP0: DeviceIo(MIB, 0),
        "8:16": DeviceIo(7 * MIB, 7 * MIB),
    })
    disks = WHOLE_DISKS | {"8:16"}
    [entry] = container_entries((before,), (after,), 4.0, disks)
    assert entry.io == IoRate(read=2 * MIB, write=512 * 1024)


def test_io_zero_on_first_line_absent_without_source_or_disks() -> None:
    """0 on a container's first line and for an empty io.stat (no I/O yet); absent without io.stat, and absent
    when the whole disks are unknown (no /sys/block): counting every device could count bytes twice."""
    now = extended(ID_POSTGRES, "postgres", io={VDA: DeviceIo(5 * MIB, 5 * MIB)})
    assert container_entries(None, (now,), 4.0, WHOLE_DISKS)[0].io == IoRate(0, 0)
    idle = extended(ID_UI, "ui", io={})
    assert container_entries((idle,), (idle,), 4.0, WHOLE_DISKS)[0].io == IoRate(0, 0)
    assert container_entries((now,), (extended(ID_POSTGRES, "postgres"),), 4.0, WHOLE_DISKS)[0].io is None
    assert container_entries((now,), (now,), 4.0, None)[0].io is None


def net(namespace: str, eth0: tuple[int, int]) -> ContainerNet:
    return ContainerNet(namespace=namespace, dev=NetDev({"eth0": eth0}))


def test_net_is_the_namespace_rate_and_restarts_with_a_new_namespace() -> None:
    """eth0 received 3 000 000 and sent 1 000 000 bytes in 2 s: 1 500 000 and 500 000 per second. A container that
    restarted has a new namespace whose counters start again: 0, not a delta across the two."""
    before = extended(ID_POSTGRES, "postgres", net=net("net:[4026532500]", (10_000_000, 4_000_000)))
    after = extended(ID_POSTGRES, "postgres", net=net("net:[4026532500]", (13_000_000, 5_000_000)))
    assert container_entries((before,), (after,), 2.0)[0].net == NetRate(received=1_500_000, sent=500_000)
    restarted = extended(ID_POSTGRES, "postgres", net=net("net:[4026532999]", (20_000_000, 9_000_000)))
    assert container_entries((before,), (restarted,), 2.0)[0].net == NetRate(0, 0)
    assert container_entries(None, (after,), 2.0)[0].net == NetRate(0, 0)
    assert container_entries((before,), (extended(ID_POSTGRES, "postgres"),), 2.0)[0].net is None


def pressure(some_total_us: int, full: bool = True) -> Pressure:
    line = PressureLine(avg10=0.5, avg60=0.25, avg300=0.1, total_us=some_total_us)
    return Pressure(some=line, full=line if full else None)


def test_pressure_is_percent_of_dt_stalled() -> None:
    """docs/behaviour.md §3.9: 100 × Δsome.total / (dt × 10⁶): 250 ms of 5 s = 5 %, 1 s = 20 %, 0 = 0 %."""
    before = {"cpu": pressure(1_000_000, full=False), "memory": pressure(40), "io": pressure(7_000_000)}
    after = {"cpu": pressure(1_250_000, full=False), "memory": pressure(40), "io": pressure(8_000_000)}
    assert pressure_share(before, after, 5.0) == PressureShare(cpu=5.0, memory=0.0, io=20.0)


def test_pressure_clamped_to_0_100() -> None:
    """More stall than wall time (a late read, clock skew) is 100; a counter that went backwards is 0."""
    before = {"cpu": pressure(0), "memory": pressure(9_000_000), "io": pressure(0)}
    after = {"cpu": pressure(7_000_000), "memory": pressure(1_000), "io": pressure(0)}
    assert pressure_share(before, after, 5.0) == PressureShare(cpu=100.0, memory=0.0, io=0.0)


@pytest.mark.parametrize("dt", [0.0, -2.0, float("nan")])
def test_pressure_without_time_is_zero(dt: float) -> None:
    assert pressure_share({"io": pressure(0)}, {"io": pressure(10)}, dt) == PressureShare(io=0.0)


def test_pressure_missing_resource_left_out_and_no_psi_is_none() -> None:
    """A file missing now is None (left out of the line); one the previous reading lacked is 0.0 (no delta yet, so
    never an empty `pressure` object); cur None (no PSI) means no `pressure` key."""
    before = {"cpu": pressure(0), "io": pressure(0)}
    after = {"cpu": pressure(500_000), "memory": pressure(500_000)}
    assert pressure_share(before, after, 1.0) == PressureShare(cpu=50.0, memory=0.0, io=None)
    assert pressure_share(None, after, 1.0) == PressureShare(cpu=0.0, memory=0.0, io=None)
    assert pressure_share(before, None, 1.0) is None
