"""What is shown of a source's runs, each as it closes (docs/metrics.md): the runs, lines and times the `total:`
line counts, and the series of the runs drawn, for the chart; what more a kind of `Shown` does with each run (keeps
it as a table's row with its text aside: `run_rows.py`; keeps it for a fleet: `fleet_read.py`) is its own."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

from orca.sample.line_format import Sample
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.gather.series import Series
from orca.sample.readback.runs import Run


@dataclass(slots=True)
class Totals:
    """The runs shown so far, their lines, and the earliest start and latest end among them."""

    runs: int = 0
    lines: int = 0
    begin: float = math.inf
    end: float = -math.inf

    def add(self, summary: InstanceSummary) -> None:
        self.count(summary.lines, summary.last_t - summary.duration, summary.last_t)

    def count(self, lines: int, begin: float, end: float, runs: int = 1) -> None:
        """`runs` runs of `lines` lines in all, from `begin` to `end`."""
        self.runs += runs
        self.lines += lines
        self.begin = min(self.begin, begin)
        self.end = max(self.end, end)

    def merge(self, other: Totals) -> None:
        self.count(other.lines, other.begin, other.end, other.runs)


@dataclass(slots=True)
class Shown:
    """Counts each run as it closes and keeps the drawn runs' series, each with its place among them; `render` says
    a run's summary and `write` writes, for a kind that writes (`run_rows.RowsKept`)."""

    render: Callable[[InstanceSummary], str]
    write: Callable[[bytes], None]
    totals: Totals = field(default_factory=Totals)
    series: list[tuple[int, Series]] = field(default_factory=list)

    def show(self, name: str, run: Run) -> InstanceSummary | None:
        """The run counted, its series kept when drawn; its summary for a kind that keeps more (None: no lines)."""
        summary = run.fold.summary(name)
        if summary is not None:
            self.totals.add(summary)
            if run.drawn is not None and (series := run.fold.series(name)) is not None:
                self.series.append((run.drawn, series))
        return summary

    def takes_lines(self) -> bool:
        """Whether runs of one line are best given as their lines (`show_lines`), with no fold made for them."""
        return False

    def show_lines(self, name: str, lines: Sequence[Sample], whole: Callable[[Sample], Run]) -> None:
        """Runs of one line each, closed one after the other, given as their lines; `whole` makes one's run."""
        for line in lines:
            self.show(name, whole(line))

    def done(self) -> None:
        """The part read elsewhere (`elsewhere`) is at its end: nothing more to write."""

    def elsewhere(self, write: Callable[[bytes], None]) -> Shown:
        """The same kind of showing, written through `write`, from nothing shown (a part's runs, shown in its file)."""
        return Shown(self.render, write)

    def follow(self, totals: Totals, series: list[tuple[int, Series]], written: IO[bytes],
               places: dict[int, int]) -> None:
        """What another `Shown` showed of the runs after these (`totals`, `series` each with its `order`; what it
        wrote, `written`, is its kind's to take in), taken in: its runs counted, and drawn at their `places` among
        the source's (`Runs.take_part`)."""
        self.totals.merge(totals)
        self.series += [(places[order], one) for order, one in series if order in places]
