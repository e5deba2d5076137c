"""A fleet's sources read (docs/metrics.md, "A fleet"): each source's runs, with their summaries and their usage,
kept rather than shown as they close (a fleet's table needs them all), and the series of the first runs drawn; what
an executor's process gives back (`many.py`) is this: folds, not lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import cast

from orca.sample.readback.fleet.records import Run
from orca.sample.readback.fleet.usage import USAGE, UsageSection
from orca.sample.readback.gather.fold import SECTIONS
from orca.sample.readback.gather.series import Series
from orca.sample.readback.runs import Run as FoldedRun
from orca.sample.readback.shell.parts import show_runs
from orca.sample.readback.shell.shown import Shown
from orca.sample.readback.shell.sources import Source, Tally, read_failure


@dataclass(slots=True)
class Kept(Shown):
    """Each run as it closes, kept: its summary and usage, and its series when drawn; nothing written. A source is
    read whole here (`read_fleet_source`), so no part of it is shown elsewhere."""

    runs: list[Run] = field(default_factory=list)

    def show(self, name: str, run: FoldedRun) -> None:
        if (summary := Shown.show(self, name, run)) is not None:
            self.runs.append(Run(summary, cast("UsageSection", run.fold.section(USAGE)).usage()))


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
    kept = Kept(lambda _: "", lambda _: None)
    try:
        tally = show_runs(source, kept, drawn, parts=1,
                          sections=(*SECTIONS, partial(UsageSection, buckets)))
    except Exception as error:  # a file that cannot be read, an S3 read that broke off
        raise read_failure(source, error) from None
    return SourceRuns(tally, kept.runs, [series for _, series in sorted(kept.series, key=lambda each: each[0])])
