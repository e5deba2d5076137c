"""`orca metrics LOCATION... [--json] [--plot FILE]`: what a run did, per instance, from its lines (docs/metrics.md)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from orca.sample.readback.fleet.records import SORT_COLUMNS
from orca.sample.readback.fleet.usage import Usage, UsageAndSeries
from orca.sample.readback.shell.many import read_each, usages_of
from orca.sample.readback.shell.parts import fold_source, fold_source_with
from orca.sample.readback.shell.sources import (
    STREAM_GIVE_UP_BYTES,
    Source,
    SourceError,
    Tally,
    sources,
)
from orca.sample.readback.summary.records import InstanceSummary
from orca.sample.readback.summary.text import printable, summary_text
from orca.sample.shell.cli.flags import Help as _Help
from orca.sample.shell.cli.flags import Malformed as _Malformed
from orca.sample.shell.cli.flags import Parser as _Parser

if TYPE_CHECKING:  # the chart's modules are loaded by --plot only
    from orca.sample.readback.chart.series import Series
    from orca.sample.readback.fleet.records import Fleet

USAGE = "orca metrics LOCATION... [--json] [--plot FILE.png|.svg|.pdf] [--sort COLUMN] [--each]"
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
FLEET_CHART_RUNS = 5
"""A chart of more runs than this is the fleet's (one row per run), not the runs overlaid."""
EXAMPLE = """\
examples:
  orca metrics run.jsonl                    the summary of each run in the file
  orca metrics run.jsonl --json             the same as JSON
  orca metrics metrics/ --plot fleet.png    every *.jsonl under metrics/: a fleet's table, and its chart
                                            (--plot needs matplotlib: pip install 'orca-sample[plot]')"""


def _parser() -> _Parser:
    parser = _Parser(
        prog="orca metrics",
        usage=USAGE,
        description="What a run did, from the lines of `orca sample`.\nOf several runs, the fleet: a row each, the "
        "totals, and who stands out.",
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
    parser.add_argument("--json", action="store_true", help="the summary as JSON (a fleet's: one object)")
    parser.add_argument("--plot", metavar="FILE",
                        help="draw the run (of more than 5 runs, the fleet) over time to FILE (.png, .svg or .pdf)")
    parser.add_argument("--sort", choices=SORT_COLUMNS, default="name", metavar="COLUMN",
                        help=f"the order of a fleet's rows: {', '.join(SORT_COLUMNS)} (name and start ascending, the "
                        "rest largest first; default: name)")
    parser.add_argument("--each", action="store_true", help="for a fleet, each run's summary too, after the table")
    return parser


def _say(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(message, file=sys.stderr, flush=True)


def metrics_main(args: list[str]) -> int:
    """`orca metrics ARGS`: the exit status (0; 1 for a location or a file that cannot be read, or no sample line; 2
    for a malformed command line)."""
    try:
        options = _parser().parsed(args)
        if options.plot is not None and not options.plot.lower().endswith(PLOT_SUFFIXES):
            raise _Malformed(f"--plot: the file must end with .png, .svg or .pdf: {options.plot!r}")
    except _Help:  # argparse's help action has printed it
        return 0
    except _Malformed as malformed:
        _say(f"orca metrics: {' '.join(str(malformed).split())}\nusage: {USAGE}")
        return 2
    if options.plot is not None:
        from orca.sample.readback.shell.plot import PLOT_EXTRA, plotting_available

        if not plotting_available():
            _say(f"orca metrics: --plot needs matplotlib: pip install 'orca-sample[{PLOT_EXTRA}]'")
            return 1
    try:
        found = [source for location in options.locations for source in sources(location)]
    except SourceError as error:
        _say(f"orca metrics: {printable(str(error))}")
        return 1
    plot = options.plot is not None
    with_series = plot and len(found) <= FLEET_CHART_RUNS  # more sources than that: the fleet's chart, whatever
    read, unread = _read_all(found, with_series=with_series, buckets=plot)
    summaries = [summary for _, (per_host, _, _, _) in read for summary in per_host]
    if not summaries:
        return 1
    the_fleet = None
    if len(summaries) > 1:
        the_fleet = _fleet(read, unread, options.sort)
        text = _fleet_json(the_fleet) if options.json else _fleet_text(the_fleet)
        _print(text + ("\n" + summary_text(summaries) if options.each and not options.json else ""))
    else:
        _print(_json(summaries) if options.json else summary_text(summaries))
    if options.plot is not None:
        try:
            fleet_drawn = len(summaries) > FLEET_CHART_RUNS or not with_series
            _draw(read, (the_fleet or _fleet(read, unread, options.sort)) if fleet_drawn else None, options.plot)
        except OSError as error:
            _say(f"orca metrics: {printable(options.plot)}: {error.strerror or error}")
            return 1
        _say(f"orca metrics: drew {printable(options.plot)}")
    return 1 if unread else 0


def _draw(read: list[tuple[Source, Read]], the_fleet: Fleet | None, path: str) -> None:
    """The runs' chart to `path`: the fleet's when there is one of more than a few runs, else the runs overlaid."""
    if the_fleet is not None:
        from orca.sample.readback.shell.fleet_plot import draw_fleet

        draw_fleet(the_fleet, path)
        return
    from orca.sample.readback.shell.plot import draw

    draw([series for _, (_, _, per_host, _) in read for series in per_host if series.t], path)


def _read_all(found: list[Source], with_series: bool, buckets: bool) -> tuple[list[tuple[Source, Read]], list[str]]:
    """Each source read, and what was passed over in it said; a source that cannot be read is said and the others
    are still read. Also the names of those that could not be read.

    The runs' usage is for a fleet: folded in the same pass when there are several sources, or one that cannot be
    read twice; a single file is read again for it only when it turned out to hold several runs (one run's summary,
    the usual case, costs nothing more)."""
    read: list[tuple[Source, Read]] = []
    unread: list[str] = []
    usage = len(found) > 1 or any(source.path is None for source in found)
    outcomes = read_each(found, partial(_read, with_series=with_series, buckets=buckets, usage=usage))
    if not usage and isinstance(outcomes[0], tuple) and len(outcomes[0][0]) > 1:
        summaries, tally, drawn, _ = outcomes[0]
        outcomes = [(summaries, tally, drawn, usages_of(found[0], buckets))]
    for source, outcome in zip(found, outcomes, strict=True):
        if isinstance(outcome, SourceError):
            _say(f"orca metrics: {printable(str(outcome))}")
            unread.append(source.name)
            continue
        per_host, tally, _, _ = outcome
        read.append((source, outcome))
        name = printable(source.name)
        if tally.skipped:
            reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(tally.reasons.items()))
            _say(f"orca metrics: {name}: {tally.skipped} line(s) skipped ({reasons})")
        if tally.given_up:
            _say(f"orca metrics: {name}: read no further: {STREAM_GIVE_UP_BYTES >> 30} GiB without a newline")
        if not per_host:
            _say(f"orca metrics: {name}: no sample lines")
    return read, unread


Read = tuple[list[InstanceSummary], Tally, list["Series"], dict[tuple[str, float | None], Usage]]
"""A source's summaries, what was passed over in it, the series to draw (one summary per host, one series per
run), and each run's usage (by host and start)."""


def _read(source: Source, parts: int | None, with_series: bool, buckets: bool, usage: bool) -> Read:
    """One pass over a source: its summaries, each run's usage and the series to draw when asked, and what was
    passed over. A large file is read by several processes at once unless `parts` says otherwise."""
    drawn: list[Series] = []
    usages: dict[tuple[str, float | None], Usage] = {}
    try:
        with _no_collector():
            if not (usage or with_series):
                folds, tally = fold_source(source, parts)
            else:
                from orca.sample.readback.shell.plot import load_plotting

                folds, tally, along = fold_source_with(source, partial(UsageAndSeries, usage, buckets, with_series),
                                                       parts, load_plotting if with_series else None)
                assert isinstance(along, UsageAndSeries)
                if along.series is not None:
                    drawn = along.series.series(source.name)
                if along.usage is not None:
                    usages = along.usage.usages()
            summaries = folds.summaries(source.name)
    except OSError as error:
        raise SourceError(f"{source.name}: {error.strerror or error}") from None
    except Exception as error:  # an S3 read that broke off, a decoding error of the transport
        raise SourceError(f"{source.name}: {type(error).__name__}: {error}") from None
    return summaries, tally, drawn, usages


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


def _print(text: str) -> None:
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write(text)
        sys.stdout.flush()


def _fleet(read: list[tuple[Source, Read]], unread: list[str], sort: str) -> Fleet:
    """The fleet of the runs read; the sources without a sample line (or that could not be read) among its rows."""
    from orca.sample.readback.fleet.table import Run, fleet  # here: one run's summary does without it

    runs = [Run(summary, usages.get((summary.host, summary.start))) for _, (per_host, _, _, usages) in read
            for summary in per_host]
    empty = [(source.name, "no sample line") for source, (per_host, _, _, _) in read if not per_host]
    return fleet(runs, empty + [(name, "could not be read") for name in unread], sort)


def _fleet_text(the_fleet: Fleet) -> str:
    from orca.sample.readback.fleet.text import fleet_text

    return fleet_text(the_fleet)


def _fleet_json(the_fleet: Fleet) -> str:
    from orca.sample.readback.fleet.as_json import fleet_json  # here: a fleet printed as text does without it

    return fleet_json(the_fleet)


def _json(summaries: list[InstanceSummary]) -> str:
    from orca.sample.readback.summary.as_json import summary_json  # here: a summary printed as text does without it

    return summary_json(summaries)
