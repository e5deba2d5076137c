"""Property tests of `container_entries` (docs/behaviour.md §3.8): memory never negative, cpu never negative.

Ranges from Documentation/admin-guide/cgroup-v2.rst: memory.current and memory.stat amounts are byte counts (u64 in
the kernel; drawn up to 2**50, a petabyte, with the stat racing past memory.current, since the files are read one
after another); cpu.stat usage_usec is a u64 microsecond counter. dt is the monotonic seconds between two readings.
"""

from __future__ import annotations

import math

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.compute.containers import container_entries
from orca.sample.compute.snapshot import ContainerReading

BYTES = st.integers(min_value=0, max_value=2**50)
USEC = st.integers(min_value=0, max_value=2**64 - 1)
IDS = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
NAMES = st.sampled_from(["postgres", "scheduler", "ui", "0123456789ab", ""])
DTS = st.one_of(st.floats(min_value=0.0, max_value=1e6), st.sampled_from([0.0, -1.0, math.nan, math.inf, 5e-324]))

readings = st.builds(
    ContainerReading,
    container_id=IDS,
    name=NAMES,
    memory_current=BYTES,
    memory_stat=st.fixed_dictionaries({}, optional={"active_file": BYTES, "inactive_file": BYTES, "anon": BYTES}),
    memory_events=st.none() | st.fixed_dictionaries({}, optional={"oom": USEC, "oom_kill": USEC}),
    cpu_usage_usec=st.none() | USEC,
)
reading_sets = st.lists(readings, max_size=6, unique_by=lambda r: r.container_id).map(tuple)


@given(reading_sets, reading_sets, DTS)
def test_memory_and_cpu_never_negative(prev: tuple[ContainerReading, ...], cur: tuple[ContainerReading, ...],
                                       dt: float) -> None:
    for entry in container_entries(prev, cur, dt):
        assert 0 <= entry.mem_nocache <= entry.mem
        assert entry.cpu >= 0.0 and math.isfinite(entry.cpu)


@given(reading_sets, DTS)
@example((ContainerReading("a" * 64, "pg", 10, {"inactive_file": 11, "active_file": 3}, None, 5),), 1.0)
def test_memory_within_current_and_cpu_zero_against_itself(cur: tuple[ContainerReading, ...], dt: float) -> None:
    """A reading against itself has no CPU to show; memory is never above memory.current, the clamp never lifts it."""
    entries = container_entries(cur, cur, dt)
    by_name = sorted(cur, key=lambda r: (r.name, r.container_id))
    for reading, entry in zip(by_name, entries, strict=True):
        assert entry.name == reading.name
        assert entry.mem <= reading.memory_current
        assert entry.cpu == 0.0


@given(reading_sets, reading_sets, DTS)
def test_one_entry_per_current_reading_sorted_by_name(prev: tuple[ContainerReading, ...],
                                                      cur: tuple[ContainerReading, ...], dt: float) -> None:
    names = [entry.name for entry in container_entries(prev, cur, dt)]
    assert names == sorted(reading.name for reading in cur)


@given(IDS, USEC, USEC, st.floats(min_value=1e-3, max_value=1e6))
def test_cpu_times_dt_gives_back_the_delta(container_id: str, before: int, after: int, dt: float) -> None:
    """cpu × dt × 10⁴ is the usage delta in µs (100 % = one core = 10⁶ µs per s), or 0 when it went backwards."""
    def one(usage: int) -> tuple[ContainerReading, ...]:
        return (ContainerReading(container_id, "c", 0, {}, None, usage),)

    [entry] = container_entries(one(before), one(after), dt)
    assert math.isclose(entry.cpu * dt * 1e4, max(0, after - before), rel_tol=1e-9)
