"""The sampler's own CPU (`self_cpu`), gathered (`section.py`): how far it rose over the run, a sampler that started
again counting from 0. It draws nothing, but gives the chart each point's longest interval (`line_dt`, the most
`dt` of its lines): a point of lines far shorter than the run's usual interval holds rates over a few clock ticks,
which the chart draws without letting them set a panel's scale (`chart/panels.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orca.sample.line_format import Sample
from orca.sample.readback.exact import Rise
from orca.sample.readback.gather.section import PEAK, Bounds, Column, present


class SamplerSection:
    key = "self_cpu_seconds"
    columns = (Column("line_dt", PEAK),)
    keyed = False
    __slots__ = ("rise",)

    def __init__(self) -> None:
        self.rise = Rise()
        """How far `self_cpu` rose after the first value, which is all new CPU too (a sampler counts from 0)."""

    def add(self, lines: Sequence[Sample]) -> None:
        self.rise.add(present([line.self_cpu for line in lines]))

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        return [(max([line.dt for line in lines[begin:end]]),) for begin, end in bounds]

    def merge(self, later: SamplerSection) -> None:
        self.rise.merge(later.rise)

    def summary(self) -> dict[str, Any]:
        return {"self_cpu_seconds": self.rise.value() + (self.rise.first or 0.0)}
