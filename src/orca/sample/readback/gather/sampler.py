"""The sampler's own CPU (`self_cpu`), gathered (`section.py`): how far it rose over the run, a sampler that started
again counting from 0. It draws nothing, but gives the chart each point's longest interval (`line_dt`, the most
`dt` of its lines): a point of lines far shorter than the run's usual interval holds rates over a few clock ticks,
which the chart draws without letting them set a panel's scale (`chart/panels.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orca.sample.line_format import Sample
from orca.sample.readback.exact import ExactSum, add_rise
from orca.sample.readback.gather.section import PEAK, Bounds, Column, present


class SamplerSection:
    key = "self_cpu_seconds"
    columns = (Column("line_dt", PEAK),)
    keyed = False
    __slots__ = ("first", "last", "rise")

    def __init__(self) -> None:
        self.first: float | None = None
        """The first `self_cpu`: all of it is new CPU, unless a fold of the lines before these goes on from it."""
        self.rise = ExactSum()
        """How far `self_cpu` rose after the first value."""
        self.last: float | None = None

    def add(self, lines: Sequence[Sample]) -> None:
        values = present([line.self_cpu for line in lines])
        if values:
            if self.first is None:
                self.first = values[0]
            add_rise(self.rise, values[0] if self.last is None else self.last, values)
            self.last = values[-1]

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        return [(max(line.dt for line in lines[begin:end]),) for begin, end in bounds]

    def merge(self, later: SamplerSection) -> None:
        if later.first is None:
            return
        if self.last is None:
            self.first = later.first
        else:
            add_rise(self.rise, self.last, [later.first])
        self.rise.merge(later.rise)
        self.last = later.last

    def summary(self) -> dict[str, Any]:
        return {"self_cpu_seconds": self.rise.value() + (self.first or 0.0)}
