"""What every section of the one gather is: the figures of one section of the line (`io`, `run`, `cgroup`, ...),
folded from a run's lines in one pass, for the summary and the chart alike.

A section is one class in one module: `add` reads each line's section once, keeping what the summary needs (peaks,
exact sums, counts of values) and giving, per stretch of lines that one point of the chart stands for, the values of
its `columns`; `merge` takes in the same section folded over the lines that follow (another part of the file);
`summary` gives its record, which the text and `--json` print. The run's fold (`fold.py`) calls each section of its
`SECTIONS` in turn and keeps the points (`points.py`); nothing else reads a line's sections.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self

from orca.sample.line_format import Sample

MEAN, PEAK, NEWEST = "mean", "peak", "newest"
"""How a point of the chart holds a column over the lines it stands for: their mean (a share of time, a rate), the
highest of them (memory, whose peak is what a limit meets), or the newest line's (a setting: a total, a limit)."""


@dataclass(frozen=True, slots=True)
class Column:
    """One series of the chart that a section gives a value of for each point."""

    name: str
    kind: str
    """`MEAN`, `PEAK` or `NEWEST`."""
    tenths: bool = False
    """A `MEAN` of values with one decimal (percentages), summed in whole tenths, so that sums are exact however
    the lines are cut; other means are of whole numbers (bytes per second)."""

    @property
    def width(self) -> int:
        """How many values a stretch gives for this column: a mean's sum and count, else one."""
        return 2 if self.kind == MEAN else 1


Ends = Sequence[int]
"""Where each stretch of a batch of lines ends (the index after its last line), in order; the last is the batch's
length. A stretch is consecutive lines that one point of the chart stands for; without a chart, the whole batch."""


class Section(Protocol):
    """One section of the line, gathered: see the module's docstring."""

    @property
    def key(self) -> str:
        """The summary's field (and `--json`'s key) this section fills."""
        ...

    @property
    def columns(self) -> tuple[Column, ...]:
        """The chart's series this section gives, in the order of the values `add` gives per stretch."""
        ...

    @property
    def keyed(self) -> bool:
        """Whether, instead of `columns`, `add` gives per stretch each name's highest value (the containers)."""
        ...

    def add(self, lines: Sequence[Sample], ends: Ends) -> list[Any]:
        """A batch of a run's lines, in the order written; per stretch (`ends`), the values of `columns` in order
        (a `MEAN` as its sum and its count, a `PEAK` or `NEWEST` as one value, None where no line had one), or, when
        `keyed`, a dict of each name's highest value."""
        ...

    def merge(self, later: Self) -> None:
        """Take in the same section folded over the lines that follow these; `later` is not used again."""
        ...

    def summary(self) -> dict[str, Any]:
        """The summary's fields this section fills (its `key`, and any more it names): each a record, None when no
        line had the section."""
        ...


def stretches(lines: Sequence[Sample], ends: Ends) -> list[Sequence[Sample]]:
    """The lines of each stretch, in order: the batch itself when it is one stretch (no copy)."""
    if len(ends) == 1:
        return [lines]
    return [lines[begin:end] for begin, end in zip([0, *ends[:-1]], ends, strict=True)]
