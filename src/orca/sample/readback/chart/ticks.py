"""The chart's time axis: elapsed time since the run's start, in one unit chosen for the run's length (seconds up to
3 minutes, minutes up to 3 hours, hours up to 3 days, then days), ticked at steps that read as round numbers of that
unit, at most `MOST_STEPS` of them: `0 5 10 ... 30` (s) for a 30 s run, `0 4 8 ... 24` (h) for a day."""

from __future__ import annotations

import math
from dataclasses import dataclass

MOST_STEPS = 7
"""At most this many steps along the axis (so at most one more tick)."""

UNITS = (
    ("s", 1.0, 180.0, (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 20, 30, 60)),
    ("min", 60.0, 3 * 3600.0, (1, 2, 5, 10, 15, 20, 30, 60)),
    ("h", 3600.0, 3 * 86400.0, (1, 2, 3, 4, 6, 12, 24)),
    ("days", 86400.0, math.inf, (1, 2, 5, 7, 10, 14, 30, 60, 90, 180, 365)),
)
"""Per unit: its name, its seconds, the longest run drawn in it, and its steps, in that unit."""


@dataclass(frozen=True, slots=True)
class Ticks:
    unit: str
    """`s`, `min`, `h` or `days`: what the labels count."""
    seconds: tuple[float, ...]
    """Where each tick is, in seconds since the start."""
    labels: tuple[str, ...]
    """Each tick's label, in `unit`."""

    @property
    def axis_label(self) -> str:
        return f"elapsed ({self.unit})"


def elapsed_ticks(span: float) -> Ticks:
    """The ticks of an axis from 0 to `span` seconds.

    >>> elapsed_ticks(31.2).labels, elapsed_ticks(31.2).unit
    (('0', '5', '10', '15', '20', '25', '30'), 's')
    >>> elapsed_ticks(86400).labels, elapsed_ticks(86400).unit
    (('0', '4', '8', '12', '16', '20', '24'), 'h')
    >>> elapsed_ticks(0).labels
    ('0',)
    """
    span = max(0.0, span) if math.isfinite(span) else 0.0
    name, seconds, steps = next((name, seconds, steps) for name, seconds, longest, steps in UNITS if span <= longest)
    length = span / seconds
    step = next((step for step in steps if length / step <= MOST_STEPS), steps[-1])
    while length / step > MOST_STEPS:  # beyond the last step of days: multiples of it
        step *= 2
    count = math.floor(length / step + 1e-9)
    at = [index * step for index in range(count + 1)]
    return Ticks(name, tuple(value * seconds for value in at), tuple(map(_number, at)))


def _number(value: float) -> str:
    """A tick's value as written: whole numbers without a point, tenths with one (`0`, `0.5`, `1`)."""
    return f"{value:.1f}".removesuffix(".0")
