"""The pure container and pressure arithmetic (SPEC 3.8, issue 4), with values worked out by hand."""

from __future__ import annotations

import pytest

from orca.sample.compute.containers import container_entries
from orca.sample.compute.line import ContainerEntry, PressureShare
from orca.sample.compute.pressure import pressure_share
from orca.sample.compute.snapshot import ContainerReading
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
    """SPEC 3.8: mem = memory.current − inactive_file; issue 4: mem_nocache also less active_file."""
    [entry] = container_entries(None, (reading(ID_POSTGRES, "postgres", 10),), 5.0)
    assert entry.mem == 350 * MIB  # 400 − 50
    assert entry.mem_nocache == 320 * MIB  # 400 − 30 − 50


def test_memory_never_below_zero_when_cache_outgrows_current() -> None:
    """The files are read one after another, so the stat can be ahead of memory.current: clamp at 0 (SPEC 3.8)."""
    racy = reading(ID_POSTGRES, "postgres", 10, current=10 * MIB, active_file=8 * MIB, inactive_file=12 * MIB)
    [entry] = container_entries(None, (racy,), 5.0)
    assert (entry.mem, entry.mem_nocache) == (0, 0)


def test_missing_cache_keys_count_zero() -> None:
    bare = ContainerReading(ID_UI, "ui", 4096, {"anon": 4096}, None, None)
    assert container_entries(None, (bare,), 5.0) == (ContainerEntry("ui", 4096, 0.0, 4096, None),)


def test_cpu_is_percent_of_one_core_over_dt() -> None:
    """issue 4: 100 × Δusage_usec / (dt × 10⁶). 7 500 000 µs over 5 s = 1.5 cores = 150 %."""
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
    """SPEC 3.8: sorted by name (not id); oom_kill is memory.events' count so far, None without the file/key."""
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


def pressure(some_total_us: int, full: bool = True) -> Pressure:
    line = PressureLine(avg10=0.5, avg60=0.25, avg300=0.1, total_us=some_total_us)
    return Pressure(some=line, full=line if full else None)


def test_pressure_is_percent_of_dt_stalled() -> None:
    """issue 4: 100 × Δsome.total / (dt × 10⁶): 250 ms of 5 s = 5 %, 1 s = 20 %, 0 = 0 %."""
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
    assert pressure_share({"io": pressure(0)}, {"io": pressure(10)}, dt) == PressureShare(None, None, 0.0)


def test_pressure_missing_resource_left_out_and_no_psi_is_none() -> None:
    """A file missing now is None (left out of the line); one the previous reading lacked is 0.0 (no delta yet, so
    never an empty `pressure` object); cur None (no PSI) means no `pressure` key."""
    before = {"cpu": pressure(0), "io": pressure(0)}
    after = {"cpu": pressure(500_000), "memory": pressure(500_000)}
    assert pressure_share(before, after, 1.0) == PressureShare(cpu=50.0, memory=0.0, io=None)
    assert pressure_share(None, after, 1.0) == PressureShare(cpu=0.0, memory=0.0, io=None)
    assert pressure_share(before, None, 1.0) is None
