"""`orca metrics` of several sources (a directory or an `s3://` prefix of a run's instances, several files): a fleet
(docs/metrics.md, "A fleet"; docs/behaviour.md §11.4). Its table, `--json` object and chart, from every run's summary
and usage; the sources read through an executor: the local processes, or a Dask cluster's workers."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from functools import partial

from orca.sample.readback.fleet.records import Fleet
from orca.sample.readback.fleet.table import Run, fleet
from orca.sample.readback.gather.series import Series
from orca.sample.readback.shell.cli.drawn import chart_said
from orca.sample.readback.shell.cluster import ClusterError
from orca.sample.readback.shell.fleet_read import read_fleet_source
from orca.sample.readback.shell.many import Outcome, Read, read_each
from orca.sample.readback.shell.progress import Progress
from orca.sample.readback.shell.sources import Source, SourceError, Tally
from orca.sample.readback.summary.text import block_text, total_text
from orca.sample.readback.words import printable

FLEET_CHART_RUNS = 5
"""A chart of more runs than this is the fleet's (a row per run), not the runs overlaid."""


def fleet_main(found: list[Source], options: argparse.Namespace, drawn: int, unread: int,
               say: Callable[[str], None], tell: Callable[[Source, Tally, bool], None],
               scheduler: str | None = None) -> int:
    """The fleet of `found`, printed as `options` ask, and drawn; the exit status (`unread`: directories under them
    that could not be listed). Read on the cluster of `scheduler` when one is named. `say` tells a message; `tell`
    what was passed over in a source."""
    plot = options.plot is not None
    drawn = drawn if plot and len(found) <= FLEET_CHART_RUNS else 0
    read = partial(read_fleet_source, drawn=drawn, buckets=plot)
    try:
        outcomes = _read(found, read, scheduler)
    except ClusterError as error:
        say(f"orca metrics: {printable(str(error))}")
        return 1
    runs: list[Run] = []
    empty: list[tuple[str, str]] = []
    series: list[Series] = []
    for source, outcome in zip(found, outcomes, strict=True):
        if isinstance(outcome, SourceError):
            say(f"orca metrics: {printable(str(outcome))}")
            empty.append((source.name, "could not be read"))
            unread += 1
            continue
        tell(source, outcome.tally, bool(outcome.runs))
        if not outcome.runs:
            empty.append((source.name, "no sample line"))
        runs += outcome.runs
        series += outcome.series
    if not runs:
        return 1
    the_fleet = fleet(runs, empty, options.sort)
    _print(fleet_output(the_fleet, options))
    drew = chart_said(partial(_draw, the_fleet, series[:drawn], options.plot), options.plot, say) if plot else 0
    return 1 if unread or drew else 0


def _read(found: list[Source], read: Read, scheduler: str | None) -> list[Outcome]:
    """Each source's outcome, read here and on the local executor, or on the cluster of `scheduler`; its progress
    shown meanwhile at a terminal."""
    if scheduler is None:
        progress = Progress.on_standard_error(len(found))
        try:
            return read_each(found, read, progress)
        finally:
            progress.end()
    from orca.sample.readback.shell.cluster import connected

    with connected(scheduler) as cluster:
        progress = Progress.on_standard_error(
            len(found), f"dashboard {cluster.dashboard}" if cluster.dashboard else f"on {scheduler}")
        try:
            return read_each(found, read, progress, cluster.executor, cluster.threads)
        finally:
            progress.end()


def fleet_output(the_fleet: Fleet, options: argparse.Namespace) -> str:
    """The fleet as `options` ask: its `--json` object, or its table (with `--each`, every run's block after it)."""
    return _json(the_fleet) if options.json else _text(the_fleet, options.each)


def _text(the_fleet: Fleet, each: bool) -> str:
    """The fleet's table, and with `each` every run's block after it, then the `total:` line."""
    from orca.sample.readback.fleet.text import fleet_text

    text = fleet_text(the_fleet)
    summaries = [row.summary for row in the_fleet.rows if row.summary is not None]
    if each and summaries:
        begin = min(summary.last_t - summary.duration for summary in summaries)
        text += "".join(f"\n{block_text(summary)}" for summary in summaries) + "\n" + total_text(
            len(summaries), sum(summary.lines for summary in summaries), begin,
            max(summary.last_t for summary in summaries))
    return text


def _json(the_fleet: Fleet) -> str:
    from orca.sample.readback.fleet.as_json import fleet_json  # here: a fleet printed as text does without it

    return fleet_json(the_fleet)


def _draw(the_fleet: Fleet, series: list[Series], path: str) -> None:
    """The fleet's chart to `path` when it has more than `FLEET_CHART_RUNS` runs, else its runs overlaid."""
    if the_fleet.totals.runs > FLEET_CHART_RUNS or not series:
        from orca.sample.readback.shell.fleet_plot import draw_fleet

        draw_fleet(the_fleet, path)
        return
    from orca.sample.readback.shell.plot import draw

    draw(series, path, the_fleet.totals.runs)


def _print(text: str) -> None:
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write(text)
        sys.stdout.flush()
