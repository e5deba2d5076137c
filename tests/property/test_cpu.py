"""Properties of the `cpu` section (docs/behaviour.md §3.3): shares of all cores' time between two /proc/stat
readings."""

from __future__ import annotations

import msgspec
from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.compute.cpu import cpu_share, cpu_share_between
from orca.sample.line_format import CpuShare
from orca.sample.parse.proc_stat import CpuTimes, ProcStat
from tests.property.strategies_core import U64_MAX, counters, cpu_times, proc_stats

COUNTER_NAMES = list(CpuTimes._fields)
# Four shares, each correctly rounded, may add up to a few ulps over 100.
ROUNDING = 1e-9

# Counters of one realistic interval: small increases, so that shares are not all swamped by one huge delta.
small_counters = st.integers(min_value=0, max_value=10_000)
@st.composite
def later_proc_stats(draw: st.DrawFn, prev: ProcStat) -> ProcStat:
    """`prev` a realistic interval later: every counter increased by a small amount, the same cores."""

    def later(times: CpuTimes) -> CpuTimes:
        return CpuTimes(*[getattr(times, name) + draw(small_counters) for name in COUNTER_NAMES])

    return ProcStat(total=later(prev.total), cores=tuple((n, later(times)) for n, times in prev.cores))


def shares(share: CpuShare) -> list[float]:
    return [share.user, share.system, share.iowait, share.steal, share.busiest]


def assert_well_formed(share: CpuShare) -> None:
    """docs/behaviour.md §3.3: every share within 0-100, and the four kinds of time together at most all of it."""
    assert all(0.0 <= value <= 100.0 for value in shares(share)), share
    assert share.user + share.system + share.iowait + share.steal <= 100.0 + ROUNDING, share


@given(proc_stats(), proc_stats())
@example(  # every counter went backwards: deltas of 0, a zero total
    ProcStat(CpuTimes(*[5] * 8), ((0, CpuTimes(*[5] * 8)),)), ProcStat(CpuTimes(*[1] * 8), ((0, CpuTimes(*[1] * 8)),))
)
@example(  # one counter jumped by the whole range: no overflow, no share above 100
    ProcStat(CpuTimes(*[0] * 8), ()), ProcStat(CpuTimes(U64_MAX, 0, U64_MAX, 0, 0, 0, 0, 0), ())
)
def test_shares_within_0_and_100_whatever_the_two_readings(prev: ProcStat, cur: ProcStat) -> None:
    assert_well_formed(cpu_share_between(prev, cur))


@given(st.data(), proc_stats(st.builds(CpuTimes, *[st.integers(0, 2**40)] * 8)))
def test_shares_within_0_and_100_over_a_real_interval(data: st.DataObject, prev: ProcStat) -> None:
    assert_well_formed(cpu_share_between(prev, data.draw(later_proc_stats(prev))))


@given(proc_stats())
def test_a_reading_against_itself_is_all_zero(reading: ProcStat) -> None:
    """A zero total gives 0.0 everywhere (docs/behaviour.md §3.3)."""
    assert cpu_share_between(reading, reading) == CpuShare(0.0, 0.0, 0.0, 0.0, 0.0)


@given(st.lists(st.lists(counters, min_size=4, max_size=10), min_size=1, max_size=5))
def test_documented_cpu_share_of_a_reading_against_itself_is_all_zero(reading: list[list[int]]) -> None:
    assert cpu_share(reading, reading) == CpuShare(0.0, 0.0, 0.0, 0.0, 0.0)


@given(st.data(), proc_stats(), st.sampled_from(COUNTER_NAMES))
def test_a_counter_that_went_backwards_counts_zero(data: st.DataObject, prev: ProcStat, name: str) -> None:
    """docs/behaviour.md §3.3: a counter below its previous value is the same as one that stood still."""
    cur = data.draw(later_proc_stats(prev))
    previous_value = getattr(prev.total, name)
    went_back = data.draw(st.integers(min_value=0, max_value=previous_value))
    stood_still = msgspec.structs.replace(cur, total=cur.total._replace(**{name: previous_value}))
    backwards = msgspec.structs.replace(cur, total=cur.total._replace(**{name: went_back}))
    assert cpu_share_between(prev, backwards) == cpu_share_between(prev, stood_still)


@given(st.data(), proc_stats(), cpu_times)
def test_a_core_in_only_one_reading_is_left_out_of_busiest(
    data: st.DataObject, prev: ProcStat, hotplugged: CpuTimes
) -> None:
    """docs/behaviour.md §3.3: a core that came online (or went offline) in between does not count towards `busiest`."""
    cur = data.draw(later_proc_stats(prev))
    new_number = 1 + max((n for n, _ in prev.cores), default=0)
    came_online = msgspec.structs.replace(cur, cores=(*cur.cores, (new_number, hotplugged)))
    went_offline = msgspec.structs.replace(prev, cores=(*prev.cores, (new_number, hotplugged)))
    assert cpu_share_between(prev, came_online) == cpu_share_between(prev, cur)
    assert cpu_share_between(went_offline, cur) == cpu_share_between(prev, cur)


@given(st.data(), proc_stats())
def test_a_core_busy_the_whole_interval_makes_busiest_100(data: st.DataObject, prev: ProcStat) -> None:
    """A core whose delta is all user time is 100% busy, so `busiest` is 100.0 (when the total moved at all)."""
    cur = data.draw(later_proc_stats(prev))
    if not prev.cores:
        return
    number, times = prev.cores[0]
    ticks = data.draw(st.integers(min_value=1, max_value=10_000))
    all_user = times._replace(user=times.user + ticks)
    cur = msgspec.structs.replace(cur, cores=((number, all_user), *cur.cores[1:]))
    result = cpu_share_between(prev, cur)
    assert result.busiest == 100.0 or result == CpuShare(0.0, 0.0, 0.0, 0.0, 0.0)


@given(proc_stats(), proc_stats())
def test_documented_cpu_share_matches_the_typed_one_with_cores_by_position(prev: ProcStat, cur: ProcStat) -> None:
    """The documented API's list readings (aggregate first, then cores in file order) give the same shares
    (docs/behaviour.md §6)."""

    def as_lists(reading: ProcStat) -> list[list[int]]:
        rows = [reading.total, *(times for _, times in reading.cores)]
        return [[getattr(times, name) for name in COUNTER_NAMES] for times in rows]

    def by_position(reading: ProcStat) -> ProcStat:
        return ProcStat(reading.total, tuple(enumerate(times for _, times in reading.cores)))

    assert cpu_share(as_lists(prev), as_lists(cur)) == cpu_share_between(by_position(prev), by_position(cur))


@given(
    st.lists(st.lists(st.integers(min_value=0, max_value=U64_MAX), max_size=12), max_size=4),
    st.lists(st.lists(st.integers(min_value=0, max_value=U64_MAX), max_size=12), max_size=4),
)
def test_documented_cpu_share_takes_any_shape_of_reading(prev: list[list[int]], cur: list[list[int]]) -> None:
    """Short rows (old kernels print 4 counters), long rows (guest, guest_nice) and empty readings never raise."""
    assert_well_formed(cpu_share(prev, cur))
