"""The slots of time the chart's points and the fleet's buckets are kept in (`gather/slots.py`): within their bound
however long the times run, and the slots of some times merged with the slots of the times after them are the slots
of all of them, however they were cut."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.readback.gather.slots import Slots


class _Times:
    """What a slot holds here: its times in the order they came (a join that keeps every one, so that a test sees
    which times went into which slot, in which order)."""

    __slots__ = ("times",)

    def __init__(self, times: list[int]) -> None:
        self.times = times

    def take(self, later: _Times) -> None:
        self.times = self.times + later.times


def _slotted(times: list[int], most: int, batch: int) -> Slots[_Times]:
    slots: Slots[_Times] = Slots(most)
    for begin in range(0, len(times), batch):
        some = times[begin:begin + batch]
        slots.fit(min(some), max(some))
        for t in some:
            slots.put(t >> slots.shift, _Times([t]))
    return slots


def _held(slots: Slots[_Times]) -> list[tuple[int, list[int]]]:
    return [(slot, value.times) for slot, value in slots.in_order()]


moments = st.lists(st.integers(0, 2**40), min_size=1, max_size=60)


@given(moments.map(sorted), st.integers(1, 9), st.integers(1, 7), st.integers(0, 60))
def test_a_merge_of_two_cuts_is_the_slots_of_the_whole(times: list[int], most: int, batch: int, cut: int) -> None:
    whole = _slotted(times, most, batch)
    if 0 < cut < len(times):
        merged = _slotted(times[:cut], most, batch)
        later = _slotted(times[cut:], most, batch)
        merged.align(later)
        for slot, value in later.in_order():
            merged.put(slot, value)
    else:
        merged = _slotted(times, most, len(times))
    assert (merged.shift, _held(merged)) == (whole.shift, _held(whole))


@given(moments, st.integers(1, 9))
def test_the_slots_stay_within_their_bound_and_each_time_in_its_own(times: list[int], most: int) -> None:
    slots = _slotted(times, most, 1)
    assert slots.high - slots.low < max(2, most)
    assert (slots.low, slots.high) == (min(slots.held), max(slots.held))
    for slot, value in slots.in_order():
        assert all(t >> slots.shift == slot for t in value.times)
    assert sorted(t for _, value in slots.in_order() for t in value.times) == sorted(times)


def test_two_neighbours_joined_when_the_slots_would_span_too_many() -> None:
    slots = _slotted([0, 1, 2], 2, 1)
    assert slots.shift == 1  # 0, 1, 2 span three slots of 1 ms: twice as long, 0 and 1 in one
    assert _held(slots) == [(0, [0, 1]), (1, [2])]
