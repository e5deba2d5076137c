"""`orca metrics LOCATION... [--json] [--plot FILE]`: what each run did, from its lines (docs/metrics.md). Each run's
summary is printed as soon as its lines end, so memory does not grow with the number of runs."""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import Callable, Iterator
from functools import partial

from orca.sample.readback.fleet.columns import SORT_COLUMNS
from orca.sample.readback.fleet.usage import UsageSection
from orca.sample.readback.gather.fold import SECTIONS
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.gather.series import Series
from orca.sample.readback.shell.cli.drawn import chart_said
from orca.sample.readback.shell.cluster import ENVIRONMENT, cluster_installed, scheduler_named
from orca.sample.readback.shell.parts import one_run_at_ends, show_runs
from orca.sample.readback.shell.run_rows import RowsKept, nothing, summary_document
from orca.sample.readback.shell.sources import (
    STREAM_GIVE_UP_BYTES,
    Source,
    SourceError,
    Tally,
    read_failure,
    sources,
)
from orca.sample.readback.summary.text import block_text
from orca.sample.readback.words import count, printable
from orca.sample.shared.hints import extra_install, metrics_command, plot_install
from orca.sample.shared.parser import Help as _Help
from orca.sample.shared.parser import Malformed as _Malformed
from orca.sample.shared.parser import Parser as _Parser
from orca.sample.shared.printed import Unprinted, printed

USAGE = "{orca} LOCATION... [--json] [--plot FILE.png|.svg|.pdf] [--sort COLUMN] [--each]\n" \
        "            [--scheduler ADDRESS]"
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
DRAWN_RUNS = 6
"""A chart draws at most this many runs (the first ones): the rest are counted in its notes."""
EXAMPLE = """\
examples:
  {orca} metrics run.jsonl                    the summary of each run in the file
  {orca} metrics run.jsonl --json             the same as JSON, one object per run
  {orca} metrics metrics/ --plot fleet.png    every *.jsonl under metrics/: a fleet's table, and its chart"""
"""`{orca}` is `orca` as this person can type it (`parser.Parser.format_help`)."""


def _parser(orca: str) -> _Parser:
    parser = _Parser(
        prog=orca,
        usage=USAGE.format(orca=orca),
        description="What each run did, from the lines of `orca sample`.\nOf several files or objects, the fleet: a "
        "row per run, the totals, and who stands out.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "locations",
        nargs="+",
        metavar="LOCATION",
        help="a file, a directory (every *.jsonl under it), - (standard input), s3://BUCKET/KEY or s3://BUCKET/PREFIX/",
    )
    parser.add_argument("--json", action="store_true", help="the summaries as JSON, one object per run (a fleet: one)")
    parser.add_argument("--plot", metavar="FILE", help="draw the run over time to FILE (.png, .svg or .pdf; needs "
                        "matplotlib)")
    parser.add_argument("--sort", choices=SORT_COLUMNS, default="name", metavar="COLUMN",
                        help=f"the order of a fleet's rows: {', '.join(SORT_COLUMNS)} (name and start ascending, the "
                        "rest largest first; default: name)")
    parser.add_argument("--each", action="store_true", help="for a fleet, each run's summary too, after the table")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="read a fleet on the Dask cluster of this scheduler "
                        f"(default: {ENVIRONMENT}, else Dask's configuration; '': here); needs the cluster extra")
    return parser


def _say(message: str) -> None:
    _flush()  # what was printed before comes before the message
    with contextlib.suppress(OSError, ValueError):
        print(message, file=sys.stderr, flush=True)


def metrics_main(args: list[str]) -> int:
    """`orca metrics ARGS`: the exit status (0; 1 for a location, a directory or a file that cannot be read, no
    sample line, standard output that cannot be written, or a cluster that cannot read the fleet; 2 for a malformed
    command line, or a scheduler named where `distributed` is not installed; 130 for Ctrl-C)."""
    orca = metrics_command()
    try:
        options = _parser(orca).parsed(args)
        if options.plot is not None and not options.plot.lower().endswith(PLOT_SUFFIXES):
            raise _Malformed(f"--plot: the file must end with .png, .svg or .pdf: {options.plot!r}")
    except _Help:  # argparse's help action has printed it
        return 0
    except _Malformed as malformed:
        _say(f"orca metrics: {' '.join(str(malformed).split())}\nusage: {USAGE.format(orca=orca)}")
        return 2
    if _cluster_missing(scheduler_named(options.scheduler, configured=False)):
        return 2
    if options.plot is not None:
        from orca.sample.readback.shell.plot import plotting_available

        if not plotting_available():
            _say(f"orca metrics: --plot needs matplotlib: {plot_install()}")
            return 1
    try:
        return _read_and_show(options)
    except KeyboardInterrupt:  # Ctrl-C: what was read is shown (a stream's runs so far), no traceback
        _flush()
        return 130
    except Unprinted as error:
        _say(f"orca metrics: cannot write to standard output: {error}")
        return 1


def _read_and_show(options: argparse.Namespace) -> int:
    found: list[Source] = []
    unreadable: list[str] = []

    def cannot_read(message: str) -> None:
        _say(f"orca metrics: {printable(message)}")
        unreadable.append(message)

    for location in options.locations:
        try:
            found += sources(location, cannot_read)
        except SourceError as error:
            _say(f"orca metrics: {printable(str(error))}")
            return 1
    if len(found) > 1:  # a fleet: a directory or prefix of a run's instances, several files
        from orca.sample.readback.shell.cli.fleet import fleet_main

        named = scheduler_named(options.scheduler)  # Dask's configuration too: only a fleet is read on a cluster
        if _cluster_missing(named):
            return 2
        return fleet_main(found, options, DRAWN_RUNS, len(unreadable), _say, _tell,
                          None if named is None else named[0])
    kept = RowsKept(aside(options), lambda _: None)  # writes only in another process, of a part of a file
    try:
        unread = len(unreadable) + _show_all(found, kept, DRAWN_RUNS if options.plot is not None else 0)
    finally:  # Ctrl-C on a stream too: what was read is shown
        if len(kept.rows):
            for piece in runs_output(found[0].name if found else "", kept, options):
                printed(piece)
        kept.aside.close()
        printed(flush=True)
    if not len(kept.rows):
        return 1
    if options.plot is not None:
        status = _draw([series for _, series in sorted(kept.series, key=lambda each: each[0])], options.plot,
                       kept.totals.runs)
        if status:
            return status
    return 1 if unread else 0


def aside(options: argparse.Namespace) -> Callable[[InstanceSummary], str]:
    """What is written aside of each run for the output `options` ask: for `--json`, its summary's document (with
    `--each` too: the blocks are for a person, and each row holds its run's summary); for `--each`, its block."""
    return summary_document if options.json else block_text if options.each else nothing


def runs_output(name: str, kept: RowsKept, options: argparse.Namespace) -> Iterator[str]:
    """A source's runs as `options` ask: one run's block (or `--json` line); several runs, the table a fleet gets,
    one row each (with `--each`, each run's block after it), a piece at a time."""
    if len(kept.rows) == 1 and kept.first is not None:
        if options.json:
            from orca.sample.readback.summary.as_json import json_line  # here: a summary printed as text does without

            yield json_line(kept.first.summary)
        else:
            yield block_text(kept.first.summary)
        return
    from orca.sample.readback.fleet.table import Table
    from orca.sample.readback.shell.cli.fleet import table_output

    yield from table_output(Table(name, kept.rows, options.sort), kept.aside.__getitem__, kept.totals.lines, options)


def _cluster_missing(named: tuple[str, str] | None) -> bool:
    """Whether a scheduler is named where `distributed` is not installed, which is then said."""
    if named is None or cluster_installed():
        return False
    _say(f"orca metrics: {named[1]} names a Dask scheduler ({printable(named[0])}), which needs distributed: "
         f"{extra_install('cluster', 'distributed')}")
    return True


def _show_all(found: list[Source], shown: RowsKept, drawn: int) -> int:
    """Each source's runs shown, and what was passed over in it said; a source that cannot be read is said and the
    others are still read. How many could not be read."""
    unread = 0
    for source in found:
        before = shown.totals.runs
        try:
            tally = _read(source, shown, max(0, drawn - len(shown.series)))
        except SourceError as error:
            _say(f"orca metrics: {printable(str(error))}")
            unread += 1
            continue
        _tell(source, tally, shown.totals.runs > before)
    return unread


def _tell(source: Source, tally: Tally, any_run: bool) -> None:
    name = printable(source.name)
    if tally.skipped:
        reasons = ", ".join(f"{times} {reason}" for reason, times in sorted(tally.reasons.items()))
        _say(f"orca metrics: {name}: {count(tally.skipped, 'line')} skipped ({reasons})")
    if tally.given_up:
        _say(f"orca metrics: {name}: read no further: {STREAM_GIVE_UP_BYTES >> 30} GiB without a newline")
    if tally.shrank:
        _say(f"orca metrics: {name}: shrank from {tally.shrank[0]:,} to {tally.shrank[1]:,} bytes while it was read "
             "(truncated): what it held as it was read is shown")
    if not any_run:
        _say(f"orca metrics: {name}: no sample lines")


def _read(source: Source, shown: RowsKept, drawn: int) -> Tally:
    """One pass over a source, each run shown as it closes (the first `drawn` with their series). A large file is
    read by several processes at once."""
    meanwhile = None
    if drawn:
        from orca.sample.readback.shell.plot import load_plotting

        meanwhile = load_plotting
    # A file whose first and last lines are one run's most likely holds it alone: its block or `--json` line needs no
    # usage (what a table of several runs says of each), which would be a good share of the fold's time.
    alone = source.path is not None and not len(shown.rows) and one_run_at_ends(source.path)
    try:
        with _no_collector():
            tally = show_runs(source, shown, drawn, meanwhile=meanwhile,
                              sections=SECTIONS if alone else (*SECTIONS, UsageSection))
            if alone and shown.totals.runs > 1:  # other runs between its ends: read again for the table
                shown.clear()
                tally = show_runs(source, shown, drawn, sections=(*SECTIONS, UsageSection))
            return tally
    except Exception as error:  # a file that cannot be read, an S3 read that broke off
        raise read_failure(source, error) from None


def _draw(series: list[Series], path: str, runs: int) -> int:
    from orca.sample.readback.shell.plot import draw

    return chart_said(partial(draw, series, path, runs), path, _say)


@contextlib.contextmanager
def _no_collector() -> Iterator[None]:
    """The cycle collector paused: reading makes no reference cycles, only many short-lived records, and the
    collector's passes over them would be a large share of the time (memory stays flat: each batch is freed by
    reference counting)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _flush() -> None:
    """What was printed handed on, before a message or an early end: whether it could be is said by the next
    `printed`, or not at all (a message matters more)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stdout.flush()
