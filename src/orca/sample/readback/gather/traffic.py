"""The host's `io` and `net`, gathered (`section.py`): bytes moved each way (each line's rate × its `dt`, summed
exactly) and the highest rates; each point's mean rates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from orca.sample.line_format import Count, Sample
from orca.sample.readback.exact import ExactSum
from orca.sample.readback.gather.section import MEAN, Bounds, Column


@dataclass(frozen=True, slots=True)
class IoSummary:
    """The host's disk io: bytes moved over the run (rate × `dt`, line by line) and the highest rates, in bytes per
    second."""

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


class TrafficSection:
    """A section of two rates (`io`: read and write; `net`: in and out): bytes moved each way and the highest rates.
    Its subclasses read their lines' rates each in a loop of their own (a call per line to pick the two rates out
    would cost as much as the loop itself)."""

    keyed = False
    __slots__ = ("columns", "first", "first_peak", "key", "second", "second_peak", "seen")

    def __init__(self, key: str, columns: tuple[str, str]) -> None:
        self.key = key
        self.columns = (Column(columns[0], MEAN), Column(columns[1], MEAN))
        self.seen = False
        self.first, self.second = ExactSum(), ExactSum()
        self.first_peak = self.second_peak = 0

    def _took(self, moved: tuple[float, float, int, int, int]) -> None:
        """A batch's bytes moved each way, its highest rates and how many of its lines had the section."""
        first, second, first_peak, second_peak, count = moved
        self.first.add(first)
        self.second.add(second)
        self.first_peak, self.second_peak = first_peak, second_peak
        self.seen = self.seen or count > 0

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
        super().__init__("io", ("io_read", "io_write"))

    def add(self, lines: Sequence[Sample]) -> None:
        read_total = write_total = 0.0
        read_peak, write_peak, count = self.first_peak, self.second_peak, 0
        for line in lines:
            io = line.io
            if io is not None:
                read, write, dt = io.read, io.write, line.dt
                read_total += read * dt
                write_total += write * dt
                count += 1
                if read > read_peak:
                    read_peak = read
                if write > write_peak:
                    write_peak = write
        self._took((read_total, write_total, read_peak, write_peak, count))

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        rows = []
        for begin, end in bounds:
            read = write = count = 0
            for line in lines[begin:end]:
                io = line.io
                if io is not None:
                    read += io.read
                    write += io.write
                    count += 1
            rows.append((read, count, write, count))
        return rows

    def summary(self) -> dict[str, Any]:
        figures = self.figures()
        return {"io": None if figures is None else IoSummary(*figures)}


class NetSection(TrafficSection):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("net", ("net_in", "net_out"))

    def add(self, lines: Sequence[Sample]) -> None:
        received_total = sent_total = 0.0
        received_peak, sent_peak, count = self.first_peak, self.second_peak, 0
        for line in lines:
            net = line.net
            if net is not None:
                received, sent, dt = net.received, net.sent, line.dt
                received_total += received * dt
                sent_total += sent * dt
                count += 1
                if received > received_peak:
                    received_peak = received
                if sent > sent_peak:
                    sent_peak = sent
        self._took((received_total, sent_total, received_peak, sent_peak, count))

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        rows = []
        for begin, end in bounds:
            received = sent = count = 0
            for line in lines[begin:end]:
                net = line.net
                if net is not None:
                    received += net.received
                    sent += net.sent
                    count += 1
            rows.append((received, count, sent, count))
        return rows

    def summary(self) -> dict[str, Any]:
        figures = self.figures()
        return {"net": None if figures is None else NetSummary(*figures)}
