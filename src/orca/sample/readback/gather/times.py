"""How long a run lasted (docs/metrics.md, "How time is counted"): the sum of its lines' `dt`, the sampler's
monotonic clock, in the order written; a gap is a `dt` after the first over twice the median. The wall clock (`t`)
only places the run on the calendar."""

from __future__ import annotations

from collections.abc import Sequence

from orca.sample.line_format import Sample
from orca.sample.readback.exact import Histogram

GAP_FACTOR = 2.0
"""A `dt` over this many times the median `dt` is a gap: the sampler was stopped or starved."""


class Times:
    """The count of a run's lines, the first and last line's `t`, the first line's `dt`, and each `dt` counted
    (`Histogram`), so that the figures are the same however the lines were batched or cut."""

    __slots__ = ("dts", "first_dt", "first_t", "last_t", "lines")

    def __init__(self) -> None:
        self.lines = 0
        self.first_t = self.first_dt = self.last_t = 0.0
        self.dts = Histogram(3)

    def add(self, lines: Sequence[Sample]) -> None:
        """The next lines of the run, in the order written."""
        if not self.lines:
            self.first_t, self.first_dt = lines[0].t, lines[0].dt
        self.dts.add_many([line.dt for line in lines])
        self.lines += len(lines)
        self.last_t = lines[-1].t

    def merge(self, later: Times) -> None:
        """Take in the times of the lines that follow these, folded on their own."""
        if not later.lines:
            return
        if not self.lines:
            self.first_t, self.first_dt = later.first_t, later.first_dt
        self.dts.merge(later.dts)
        self.lines += later.lines
        self.last_t = later.last_t

    @property
    def median_dt(self) -> float:
        return self.dts.percentile(50)

    @property
    def gaps(self) -> int:
        """The `dt`s after the first over `GAP_FACTOR` times the median (the first is the sampler's start-up)."""
        bound = GAP_FACTOR * self.median_dt
        return self.dts.count_over(bound) - (round(self.first_dt, self.dts.places) > bound)

    @property
    def covered(self) -> float:
        """Seconds the lines cover: the sum of their `dt`."""
        return self.dts.weighted_sum()

    @property
    def span(self) -> float:
        """Seconds from the run's start to its last line: the time the lines cover, to the millisecond."""
        return round(self.covered, 3)
