"""The host's `io` and `net`, gathered (`section.py`): bytes moved each way (each line's rate × its `dt`, summed
exactly) and the highest rates; each point's mean rates."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from msgspec.structs import astuple

from orca.sample.line_format import Count, Sample
from orca.sample.readback.exact import ExactSum
from orca.sample.readback.gather.section import MEAN, Bounds, Column

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class IoSummary:
    """The host's disk io (and the run's own, `run.io`), as `Moved` counts it."""

    read: Count
    write: Count
    read_peak: Count
    write_peak: Count


@dataclass(frozen=True, slots=True)
class NetSummary:
    """The host's network traffic, as `IoSummary` counts it; `--json` writes `received` as `in` and `sent` as `out`,
    as the line does (the `json` of a field's metadata)."""

    received: Count = field(metadata={"json": "in"})
    sent: Count = field(metadata={"json": "out"})
    received_peak: Count = field(metadata={"json": "in_peak"})
    sent_peak: Count = field(metadata={"json": "out_peak"})


class Moved:
    """Bytes moved each way (each line's rate × its `dt`, summed exactly) and the highest rate each way, over the lines
    that had the two rates: the host's `io` and `net`, and the run's own `run.io` (`processes.py`)."""

    __slots__ = ("first", "first_peak", "second", "second_peak", "seen")

    def __init__(self) -> None:
        self.seen = False
        self.first, self.second = ExactSum(), ExactSum()
        self.first_peak = self.second_peak = 0

    def took(self, first: float, second: float, first_peak: int, second_peak: int) -> None:
        """A batch's bytes moved each way and the highest rates so far, when some line of it had the rates."""
        self.seen = True
        self.first.add(first)
        self.second.add(second)
        self.first_peak, self.second_peak = first_peak, second_peak

    def merge(self, later: Moved) -> None:
        if later.seen:
            self.seen = True
            self.first.merge(later.first)
            self.second.merge(later.second)
            self.first_peak = max(self.first_peak, later.first_peak)
            self.second_peak = max(self.second_peak, later.second_peak)

    def record(self, make: Callable[[int, int, int, int], T]) -> T | None:
        """`make` of the bytes moved each way, then the highest rate each way; None when no line had the rates."""
        if not self.seen:
            return None
        return make(round(self.first.value()), round(self.second.value()), self.first_peak, self.second_peak)


class TrafficSection:
    """A section of two rates (`io`: read and write; `net`: in and out, as its record declares them), as `Moved`
    counts them. One loop reads either: the line's section by its key, and its two rates in the order of its fields."""

    keyed = False
    __slots__ = ("columns", "key", "make", "moved")

    def __init__(self, key: str, columns: tuple[str, str], make: Callable[[int, int, int, int], object]) -> None:
        self.key = key
        self.columns = (Column(columns[0], MEAN), Column(columns[1], MEAN))
        self.make = make
        self.moved = Moved()

    def add(self, lines: Sequence[Sample]) -> None:
        key, first_total, second_total = self.key, 0.0, 0.0
        first_peak, second_peak, count = self.moved.first_peak, self.moved.second_peak, 0
        for line in lines:
            rates = getattr(line, key)
            if rates is not None:
                first, second = astuple(rates)
                dt = line.dt
                first_total += first * dt
                second_total += second * dt
                count += 1
                if first > first_peak:
                    first_peak = first
                if second > second_peak:
                    second_peak = second
        if count:
            self.moved.took(first_total, second_total, first_peak, second_peak)

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        key, rows = self.key, []
        for begin, end in bounds:
            first_sum = second_sum = count = 0
            for line in lines[begin:end]:
                rates = getattr(line, key)
                if rates is not None:
                    first, second = astuple(rates)
                    first_sum += first
                    second_sum += second
                    count += 1
            rows.append((first_sum, count, second_sum, count))
        return rows

    def merge(self, later: TrafficSection) -> None:
        self.moved.merge(later.moved)

    def summary(self) -> dict[str, Any]:
        return {self.key: self.moved.record(self.make)}


IoSection = partial(TrafficSection, "io", ("io_read", "io_write"), IoSummary)
NetSection = partial(TrafficSection, "net", ("net_in", "net_out"), NetSummary)
