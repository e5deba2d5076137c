"""Time cut into slots, in memory that does not grow with the run: what a run's chart is drawn from (`points.py`) and
what the fleet chart draws of a run (`fleet/usage.py`'s buckets) both keep one value per slot this way.

Slot `s` is the milliseconds from `s << shift` to `(s + 1) << shift` since the Unix epoch. Whenever the values held
would span more than `most` slots, the slots are made twice as long, each two neighbours' values joined (`take`), the
earlier taking in the later. The slots count from the epoch, so they are the same in every fold and only their length
grows: the slots of some lines merged with the slots of the lines after them (`align`, then `put`) are the slots of
all of them, however the lines were batched or cut.
"""

from __future__ import annotations

from typing import Generic, Protocol, Self, TypeVar


class Joining(Protocol):
    def take(self, later: Self) -> None:
        """`later`, of times after these, taken in."""
        ...


V = TypeVar("V", bound=Joining)


class Slots(Generic[V]):
    """One value per slot of time, at most `most` slots from the first held to the last: see the module's
    docstring."""

    __slots__ = ("held", "high", "low", "most", "shift")

    def __init__(self, most: int) -> None:
        self.most = max(2, most)
        """The most slots the values span, from the first to the last (two at least, so that halving ends)."""
        self.shift = 0
        """A slot is 2^shift milliseconds."""
        self.held: dict[int, V] = {}
        self.low = self.high = 0
        """The first and the last slot that holds a value."""

    def fit(self, low_ms: int, high_ms: int) -> None:
        """Slots as long as the values held and the times from `low_ms` to `high_ms` need to be within `most`."""
        low, high = low_ms >> self.shift, high_ms >> self.shift
        if self.held:
            low, high = min(low, self.low), max(high, self.high)
        while high - low >= self.most:
            self.halve()
            low, high = low >> 1, high >> 1

    def put(self, slot: int, later: V) -> V:
        """`later` (of times after those the slot holds) into slot `slot` (made room for by `fit`); the slot's value."""
        held = self.held.get(slot)
        if held is not None:
            held.take(later)
            return held
        if self.held:
            self.low, self.high = min(self.low, slot), max(self.high, slot)
        else:
            self.low = self.high = slot
        self.held[slot] = later
        return later

    def halve(self) -> None:
        """Slots twice as long: each two neighbours' values joined into one, the earlier taking in the later."""
        self.shift += 1
        self.low >>= 1
        self.high >>= 1
        held, self.held = self.held, {}
        for slot in sorted(held):
            kept = self.held.get(slot >> 1)
            if kept is None:
                self.held[slot >> 1] = held[slot]
            else:
                kept.take(held[slot])

    def align(self, later: Slots[V]) -> None:
        """These and `later` (of the times after these) made as long as each other and as the two together need,
        before `later`'s values are put here: a slot of `later` must not change length under the merge."""
        if not later.held:
            return
        if not self.held:  # nothing here yet: the later slots' length as it is
            self.shift, self.low, self.high = later.shift, later.low, later.high
        while self.shift < later.shift:
            self.halve()
        while later.shift < self.shift:
            later.halve()
        while max(self.high, later.high) - min(self.low, later.low) >= self.most:
            self.halve()
            later.halve()

    def in_order(self) -> list[tuple[int, V]]:
        """The slots that hold a value, and their values, in the order of time."""
        return sorted(self.held.items())
