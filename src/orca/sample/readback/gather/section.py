"""What every section of the one gather is: the figures of one section of the line (`io`, `run`, `cgroup`, ...),
folded from a run's lines, for the summary and the chart alike.

A section is one class in one module, as `Section` below says (`points.py` keeps the points its `rows` give). The
run's fold (`fold.py`) calls each section of its `SECTIONS` in turn; nothing else reads a line's sections.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeVar, cast

from orca.sample.line_format import Sample

T = TypeVar("T")
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


Row = tuple[Any, ...]
"""One stretch's values of a section's `columns`, as `Section.rows` gives them."""
Whole = Callable[[], Row]
"""How a section makes the row of a whole batch (one stretch) from what its `add` already read of the batch."""
Bounds = Sequence[tuple[int, int]]
"""Each stretch's first line and the line after its last, in a batch: consecutive lines in one slot of time, that one
point of the chart stands for."""


class Section(Protocol):
    """One section of the line, gathered: what the summary needs of it, its chart's values, and its merge."""

    @property
    def key(self) -> str:
        """The summary's field (and `--json`'s key) this section fills."""
        ...

    @property
    def columns(self) -> tuple[Column, ...]:
        """The chart's series this section gives, in the order of the values `rows` gives per stretch."""
        ...

    @property
    def keyed(self) -> bool:
        """Whether its columns are drawn per name of its entries (the containers, the run's top processes), each
        name a series of its own: the chart's keyed series, named after the columns."""
        ...

    def add(self, lines: Sequence[Sample]) -> Whole | None:
        """A batch of a run's lines, in the order written, into the summary's figures. A million-line file is read at
        the pace of these: one plain loop or comprehension over the batch, the figures in locals (a method called
        per line, even `list.append`, costs more than the loop). A section whose figures come from what its chart's
        row is made of gives back how to make the batch's row as one stretch (what `rows` gives for
        `[(0, len(lines))]`), from what it read: a drawn batch within one point (many of a long run's) then needs no
        second loop over its lines, and a batch not drawn pays nothing for it. Any other section gives None."""
        ...

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        """For the chart, per stretch of `lines` (`bounds`), the values of `columns` in order: a `MEAN` as its sum and
        its count, a `PEAK` as the highest, a `NEWEST` as the stretch's last line's, None where no line had one; for a
        keyed section, per column a dict of each name's highest value. One plain loop over each stretch's lines."""
        ...

    def merge(self, later: Self) -> None:
        """Take in the same section folded over the lines that follow these; `later` is not used again."""
        ...

    def summary(self) -> dict[str, Any]:
        """The summary's fields this section fills (its `key`, and any more it names): each a record, None when no
        line had the section."""
        ...


class _Merging(Protocol):
    def merge(self, later: Self) -> None: ...


F = TypeVar("F", bound=_Merging)


def merge_by_name(folds: dict[str, F], later: dict[str, F]) -> None:
    """`later`'s folds (of the lines after these) taken into `folds`, name by name: a name new here as it is, a name
    in both merged; `later`'s are not used again."""
    for name, theirs in later.items():
        mine = folds.get(name)
        if mine is None:
            folds[name] = theirs
        else:
            mine.merge(theirs)


def present(values: list[T | None]) -> list[T]:
    """The values that are not None (a section the line has): the list itself when all are (no copy)."""
    return cast("list[T]", values) if None not in values else [value for value in values if value is not None]
