"""A source's lines into runs (docs/behaviour.md §11.1, docs/metrics.md "A file of many runs"): one host and one
`start` are one run, folded on its own (`gather/fold.py`), at most `OPEN_RUNS` open at once. A part of a file read on
its own knows a run began in it by its first line (`opens_run`) and hands back the others, taken into the run they go
on from (`Runs.take_part`); a later line whose `t` is its `start` plus its `dt` to the millisecond (a clock stepped
back to just that) is taken for a first line, and its run is two blocks when the file is read in parts."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from orca.sample.line_format import Sample
from orca.sample.readback.gather.fold import SECTIONS, RunFold
from orca.sample.readback.gather.points import MAX_POINTS
from orca.sample.readback.gather.section import Section

OPEN_RUNS = 64
"""Runs held open at once: lines interleaved from more runs than this at a time are rare (a log of many hosts)."""
FIRST_LINE_SECONDS = 0.002
"""A run's first line has `t` = `start` + `dt` (each written to the millisecond, so within this of it)."""

RunKey = tuple[str, float | None]
"""A run: its host and its sampler's `start` (None for the lines of a sampler older than `start`)."""
Lone = tuple[int, Sample]
"""A run of one line so far that began in these lines and is not drawn, held as its `order` and its line, with no
fold made (`Runs(lone=True)`): cron's file of one-line runs makes a run a line."""


def run_key(line: Sample) -> RunKey:
    return line.host, line.start


def opens_run(line: Sample) -> bool:
    """Whether `line` is the first its sampler wrote: then no line of its run comes before it.

    >>> opens_run(Sample(v=1, t=100.2, dt=0.2, host="h", start=100.0))
    True
    >>> opens_run(Sample(v=1, t=105.2, dt=5.0, host="h", start=100.0)), opens_run(Sample(v=1, t=0.2, dt=0.2, host="h"))
    (False, False)
    """
    return line.start is not None and abs(line.t - line.dt - line.start) <= FIRST_LINE_SECONDS


@dataclass(slots=True)
class Run:
    """A run being folded, and what its lines are to the source's."""

    key: RunKey
    fold: RunFold
    order: int
    """Its place among the runs, in the order their first lines came."""
    new: bool
    """Whether it began in these lines (they hold its sampler's first line, or are the source's from its start):
    then no fold of earlier lines holds any of it."""
    drawn: int | None
    """Its place among the source's runs drawn; None when it is not drawn. In a part of the source read on its own,
    its `order` when it is folded for the chart (it may be drawn: see `Runs.take_part`)."""


@dataclass(frozen=True, slots=True)
class Taken:
    """A later part's runs taken in (`Runs.take_part`)."""

    handed: list[Run]
    """The runs it handed back, each closed after taking in what it goes on from, in the order it closed them."""
    places: dict[int, int]
    """Of the runs it closed and showed (by their `order` in it), those drawn: their places among the source's."""
    closed: list[Run | Lone]
    """The runs closed by its open runs joining these, the least recently written first."""


class Runs:
    """The runs of a source, or of a part of it, in the order their lines come: see the module's docstring."""

    __slots__ = ("_max_points", "_next", "_sections", "drawn", "from_start", "lone", "open", "was_drawn")

    def __init__(self, drawn: int = 0, from_start: bool = True, max_points: int = MAX_POINTS,
                 sections: Sequence[Callable[[], Section]] = SECTIONS, lone: bool = False) -> None:
        self.open: dict[RunKey, Run | Lone] = {}
        """The runs open, the least recently written first."""
        self.lone = lone
        """Whether a new run's first line, alone in its batch, is held as a `Lone` (and closed as one, unless more
        lines came), not made a run with a fold (`whole` makes it one)."""
        self.drawn = drawn
        """How many runs are drawn: the first ones to begin, in the order their first lines came."""
        self.was_drawn = 0
        """How many of them have begun."""
        self.from_start = from_start
        """Whether the lines are the source's from its start: then every run begins in them."""
        self._max_points = max_points
        self._sections = sections
        """What each run's fold gathers (a fleet's adds each run's usage)."""
        self._next = 0

    def add(self, batch: Sequence[Sample]) -> list[Run | Lone]:
        """The next lines, in the order written; the runs that closes, the least recently written first (with `lone`,
        a run of one line as a `Lone`)."""
        if not batch:
            return []
        first = batch[0]
        hosts, starts = [line.host for line in batch], [line.start for line in batch]
        groups: Iterable[tuple[RunKey, Sequence[Sample]]]
        if hosts.count(first.host) == len(batch) and starts.count(first.start) == len(batch):
            groups = [(run_key(first), batch)]
        elif len(keys := set(zip(hosts, starts, strict=True))) == len(batch):  # a run a line: cron's file
            if self.lone and self.was_drawn >= self.drawn and self.open.keys().isdisjoint(keys) \
                    and (self.from_start or all(map(opens_run, batch))):
                # Every line a new run held as its line: the runs open after them and those they close made
                # together, as the loop below would one at a time.
                orders = range(self._next, self._next + len(batch))
                self._next += len(batch)
                items = [*self.open.items(), *zip(zip(hosts, starts, strict=True), zip(orders, batch, strict=True),
                                                  strict=True)]
                closing = max(0, len(items) - OPEN_RUNS)
                self.open = dict(items[closing:])
                return [run for _, run in items[:closing]]
            groups = zip(zip(hosts, starts, strict=True), zip(batch), strict=True)
        else:
            from toolz import groupby  # here: toolz's import is a tenth of the start-up, and most files are one run

            groups = groupby(run_key, batch).items()
        open_runs, lone = self.open, self.lone and self.was_drawn >= self.drawn
        for key, lines in groups:
            held = open_runs.pop(key, None)
            if held is None:
                new = self.from_start or opens_run(lines[0])
                if lone and new and len(lines) == 1:
                    open_runs[key] = (self._next, lines[0])
                    self._next += 1
                    continue
                run = self._begun(key, new)
            else:
                run = self.whole(held)
            run.fold.add(lines)
            open_runs[key] = run
        return self._over()

    def whole(self, run: Run | Lone) -> Run:
        """A run, made from its `Lone` if it is one: its fold holding the line, as a first batch of one line leaves
        it."""
        if isinstance(run, Run):
            return run
        order, line = run
        whole = Run(run_key(line), RunFold(drawn=False, max_points=self._max_points, sections=self._sections), order,
                    True, None)
        whole.fold.add([line])
        return whole

    def _begun(self, key: RunKey, new: bool) -> Run:
        """A run whose first lines come now: drawn when among the first `drawn` to begin. In a part of the source,
        the first `drawn` to begin in it are folded for the chart, and each that may have begun before it."""
        fold = RunFold(drawn=False, max_points=self._max_points, sections=self._sections)
        run = Run(key, fold, self._next, new, None)
        self._next += 1
        if (not new and self.drawn) or (new and self.was_drawn < self.drawn):
            run.drawn = self.was_drawn if self.from_start else run.order
            self.was_drawn += new
            fold.draw()
        return run

    def _over(self) -> list[Run | Lone]:
        open_runs = self.open
        if len(open_runs) <= OPEN_RUNS:
            return []
        return [open_runs.pop(key) for key in list(itertools.islice(open_runs, len(open_runs) - OPEN_RUNS))]

    def close(self) -> list[Run]:
        """Every run still open, in the order their first lines came."""
        runs = sorted(map(self.whole, self.open.values()), key=lambda run: run.order)
        self.open = {}
        return runs

    def take_part(self, handed: Sequence[Run], shown: Sequence[int], still: Sequence[Run]) -> Taken:
        """The runs of a later part of the source, read on its own, taken in: `handed`, those it closed that may
        have begun before it (in the order it closed them); `shown`, the `order` of each run it closed and showed
        itself with its chart folded; `still`, those open at its end (in the order their first lines came).

        A run goes on from the open run of its host and start here, unless it began in the part (its sampler's first
        line, or a second run of that key in the part): then it is a run of its own, drawn when among the first
        `drawn` of the source to begin, counted in the order their first lines came."""
        was_open = set(self.open)
        keys: set[RunKey] = set()
        begun = list(shown)
        for run in sorted([*handed, *still], key=lambda run: run.order):
            # Its host and start open here, the run goes on from there, whatever its first line looked like.
            if run.key not in was_open or run.key in keys:
                begun.append(run.order)
            keys.add(run.key)
        fresh = set(begun)
        places = {order: self.was_drawn + index for index, order in enumerate(sorted(begun))
                  if self.was_drawn + index < self.drawn}
        self.was_drawn = min(self.drawn, self.was_drawn + len(begun))
        closed = [self._joined(run, places) if run.order in fresh else self._continued(run) for run in handed]
        for run in still:
            self.open[run.key] = self._joined(run, places) if run.order in fresh else self._continued(run)
        return Taken(closed, {order: place for order, place in places.items() if order in shown}, self._over())

    def _joined(self, later: Run, places: dict[int, int]) -> Run:
        """A run of a later part that is one of its own here: numbered after these, drawn at its place if it has
        one."""
        run = Run(later.key, later.fold, self._next, True, places.get(later.order))
        self._next += 1
        if run.drawn is None:
            run.fold.points = None
        return run

    def _continued(self, later: Run) -> Run:
        """The open run here that a later part's run goes on from, taking it in."""
        run = self.whole(self.open.pop(later.key))
        run.fold.merge(later.fold)
        return run

