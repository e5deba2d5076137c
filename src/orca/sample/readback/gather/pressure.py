"""The host's `pressure`, gathered (`section.py`): the mean share of time some task stalled on each resource, over
the lines that have it; each point's mean."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from orca.sample.line_format import Percent, PressureShare, Sample
from orca.sample.readback.exact import ExactSum
from orca.sample.readback.gather.section import MEAN, Bounds, Column, Row, Whole, present


@dataclass(frozen=True, slots=True)
class PressureSummary:
    """Means over the lines that have each resource; None for one never present."""

    cpu: Percent | None
    memory: Percent | None
    io: Percent | None


def _shares(pressures: list[PressureShare]) -> tuple[list[float], list[float], list[float]]:
    """The shares of time stalled on cpu, memory and io that the lines have."""
    return (present([pressure.cpu for pressure in pressures]), present([pressure.memory for pressure in pressures]),
            present([pressure.io for pressure in pressures]))


def _none() -> Row:
    """The row of lines without a `pressure`."""
    return 0.0, 0, 0.0, 0, 0.0, 0


class PressureSection:
    key = "pressure"
    columns = (Column("pressure_cpu", MEAN, tenths=True), Column("pressure_memory", MEAN, tenths=True),
               Column("pressure_io", MEAN, tenths=True))
    keyed = False
    __slots__ = ("counts", "sums")

    def __init__(self) -> None:
        self.sums = (ExactSum(), ExactSum(), ExactSum())
        self.counts = [0, 0, 0]

    def add(self, lines: Sequence[Sample]) -> Whole:
        """The batch's sums and counts, which are also its row as one stretch."""
        known = present([line.pressure for line in lines])
        if not known:
            return _none
        row: list[float] = []
        for index, (total, shares) in enumerate(zip(self.sums, _shares(known), strict=True)):
            # Summed in the lines' order, as `rows` sums a stretch (a point takes the sum in whole tenths).
            batch = sum(shares, 0.0)
            total.add(batch)
            self.counts[index] += len(shares)
            row += (batch, len(shares))
        return partial(tuple, row)

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        rows = []
        for begin, end in bounds:
            cpu = memory = io = 0.0
            cpus = memories = ios = 0
            for line in lines[begin:end]:
                pressure = line.pressure
                if pressure is not None:
                    if pressure.cpu is not None:
                        cpu += pressure.cpu
                        cpus += 1
                    if pressure.memory is not None:
                        memory += pressure.memory
                        memories += 1
                    if pressure.io is not None:
                        io += pressure.io
                        ios += 1
            rows.append((cpu, cpus, memory, memories, io, ios))
        return rows

    def merge(self, later: PressureSection) -> None:
        for total, theirs in zip(self.sums, later.sums, strict=True):
            total.merge(theirs)
        self.counts = [mine + theirs for mine, theirs in zip(self.counts, later.counts, strict=True)]

    def summary(self) -> dict[str, Any]:
        if not any(self.counts):
            return {"pressure": None}
        means = [total.value() / count if count else None for total, count in zip(self.sums, self.counts, strict=True)]
        return {"pressure": PressureSummary(*means)}
