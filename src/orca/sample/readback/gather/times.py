"""When a run's lines were written, taken from the lines in the order written (docs/behaviour.md §11.1): a clock
stepped back inside a run (an NTP step, a restored VM) is then neither an hour nor a gap.

Between one line and the next, the interval is the later line's `dt` (the sampler's monotonic clock), or the step of
`t` when that is longer (the sampler was stopped, the machine suspended): a step of `t` backwards counts as `dt`.
The run's span is the first line's `dt` (from the sampler's start, which with a COMMAND is the command's) and every
interval after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import sub

from orca.sample.line_format import Sample
from orca.sample.readback.exact import Histogram

GAP_FACTOR = 2.0
"""An interval over this many times the median `dt` is a gap: the sampler was stopped or starved."""


class Times:
    """The count of a run's lines, the first and last line's `t`, each `dt`, and the intervals between them, each
    counted (`Histogram`), so that the figures are the same however the lines were batched or cut."""

    __slots__ = ("dts", "first_dt", "first_t", "intervals", "last_t", "lines")

    def __init__(self) -> None:
        self.lines = 0
        self.first_t = self.first_dt = self.last_t = 0.0
        self.dts = Histogram(3)
        self.intervals = Histogram(3)

    def add(self, lines: Sequence[Sample]) -> None:
        """The next lines of the run, in the order written."""
        times = [line.t for line in lines]
        dts = [line.dt for line in lines]
        if self.lines:
            steps = list(map(max, dts, map(sub, times, [self.last_t, *times[:-1]])))
        else:
            self.first_t, self.first_dt = times[0], dts[0]
            steps = list(map(max, dts[1:], map(sub, times[1:], times[:-1])))
        self.intervals.add_many(steps)
        self.dts.add_many(dts)
        self.lines += len(lines)
        self.last_t = times[-1]

    def merge(self, later: Times) -> None:
        """Take in the times of the lines that follow these, folded on their own: the interval across the cut is
        the one they did not know."""
        if not later.lines:
            return
        if not self.lines:
            self.first_t, self.first_dt = later.first_t, later.first_dt
        else:
            self.intervals.add_many([max(later.first_dt, later.first_t - self.last_t)])
        self.intervals.merge(later.intervals)
        self.dts.merge(later.dts)
        self.lines += later.lines
        self.last_t = later.last_t

    @property
    def median_dt(self) -> float:
        return self.dts.percentile(50)

    @property
    def gaps(self) -> int:
        return self.intervals.count_over(GAP_FACTOR * self.median_dt)

    @property
    def span(self) -> float:
        """Seconds from the run's start (the first line's `t` less its `dt`) to its last line."""
        return round(self.first_dt + self.intervals.weighted_sum(), 3)

    @property
    def covered(self) -> float:
        """Seconds the lines cover: the sum of their `dt`."""
        return self.dts.weighted_sum()
