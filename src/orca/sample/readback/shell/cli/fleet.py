"""`orca metrics` of several sources (a directory or an `s3://` prefix of a run's instances, several files): a fleet
(docs/metrics.md, "A fleet"; docs/behaviour.md §11.4). Its table, `--json` object and chart, from every run's summary
and usage; the sources read through an executor: the local processes, or a Dask cluster's workers."""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TextIO

from orca.sample.readback.fleet.records import Run
from orca.sample.readback.fleet.table import Table, fleet_table
from orca.sample.readback.gather.series import Series
from orca.sample.readback.shell.cli.drawn import chart_said
from orca.sample.readback.shell.cluster import ClusterError
from orca.sample.readback.shell.fleet_read import read_fleet_source
from orca.sample.readback.shell.many import Outcome, Read, read_each
from orca.sample.readback.shell.progress import Progress
from orca.sample.readback.shell.run_rows import file_or_memory
from orca.sample.readback.shell.sources import Source, SourceError, Tally
from orca.sample.readback.summary.text import block_text
from orca.sample.readback.words import printable
from orca.sample.shared.printed import printed

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
    table = fleet_table(runs, empty, options.sort)
    _print(fleet_output(table, runs, options))
    drew = chart_said(partial(_draw, table, runs, series[:drawn], options.plot), options.plot, say) if plot else 0
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


def fleet_output(table: Table, runs: Sequence[Run], options: argparse.Namespace) -> Iterator[str]:
    """The fleet of `runs` (`table`) as `options` ask: its `--json` object, or its table (with `--each`, every run's
    block after it), a piece at a time."""
    if options.json:
        from orca.sample.readback.summary.as_json import document, encoded  # here: a table as text does without it

        return table_output(table, lambda index: encoded(document(runs[index].summary)), 0, options)
    return table_output(table, lambda index: block_text(runs[index].summary), sum(run.summary.lines for run in runs),
                        options)


def table_output(table: Table, aside: Callable[[int], str], lines: int, options: argparse.Namespace,
                 ) -> Iterator[str]:
    """A table (a fleet's, or of a source's runs) as `options` ask, a piece at a time: its `--json` object, each
    run's summary's document `aside(index)`; or its text, and with `--each` each run's block `aside(index)` after it
    and the `total:` line of their `lines`."""
    if options.json:
        from orca.sample.readback.fleet.as_json import table_json

        yield from table_json(table, aside)
        return

    yield from _table_text(table)
    if options.each:
        from orca.sample.readback.summary.text import total_text

        runs = len(table.rows)
        for index in table.order:
            if index < runs:
                yield "\n" + aside(index)
        totals = table.totals
        yield "\n" + total_text(totals.runs, lines, totals.first_start or 0.0, totals.last_end or 0.0)


def _table_text(table: Table) -> Iterator[str]:
    """`table_text` with its rows said into a temporary file; into memory where no temporary file can hold them (none
    can be made, the disk is full). Every row is said before the first piece is given, so nothing is given twice."""
    from orca.sample.readback.fleet.text import table_text

    def on_disk() -> TextIO:
        return tempfile.TemporaryFile("w+", encoding="utf-8", errors="surrogateescape", newline="\n")

    def begun(said: TextIO) -> tuple[str, Iterator[str]]:
        pieces = table_text(table, said)
        return next(pieces), pieces

    with contextlib.ExitStack() as stack:
        _, (first, pieces) = file_or_memory(stack, on_disk, lambda: io.StringIO(newline="\n"), begun)
        yield first
        yield from pieces


def _draw(table: Table, runs: Sequence[Run], series: list[Series], path: str) -> None:
    """The fleet's chart to `path` when it has more than `FLEET_CHART_RUNS` runs, else its runs overlaid."""
    if len(runs) > FLEET_CHART_RUNS or not series:
        from orca.sample.readback.shell.fleet_plot import draw_fleet

        draw_fleet(table, [run.usage for run in runs], path)
        return
    from orca.sample.readback.shell.plot import draw

    draw(series, path, len(runs))


def _print(pieces: Iterator[str]) -> None:
    for piece in pieces:
        printed(piece)
    printed(flush=True)
