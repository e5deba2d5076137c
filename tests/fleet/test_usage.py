"""A run's usage (what of its capacity it used) folded from its lines: by hand for the choice of capacity, and by
hypothesis for what must hold of any lines: the figures of lines folded in two and merged are those of one fold, and
the buckets stay few however long the run, each CPU-second in them once."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orca.sample.line_format import CgroupSample, CpuShare, Mem, Sample
from orca.sample.readback.fleet.usage import MAX_BUCKETS, Usage, UsageSection
from tests.lines import samples

GIB = 2**30


def line(t: float, dt: float = 5.0, busy: float = 50.0, used: int = GIB, group: CgroupSample | None = None) -> Sample:
    return Sample(v=1, t=t, dt=dt, host="h", cores=4, cpu=CpuShare(busy, 0.0, 0.0, 0.0, busy),
                  mem=Mem(8 * GIB, used, 8 * GIB - used, 0, 0, 0, 0), cgroup=group)


def folded(batches: list[list[Sample]], buckets: bool = False) -> Usage:
    fold = UsageSection(buckets)
    for batch in batches:
        fold.add(batch)
    return fold.usage()


def test_of_the_host_without_a_cgroup_limit_and_of_the_limit_with_one() -> None:
    # Host: 50 % of 4 cores over 5 s twice: 2 CPUs used of 4, 20 CPU-seconds of 40; 1 GiB of 8: 12.5 %.
    host = folded([[line(100.0), line(105.0)]])
    assert (host.core_seconds_used, host.core_seconds_available, host.cpus) == (20.0, 40.0, 4.0)
    assert (host.cpu_percent, host.memory_peak_percent, host.cpu_limited) == (50.0, 12.5, False)
    # Under a limit of 0.5 CPU and 1 GiB: 80 % of the quota is 0.4 CPU; 768 MiB of 1 GiB is 75 %.
    group = CgroupSample(mem=768 * 2**20, mem_max=GIB, cpu=80.0, cpu_max=0.5)
    limited = folded([[line(100.0, group=group), line(105.0, group=group)]])
    assert (limited.core_seconds_used, limited.core_seconds_available) == pytest.approx((4.0, 5.0))
    assert (limited.cpu_percent, limited.memory_peak_percent) == pytest.approx((80.0, 75.0))
    assert limited.cpu_limited and limited.memory_limited and limited.cpus == 0.5
    # A cgroup section without a CPU limit (a memory limit alone): the CPU is the host's.
    memory_only = folded([[line(100.0, group=CgroupSample(mem=GIB, mem_max=2 * GIB))]])
    assert (memory_only.cpu_limited, memory_only.memory_limited, memory_only.memory_peak_percent) == (
        False, True, 50.0)


def test_time_at_saturation_and_above_idle() -> None:
    # 95 % for 5 s, 50 % for 10 s, 5 % for 5 s: at 90 % or more a quarter of the time, over 10 % three quarters.
    usage = folded([[line(100.0, busy=95.0), line(110.0, dt=10.0), line(115.0, busy=5.0)]])
    assert (usage.cpu_saturated_percent, usage.cpu_above_idle_percent) == (25.0, 75.0)
    assert usage.cpu_p95 == 95.0


def test_lines_without_cpu_or_memory_give_none() -> None:
    bare = Sample(v=1, t=1.0, dt=1.0, host="h")
    usage = folded([[bare]])
    assert (usage.cpu_percent, usage.memory_percent, usage.cpu_p95, usage.memory_peak_percent, usage.cpus) == (
        None, None, None, None, None)


def test_a_day_of_lines_stays_in_few_buckets_each_line_spread_over_its_time() -> None:
    lines = [line(1796000000.0 + 5 * index, busy=float(index % 100)) for index in range(17_280)]
    usage = folded([lines[start:start + 1024] for start in range(0, len(lines), 1024)], buckets=True)
    assert usage.buckets is not None
    cores_used, cores_available, _, _ = usage.buckets.per_slot
    assert MAX_BUCKETS <= len(cores_used) < 2 * MAX_BUCKETS
    assert sum(cores_used) == pytest.approx(usage.core_seconds_used)
    assert sum(cores_available) == pytest.approx(4 * 5 * 17_280)
    # 2^18 ms slots (262 s) over a day: each holds 4 CPUs for its whole length but the first and last.
    assert usage.buckets.slot_seconds == 262.144
    middle = list(cores_available[1:-1])
    assert middle == pytest.approx([4 * 262.144] * len(middle))


@settings(max_examples=60, deadline=None)
@given(st.lists(samples, min_size=2, max_size=40), st.integers(1, 39), st.integers(1, 8))
def test_folded_in_two_and_merged_is_folded_whole(lines: list[Sample], cut: int, batch: int) -> None:
    """A file read in parts: each part's batches are the whole file's (`shell/parts.py`), so the figures are those of
    one fold to the last bit; the buckets, sums of floats taken in another order, to rounding."""
    batches = [lines[start:start + batch] for start in range(0, len(lines), batch)]
    cut = min(cut, len(batches) - 1) or 1
    whole = folded(batches, buckets=True)
    earlier, later = UsageSection(True), UsageSection(True)
    for part, fold in ((batches[:cut], earlier), (batches[cut:], later)):
        for each in part:
            fold.add(each)
    earlier.merge(later)
    merged = earlier.usage()
    figures = ("core_seconds_used", "core_seconds_available", "cpu_p95", "cpu_saturated_percent",
               "cpu_above_idle_percent", "byte_seconds_used", "byte_seconds_available", "memory_peak_percent",
               "cpu_limited", "memory_limited")
    assert [getattr(merged, name) for name in figures] == [getattr(whole, name) for name in figures]
    if whole.buckets is None:
        assert merged.buckets is None or not any(merged.buckets.per_slot[1])
        return
    assert merged.buckets is not None
    assert len(merged.buckets.per_slot[0]) < 2 * MAX_BUCKETS
    for mine, theirs in zip(merged.buckets.per_slot, whole.buckets.per_slot, strict=True):
        assert math.fsum(mine) == pytest.approx(math.fsum(theirs), rel=1e-9, abs=1e-6)
    assert math.fsum(whole.buckets.per_slot[1]) == pytest.approx(whole.core_seconds_available or 0.0, rel=1e-9,
                                                                      abs=1e-6)


def test_a_line_reaching_back_before_the_epoch_stays_within_the_buckets_bound() -> None:
    """A line at `t` 0 covering 0.511 s spans 512 slots of 1 ms: the slots are made longer, not left at 512."""
    usage = folded([[Sample(v=1, t=0.0, dt=0.511, host="h", mem=Mem(1, 0, 0, 0, 0, 0, 0))]], buckets=True)
    assert usage.buckets is not None
    assert len(usage.buckets.per_slot[3]) < 2 * MAX_BUCKETS


def test_a_later_part_whose_only_cpu_line_covers_no_time_still_says_whose_cpus() -> None:
    """The newest line with a CPU share says whether the CPUs are a cgroup's limit, whatever its `dt`: merged as
    folded whole."""
    bare = Sample(v=1, t=1.0, dt=0.0, host="h")
    limited = Sample(v=1, t=1.0, dt=0.0, host="h", cgroup=CgroupSample(cpu=0.0, cpu_max=0.001))
    earlier, later = UsageSection(), UsageSection()
    earlier.add([bare])
    later.add([limited])
    earlier.merge(later)
    assert earlier.usage().cpu_limited is folded([[bare], [limited]]).cpu_limited is True


def test_a_line_after_one_that_makes_the_slots_longer_is_counted_in_the_longer_slots() -> None:
    """A batch after the slots hold some: a line 8 s on makes them longer, then a line at 0.5 s lands in a slot that
    held a value before. It is counted in the slots as they now are, not in a value the longer slots took in."""
    early = [line(0.001 * index, dt=0.001) for index in range(1, 200)]
    usage = folded([early, [line(8.0, dt=0.001), line(0.5, dt=0.001)]], buckets=True)
    assert usage.buckets is not None
    # 4 CPUs for 1 ms, 201 times.
    assert math.fsum(usage.buckets.per_slot[1]) == pytest.approx(4 * 0.001 * 201)
