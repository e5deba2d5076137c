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
from orca.sample.compute.snapshot import ContainerNet, ContainerReading
from orca.sample.parse.cgroup import CpuPeriods, DeviceIo
from orca.sample.parse.net_dev import NetDev
from tests.examples import costly

BYTES = st.integers(min_value=0, max_value=2**50)
USEC = st.integers(min_value=0, max_value=2**64 - 1)
IDS = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
NAMES = st.sampled_from(["postgres", "scheduler", "ui", "0123456789ab", ""])
DTS = st.one_of(st.floats(min_value=0.0, max_value=1e6), st.sampled_from([0.0, -1.0, math.nan, math.inf, 5e-324]))

COUNTS = st.integers(min_value=0, max_value=2**64 - 1)
# A few device numbers and namespaces, so that two readings often share some and deltas are taken.
DEVICES = st.sampled_from(["254:0", "252:0", "8:0", "7:0"])
DISKS = st.none() | st.frozensets(DEVICES)
namespaces = st.sampled_from(["net:[4026532500]", "net:[4026532600]"])

readings = st.builds(
    ContainerReading,
    container_id=IDS,
    name=NAMES,
    memory_current=BYTES,
    memory_stat=st.fixed_dictionaries({}, optional={"active_file": BYTES, "inactive_file": BYTES, "anon": BYTES}),
    memory_events=st.none() | st.fixed_dictionaries({}, optional={"oom": USEC, "oom_kill": USEC}),
    cpu_usage_usec=st.none() | USEC,
    cpu_periods=st.none() | st.builds(CpuPeriods, COUNTS, COUNTS),
    memory_max=st.none() | BYTES,
    pids=st.none() | st.integers(0, 4_194_304),
    io=st.none() | st.dictionaries(DEVICES, st.builds(DeviceIo, COUNTS, COUNTS)),
    net=st.none() | st.builds(ContainerNet, namespaces,
                              st.builds(NetDev, st.dictionaries(st.sampled_from(["eth0", "eth1"]),
                                                                st.tuples(COUNTS, COUNTS)))),
)
reading_sets = st.lists(readings, max_size=6, unique_by=lambda r: r.container_id).map(tuple)


@given(reading_sets, reading_sets, DTS, DISKS)
def test_memory_cpu_throttled_io_net_never_negative(prev: tuple[ContainerReading, ...],
                                                    cur: tuple[ContainerReading, ...], dt: float,
                                                    disks: frozenset[str] | None) -> None:
    by_name = sorted(cur, key=lambda r: (r.name, r.container_id))
    for reading, entry in zip(by_name, container_entries(prev, cur, dt, disks), strict=True):
        assert entry.mem_nocache is not None and entry.cpu is not None, "always there in the sampler's lines"
        assert 0 <= entry.mem_nocache <= entry.mem
        assert entry.cpu >= 0.0 and math.isfinite(entry.cpu)
        # Each new field is there exactly when its source is; never made up.
        assert (entry.throttled is None) == (reading.cpu_periods is None)
        assert entry.throttled is None or 0.0 <= entry.throttled <= 100.0
        assert (entry.mem_max, entry.pids) == (reading.memory_max, reading.pids)
        assert (entry.io is None) == (reading.io is None or disks is None)
        assert entry.io is None or min(entry.io.read, entry.io.write) >= 0
        assert (entry.net is None) == (reading.net is None)
        assert entry.net is None or min(entry.net.received, entry.net.sent) >= 0


@given(reading_sets, DTS, DISKS)
@example((ContainerReading("a" * 64, "pg", 10, {"inactive_file": 11, "active_file": 3}, None, 5),), 1.0, None)
def test_memory_within_current_and_deltas_zero_against_itself(cur: tuple[ContainerReading, ...], dt: float,
                                                              disks: frozenset[str] | None) -> None:
    """diff(a, a) is zero; memory is never above memory.current, the clamp never lifts it."""
    entries = container_entries(cur, cur, dt, disks)
    by_name = sorted(cur, key=lambda r: (r.name, r.container_id))
    for reading, entry in zip(by_name, entries, strict=True):
        assert entry.name == reading.name
        assert entry.mem <= reading.memory_current
        assert entry.cpu == 0.0
        assert entry.throttled in (None, 0.0)
        assert entry.io is None or (entry.io.read, entry.io.write) == (0, 0)
        assert entry.net is None or (entry.net.received, entry.net.sent) == (0, 0)


@given(IDS, COUNTS, COUNTS, st.integers(1, 10**9), st.integers(0, 10**9))
def test_throttled_gives_back_the_share_of_periods(container_id: str, periods: int, throttled: int,
                                                   new_periods: int, new_throttled: int) -> None:
    """throttled × Δnr_periods / 100 is Δnr_throttled (clamped: never more throttled periods than periods)."""
    def one(counters: CpuPeriods) -> tuple[ContainerReading, ...]:
        return (ContainerReading(container_id, "c", 0, {}, None, None, cpu_periods=counters),)

    before = CpuPeriods(periods, throttled)
    after = CpuPeriods(periods + new_periods, throttled + new_throttled)
    [entry] = container_entries(one(before), one(after), 5.0)
    assert entry.throttled is not None
    assert math.isclose(entry.throttled * new_periods / 100, min(new_throttled, new_periods), rel_tol=1e-9)


@given(reading_sets, reading_sets, DTS)
@costly(0.5)
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
    assert entry.cpu is not None
    assert math.isclose(entry.cpu * dt * 1e4, max(0, after - before), rel_tol=1e-9)
