"""The exact arithmetic a summary is made of: counts of each value (for percentiles), sums kept exactly, and how far a
counter rose. Each gives the same answer however the lines were batched, or folded in parts and merged, so the
summary of a file read in parts is the one a single reader gives, to the last bit."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from operator import le
from typing import TypeVar


class Histogram:
    """Counts of each value seen: exact percentiles in bounded memory, since the lines carry few decimals (one for
    percentages, three for times), so a run repeats a bounded set of values however long it is."""

    __slots__ = ("counts", "places", "total")

    def __init__(self, places: int) -> None:
        self.counts: Counter[float] = Counter()
        self.places = places
        """Answers are rounded to this many decimals (sums of one-decimal values carry float noise)."""
        self.total = 0

    def add_many(self, values: Sequence[float]) -> None:
        if not values:
            return
        first, count = values[0], len(values)
        if values[-1] == first and values.count(first) == count:
            self.counts[first] += count  # one value all along (a steady interval): no hashing per value
        else:
            self.counts.update(values)
        self.total += count

    def percentile(self, percent: float) -> float:
        """The nearest-rank percentile; 0.0 when empty.

        >>> histogram = Histogram(1)
        >>> histogram.add_many([3.0, 1.0, 2.0, 4.0])
        >>> histogram.percentile(50), histogram.percentile(95), Histogram(1).percentile(95)
        (2.0, 4.0, 0.0)
        """
        rank = max(1, math.ceil(self.total * percent / 100))
        seen = 0
        for value in sorted(self.counts):
            seen += self.counts[value]
            if seen >= rank:
                return round(value, self.places)
        return 0.0

    def merge(self, later: Histogram) -> None:
        self.counts.update(later.counts)
        self.total += later.total

    def weighted_sum(self) -> float:
        """The sum of every value counted, the same however the values were batched or merged.

        >>> histogram = Histogram(1)
        >>> histogram.add_many([0.1, 0.2, 0.1])
        >>> histogram.weighted_sum()
        0.4
        """
        return math.fsum(value * count for value, count in sorted(self.counts.items()))

    def maximum(self) -> float:
        return round(max(self.counts, default=0.0), self.places)

    def count_over(self, limit: float) -> int:
        return sum(count for value, count in self.counts.items() if round(value, self.places) > limit)


class ExactSum:
    """A sum of floats kept exactly, as Shewchuk's non-overlapping partials (what `math.fsum` keeps): the same terms
    give the same total however they are grouped, so folds of a file's parts merged add up as one fold's.

    >>> total = ExactSum()
    >>> for term in (0.1, 0.2, -0.3, 1e100, 1.0, -1e100):
    ...     total.add(term)
    >>> total.value(), 0.1 + 0.2 - 0.3
    (1.0, 5.551115123125783e-17)
    """

    __slots__ = ("partials",)

    def __init__(self) -> None:
        self.partials: list[float] = []

    def add(self, term: float) -> None:
        partials = self.partials
        kept = 0
        for partial in partials:
            high, low = (term, partial) if abs(term) >= abs(partial) else (partial, term)
            total = high + low
            error = low - (total - high)
            if error:
                partials[kept] = error
                kept += 1
            term = total
        partials[kept:] = [term]

    def merge(self, later: ExactSum) -> None:
        for partial in later.partials:
            self.add(partial)

    def value(self) -> float:
        return math.fsum(self.partials)


_T = TypeVar("_T", int, float)


def rise_terms(start: _T, values: Sequence[_T]) -> list[_T]:
    """The terms whose sum is how far a counter went over `values` from `start`; a value below the one before is a
    counter that started again (a new sampler, a new container of that name), from 0: its whole value is new.

    >>> rise_terms(0, [1, 3, 3, 1, 2]), rise_terms(5, [5, 6])
    ([1, 0, 3, -1, 3, -3, 1, 2, -1], [6, -5])
    """
    if values and start <= values[0] and all(map(le, values, values[1:])):
        return [values[-1], -start]  # the usual case: it never went back
    terms: list[_T] = []
    last = start
    for value in values:
        terms.append(value)
        if value >= last:
            terms.append(-last)
        last = value
    return terms


class Rise:
    """How far a counter rose (`rise_terms`), its values taken batch by batch, or over parts of a file folded apart
    and merged: the step from one batch's or part's last value to the next one's first is taken as any other step,
    and the terms are summed exactly, so the rise is the same however the values were cut.

    >>> whole, first, second = Rise(), Rise(), Rise()
    >>> whole.add([0, 1, 3, 3, 1, 2]); first.add([0, 1, 3]); second.add([3, 1, 2]); first.merge(second)
    >>> whole.count(), first.count(), (first.first, first.last)
    (5, 5, (0, 2))
    >>> big = Rise(); big.add([2**62 + 1, 2**63 - 1]); big.count() == 2**62 - 2
    True
    """

    __slots__ = ("first", "last", "terms")

    def __init__(self) -> None:
        self.first: float | None = None
        """The first value: a rise of the values before these would go on from it."""
        self.last: float | None = None
        self.terms = ExactSum()

    def add(self, values: Sequence[float]) -> None:
        """The values that follow those taken in so far."""
        if values:
            if self.first is None:
                self.first = values[0]
            for term in rise_terms(values[0] if self.last is None else self.last, values):
                self.terms.add(term)
            self.last = values[-1]

    def merge(self, later: Rise) -> None:
        """`later`'s rise (of the values after these) taken in; `later` is not used again."""
        if later.first is not None:
            self.add([later.first])
            self.terms.merge(later.terms)
            self.last = later.last

    def value(self) -> float:
        return self.terms.value()

    def count(self) -> int:
        """The rise of a counter of ints, exactly however large: ints add without error, so `ExactSum` keeps their
        sum as its one partial."""
        return int(sum(self.terms.partials))
