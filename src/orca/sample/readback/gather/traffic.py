"""The host's `io` and `net`, gathered (`section.py`): bytes moved each way (each line's rate × its `dt`, summed
exactly) and the highest rates; each point's mean rates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from orca.sample.line_format import Sample
from orca.sample.readback.exact import ExactSum
from orca.sample.readback.gather.section import MEAN, Column, Ends, stretches


@dataclass(frozen=True, slots=True)
class IoSummary:
    """The host's disk io: bytes moved over the run (rate × `dt`, line by line) and the highest rates, in bytes per
    second."""

    read: int
    write: int
    read_peak: int
    write_peak: int


@dataclass(frozen=True, slots=True)
class NetSummary:
    """The host's network traffic, as `IoSummary` counts it; `--json` writes `received` as `in` and `sent` as `out`,
    as the line does."""

    received: int
    sent: int
    received_peak: int
    sent_peak: int


class TrafficSection:
    """A section of two rates (`io`: read and write; `net`: in and out)."""

    keyed = False
    __slots__ = ("_pair", "_section", "columns", "first", "first_peak", "key", "second", "second_peak", "seen")

    def __init__(self, key: str, section: str, names: tuple[str, str], columns: tuple[str, str]) -> None:
        self.key = key
        self.columns = (Column(columns[0], MEAN), Column(columns[1], MEAN))
        self._section = attrgetter(section)
        self._pair = attrgetter(*names)
        self.seen = False
        self.first, self.second = ExactSum(), ExactSum()
        self.first_peak = self.second_peak = 0

    def add(self, lines: Sequence[Sample], ends: Ends) -> list[Any]:
        section, pair = self._section, self._pair
        first_peak, second_peak = self.first_peak, self.second_peak
        first_total = second_total = 0.0
        rows = []
        for stretch in stretches(lines, ends):
            first_sum = second_sum = count = 0
            for line in stretch:
                rates = section(line)
                if rates is not None:
                    first, second = pair(rates)
                    dt = line.dt
                    first_total += first * dt
                    second_total += second * dt
                    first_sum += first
                    second_sum += second
                    count += 1
                    if first > first_peak:
                        first_peak = first
                    if second > second_peak:
                        second_peak = second
            rows.append((first_sum, count, second_sum, count))
            self.seen = self.seen or count > 0
        self.first.add(first_total)
        self.second.add(second_total)
        self.first_peak, self.second_peak = first_peak, second_peak
        return rows

    def merge(self, later: TrafficSection) -> None:
        self.seen = self.seen or later.seen
        self.first.merge(later.first)
        self.second.merge(later.second)
        self.first_peak = max(self.first_peak, later.first_peak)
        self.second_peak = max(self.second_peak, later.second_peak)

    def figures(self) -> tuple[int, int, int, int] | None:
        """Bytes moved each way, then the highest rate each way; None when no line had the section."""
        if not self.seen:
            return None
        return round(self.first.value()), round(self.second.value()), self.first_peak, self.second_peak


class IoSection(TrafficSection):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("io", "io", ("read", "write"), ("io_read", "io_write"))

    def summary(self) -> dict[str, Any]:
        figures = self.figures()
        return {"io": None if figures is None else IoSummary(*figures)}


class NetSection(TrafficSection):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("net", "net", ("received", "sent"), ("net_in", "net_out"))

    def summary(self) -> dict[str, Any]:
        figures = self.figures()
        return {"net": None if figures is None else NetSummary(*figures)}
