"""A fleet's sources read (docs/metrics.md, "A fleet"): each source's runs, with their summaries and their usage,
kept rather than shown as they close (a fleet's table needs them all), and the series of the first runs drawn. Each
source is read whole by one process: the fleet's sources are spread over the executor's processes instead
(`many.py`), and what comes back is this: folds, not lines."""

from __future__ import annotations

import base64
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import cast

from orca.sample.readback.fleet.table import Run
from orca.sample.readback.fleet.usage import USAGE, UsageSection
from orca.sample.readback.gather.fold import SECTIONS
from orca.sample.readback.gather.series import Series
from orca.sample.readback.runs import Run as FoldedRun
from orca.sample.readback.shell.parts import show_runs
from orca.sample.readback.shell.shown import Shown, Totals
from orca.sample.readback.shell.sources import Source, Tally, read_failure


@dataclass(slots=True)
class Kept(Shown):
    """Each run as it closes, kept: its summary and usage, and its series when drawn; nothing written. In a part of
    a file read by another process (`elsewhere`), each run is written instead, one line each, and taken back in
    (`follow`): the runs of a file of many runs come back from its parts to make one table."""

    runs: list[Run] = field(default_factory=list)
    spilled: bool = False
    """Whether each run is written (in another process's part) rather than kept."""

    def show(self, name: str, run: FoldedRun) -> None:
        summary = run.fold.summary(name)
        if summary is None:
            return
        self.totals.add(summary)
        kept = Run(summary, cast("UsageSection", run.fold.section(USAGE)).usage())
        if self.spilled:
            self.write(base64.b64encode(pickle.dumps(kept, pickle.HIGHEST_PROTOCOL)).decode("ascii") + "\n")
        else:
            self.runs.append(kept)
        if run.drawn is not None and (series := run.fold.series(name)) is not None:
            self.series.append((run.drawn, series))

    def elsewhere(self, write: Callable[[str], None]) -> Kept:
        return Kept(self.render, self.separator, write, spilled=True)

    def follow(self, totals: Totals, series: list[tuple[int, Series]], written: Iterable[str],
               places: dict[int, int]) -> None:
        """The runs another `Kept` wrote, kept after these (our own process's files: unpickled as written)."""
        for line in "".join(written).splitlines():
            self.runs.append(pickle.loads(base64.b64decode(line)))
        self.totals.merge(totals)
        self.series += [(places[order], one) for order, one in series if order in places]


@dataclass(frozen=True, slots=True)
class SourceRuns:
    """What one source of a fleet gave."""

    tally: Tally
    runs: list[Run]
    series: list[Series]
    """The drawn runs' series, in the order they began."""


def read_fleet_source(source: Source, drawn: int, buckets: bool) -> SourceRuns:
    """`source`'s runs, each with its usage (and its buckets for the fleet chart when `buckets`); the first `drawn`
    runs with their series. Read whole by this process: the fleet's sources are spread over the executor's processes
    instead (`many.py`), and a part read by another process would show its runs, not keep them. Raises
    `SourceError` for a source that cannot be read."""
    kept = Kept(lambda _: "", "", lambda _: None)
    try:
        tally = show_runs(source, kept, drawn, parts=1,
                          sections=(*SECTIONS, partial(UsageSection, buckets)))
    except Exception as error:  # a file that cannot be read, an S3 read that broke off
        raise read_failure(source, error) from None
    return SourceRuns(tally, kept.runs, [series for _, series in sorted(kept.series, key=lambda each: each[0])])
