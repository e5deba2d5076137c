"""Lines folded as `orca metrics` folds them, for the reader's tests: one run's fold, a source's runs in one pass or
in parts merged in order (as `readback/shell/parts.py` merges its workers'), and what a source shows."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from orca.sample.line_format import Sample
from orca.sample.readback.gather.fold import RunFold
from orca.sample.readback.gather.points import MAX_POINTS
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.gather.series import Series
from orca.sample.readback.runs import Run, Runs
from orca.sample.readback.sample_line import decode_all
from orca.sample.readback.shell.parts import show_runs
from orca.sample.readback.shell.shown import Shown, Totals
from orca.sample.readback.shell.sources import Source, Tally
from orca.sample.readback.summary.as_json import json_line


def checked(text: str) -> list[Sample]:
    """The samples of `text`, its other lines passed over."""
    return decode_all(text.encode().splitlines())[0]


def folded(text: str, max_points: int = MAX_POINTS) -> Series:
    """The series of `text`'s lines as one run."""
    fold = RunFold(drawn=True, max_points=max_points)
    fold.add(checked(text))
    series = fold.series("run")
    assert series is not None
    return series


def every_run(batches: Iterable[Sequence[Sample]], drawn: int = 0) -> list[Run]:
    """The runs of a source's lines, given in batches in the order written, in the order they close (those open
    at the end in the order their first lines came), read in one pass."""
    runs = Runs(drawn)
    closed = [run for batch in batches for run in runs.add(batch)]
    return [*map(runs.whole, closed), *runs.close()]


def summaries(name: str, batches: Iterable[Sequence[Sample]]) -> list[InstanceSummary]:
    """The summaries of a source's runs (see `every_run`).

    >>> from orca.sample.line_format import CpuShare
    >>> lines = [Sample(v=1, t=10.0, dt=5.0, host="a", cpu=CpuShare(10.0, 2.0, 9.0, 0.0, 30.0), self_cpu=0.1),
    ...          Sample(v=1, t=15.0, dt=5.0, host="a", cpu=CpuShare(30.0, 4.0, 0.0, 0.0, 80.0), self_cpu=0.2)]
    >>> [summary] = summaries("a.jsonl", [lines])
    >>> summary.cpu.mean_all_cores_percent, summary.duration, summary.overhead_percent
    (23.0, 10.0, 2.0)
    """
    return [summary for run in every_run(batches) if (summary := run.fold.summary(name)) is not None]

def runs_in_parts(parts: Sequence[Sequence[Sequence[Sample]]], drawn: int = 0,
                  max_points: int = MAX_POINTS) -> list[Run]:
    """The runs of a source's lines cut into `parts` (each a list of batches), the first folded from the source's
    start and each other on its own, then taken in order as `show_runs` takes its workers': every run, in the order
    shown, each drawn at its place among the source's."""
    state = Runs(drawn, max_points=max_points)
    shown = [state.whole(run) for batch in parts[0] for run in state.add(batch)] if parts else []
    for part in parts[1:]:
        runs = Runs(drawn, from_start=False, max_points=max_points)
        finished: list[Run] = []
        handed: list[Run] = []
        for batch in part:
            for run in map(runs.whole, runs.add(batch)):
                (finished if run.new else handed).append(run)
        taken = state.take_part(handed, [run.order for run in finished if run.drawn is not None], runs.close())
        for run in finished:
            run.drawn = taken.places.get(run.order)
        shown += [*taken.handed, *finished, *map(state.whole, taken.closed)]
    return shown + state.close()


def summaries_of(runs: Sequence[Run], name: str = "x") -> list[InstanceSummary]:
    return [summary for run in runs if (summary := run.fold.summary(name)) is not None]


def series_of(runs: Sequence[Run], name: str = "x") -> list[Series]:
    """The series of the runs drawn, in their places."""
    drawn = sorted((run.drawn, run.fold.series(name)) for run in runs if run.drawn is not None)
    return [series for _, series in drawn if series is not None]


@dataclass(slots=True)
class Written(Shown):
    """Writes each run's summary as it closes, through `render`, one after the other; a part read by another process
    writes its runs' into its file, written after these (`follow`)."""

    def show(self, name: str, run: Run) -> None:
        summary = run.fold.summary(name)
        if summary is None:
            return
        self.write(self.render(summary).encode("utf-8", "surrogateescape"))
        self.totals.add(summary)
        if run.drawn is not None and (series := run.fold.series(name)) is not None:
            self.series.append((run.drawn, series))

    def elsewhere(self, write: Callable[[bytes], None]) -> Written:
        return Written(self.render, write)

    def follow(self, totals: Totals, series: list[tuple[int, Series]], written: IO[bytes],
               places: dict[int, int]) -> None:
        self.write(written.read())
        Shown.follow(self, totals, series, written, places)


def shown_by(source: Source, parts: int | None = None, drawn: int = 0) -> tuple[list[dict[str, Any]], list[Series],
                                                                               Tally]:
    """What `orca metrics --json` shows of `source`, read in `parts` (other processes' text included): the summaries
    in the order printed, the series of the runs drawn, and what was passed over."""
    written: list[bytes] = []
    shown = Written(json_line, written.append)
    tally = show_runs(source, shown, drawn, parts)
    documents = [json.loads(line) for line in b"".join(written).decode("utf-8", "surrogateescape").splitlines()]
    return documents, [series for _, series in sorted(shown.series, key=lambda each: each[0])], tally
