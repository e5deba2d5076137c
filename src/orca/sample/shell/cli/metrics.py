"""`orca metrics LOCATION... [--json] [--plot FILE]`: what a run did, per instance, from its lines (README, "Looking
at a run")."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from orca.sample.compute.report.hosts import fold_hosts
from orca.sample.compute.report.summary import ContainerSummary, InstanceSummary, TrafficSummary
from orca.sample.line_format import Sample
from orca.sample.shell.cli.flags import Help as _Help
from orca.sample.shell.cli.flags import Malformed as _Malformed
from orca.sample.shell.cli.flags import Parser as _Parser
from orca.sample.shell.readback.parts import fold_source
from orca.sample.shell.readback.sources import Source, SourceError, Tally, decoded_batches, sources

if TYPE_CHECKING:  # the chart's modules are loaded by --plot only
    from orca.sample.compute.report.series import Series, SeriesFold

USAGE = "orca metrics LOCATION... [--json] [--plot FILE.png|.svg|.pdf]"
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def _parser() -> _Parser:
    parser = _Parser(
        prog="orca metrics",
        usage=USAGE,
        description="What a run did, per instance, from the lines of `orca sample`.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "locations",
        nargs="+",
        metavar="LOCATION",
        help="a file, a directory (every *.jsonl under it), - (standard input), s3://BUCKET/KEY or s3://BUCKET/PREFIX/",
    )
    parser.add_argument("--json", action="store_true", help="the summaries as JSON, one object per instance")
    parser.add_argument("--plot", metavar="FILE", help="draw the run over time to FILE (.png, .svg or .pdf)")
    return parser


def _say(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(message, file=sys.stderr, flush=True)


def metrics_main(args: list[str]) -> int:
    """`orca metrics ARGS`: the exit status (0, 1 for a location or a file that cannot be read, 2 for a malformed
    command line)."""
    try:
        options = _parser().parse_args(args)
        if options.plot is not None and not options.plot.lower().endswith(PLOT_SUFFIXES):
            raise _Malformed(f"--plot: the file must end with .png, .svg or .pdf: {options.plot!r}")
    except _Help:  # argparse's help action has printed it
        return 0
    except _Malformed as malformed:
        _say(f"orca metrics: {' '.join(str(malformed).split())}\nusage: {USAGE}")
        return 2
    if options.plot is not None:
        from orca.sample.shell.readback.plot import PLOT_EXTRA, plotting_available

        if not plotting_available():
            _say(f"orca metrics: --plot needs matplotlib: pip install 'orca-sample[{PLOT_EXTRA}]'")
            return 1
    try:
        found = [source for location in options.locations for source in sources(location)]
        read = [_read(source, with_series=options.plot is not None) for source in found]
    except SourceError as error:
        _say(f"orca metrics: {error}")
        return 1
    summaries = [summary for per_host, _, _ in read for summary in per_host]
    for (per_host, tally, _), source in zip(read, found, strict=True):
        if tally.skipped:
            reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(tally.reasons.items()))
            _say(f"orca metrics: {source.name}: {tally.skipped} line(s) skipped ({reasons})")
        if not per_host:
            _say(f"orca metrics: {source.name}: no sample lines")
    if not summaries:
        return 1
    _print(_json(summaries) if options.json else _text(summaries))
    if options.plot is not None:
        from orca.sample.shell.readback.plot import draw

        try:
            draw([series for _, _, per_host in read for series in per_host if series.t], options.plot)
        except OSError as error:
            _say(f"orca metrics: {options.plot}: {error.strerror or error}")
            return 1
        _say(f"orca metrics: drew {options.plot}")
    return 0


def _read(source: Source, with_series: bool) -> tuple[list[InstanceSummary], Tally, list[Series]]:
    """One pass over a source: its summaries and the series to draw when asked (one of each per host), and what was
    passed over. A large file is read by several processes at once, unless there are series to draw."""
    series: dict[str, SeriesFold] = {}
    try:
        with _no_collector():
            if with_series:
                tally = Tally()
                folds = fold_hosts(_also(decoded_batches(source, tally), series))
            else:
                folds, tally = fold_source(source)
            summaries = folds.summaries(source.name)
    except OSError as error:
        raise SourceError(f"{source.name}: {error.strerror or error}") from None
    except Exception as error:  # an S3 read that broke off, a decoding error of the transport
        raise SourceError(f"{source.name}: {type(error).__name__}: {error}") from None
    named = {host: source.name if len(series) == 1 else f"{source.name} ({host})" for host in series}
    return summaries, tally, [fold.series(named[host]) for host, fold in series.items()]


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


def _also(batches: Iterator[list[Sample]], series: dict[str, SeriesFold]) -> Iterator[list[Sample]]:
    """`batches`, each line also added to its host's series."""
    for batch in batches:
        for line in batch:
            fold = series.get(line.host)
            if fold is None:
                from orca.sample.compute.report.series import SeriesFold

                fold = series[line.host] = SeriesFold()
            fold.add(line)
        yield batch


def _print(text: str) -> None:
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write(text)
        sys.stdout.flush()


PLACES = {"first_t": 3, "last_t": 3, "duration": 3, "median_dt": 3, "self_cpu_seconds": 2, "overhead_percent": 2}
"""Decimals of the JSON summary's numbers that are not percentages: times as the lines carry them (milliseconds),
the sampler's CPU as `self_cpu` carries it, its overhead as the text prints it. Every other number with a fraction
is a percentage, one decimal like the lines'; byte counts are whole."""


def rounded(value: object, key: str = "") -> object:
    """A summary's `asdict` with each number at the precision of the lines (see `PLACES`).

    >>> rounded({"cpu": {"mean": 6.039999999999999}, "first_t": 1796032568.5170002, "mem": 5, "p": [12.0]})
    {'cpu': {'mean': 6.0}, 'first_t': 1796032568.517, 'mem': 5, 'p': [12.0]}
    """
    if isinstance(value, float):
        return round(value, PLACES.get(key, 1))
    if isinstance(value, dict):
        return {name: rounded(item, name) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item, key) for item in value]
    return value


def _json(summaries: list[InstanceSummary]) -> str:
    documents = [rounded({**asdict(summary), "duration": summary.duration}) for summary in summaries]
    import orjson  # here: a summary printed as text does without it

    return "".join(orjson.dumps(document).decode() + "\n" for document in documents)


def humanised(size: float) -> str:
    """Bytes in binary units, 3 significant figures or more.

    >>> [humanised(n) for n in (0, 1023, 1536, 5 * 2**20, 3.25 * 2**30, 2**50)]
    ['0 B', '1023 B', '1.50 KiB', '5.00 MiB', '3.25 GiB', '1024 TiB']
    """
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.0f} TiB" if abs(size) >= 100 else f"{size:.2f} TiB"


def utc(t: float) -> str:
    """Unix seconds as UTC ISO 8601, to the second.

    >>> utc(1796016198.738)
    '2026-11-30T05:23:18Z'
    """
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def duration(seconds: float) -> str:
    """`1h 02m 05s`, `3m 20s`, `12.5 s`.

    >>> [duration(s) for s in (12.46, 200, 3725, 90061)]
    ['12.5 s', '3m 20s', '1h 02m 05s', '25h 01m 01s']
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _traffic(traffic: TrafficSummary, first: str, second: str) -> str:
    return (
        f"{first} {humanised(traffic.first_total)} (peak {humanised(traffic.first_peak)}/s)  "
        f"{second} {humanised(traffic.second_total)} (peak {humanised(traffic.second_peak)}/s)"
    )


def _block(summary: InstanceSummary) -> list[str]:
    cores = "" if summary.cores is None else f", {summary.cores} cores"
    rows = [f"{summary.name}  (host {summary.host}{cores})"]
    rows.append(f"  time      {utc(summary.first_t)} to {utc(summary.last_t)}  ({duration(summary.duration)})")
    gaps = f"{summary.gaps} gap{'' if summary.gaps == 1 else 's'}"
    rows.append(f"  lines     {summary.lines:,}, {gaps} (median interval {summary.median_dt:g} s)")
    if summary.cpu is not None:
        cpu = summary.cpu
        rows.append(
            f"  cpu       mean {_percent(cpu.mean)}  p95 {_percent(cpu.p95)}  max {_percent(cpu.max)}"
            f"  busiest core p95 {_percent(cpu.busiest_p95)}"
        )
    if summary.memory is not None:
        memory = summary.memory
        rows.append(
            f"  memory    used peak {humanised(memory.used_peak)} ({_percent(memory.used_peak_percent)} of "
            f"{humanised(memory.total)})  swap peak {humanised(memory.swap_peak)}"
            f"  run's rss peak {humanised(memory.rss_peak)}"
        )
    if summary.disk is not None:
        rows.append(f"  disk      fullest {summary.disk.path} at {_percent(summary.disk.peak_percent)}")
    if summary.io is not None:
        rows.append(f"  io        {_traffic(summary.io, 'read', 'write')}")
    if summary.net is not None:
        rows.append(f"  net       {_traffic(summary.net, 'in', 'out')}")
    if summary.pressure is not None:
        pressure = summary.pressure
        rows.append(
            f"  pressure  cpu {_percent(pressure.cpu)}  memory {_percent(pressure.memory)}"
            f"  io {_percent(pressure.io)}  (mean share of time stalled)"
        )
    for container in summary.containers:
        rows.append(f"  container {_container(container)}")
    overhead = "" if summary.overhead_percent is None else f", {summary.overhead_percent:.2f}% of one core"
    rows.append(f"  sampler   {summary.self_cpu_seconds:.2f} s of CPU{overhead}")
    return rows


def _container(container: ContainerSummary) -> str:
    limit = "" if container.mem_max is None else f" of {humanised(container.mem_max)} limit"
    parts = [f"{container.name}: mem peak {humanised(container.mem_peak)}{limit}"]
    if container.throttled_mean is not None:
        parts.append(f"throttled mean {_percent(container.throttled_mean)}")
    if container.pids_peak is not None:
        parts.append(f"pids peak {container.pids_peak}")
    if container.oom_kills:
        parts.append(f"oom kills {container.oom_kills}")
    return "  ".join(parts)


def _text(summaries: list[InstanceSummary]) -> str:
    rows: list[str] = []
    for summary in summaries:
        rows += [*_block(summary), ""]
    if len(summaries) > 1:
        first = min(summary.first_t for summary in summaries)
        last = max(summary.last_t for summary in summaries)
        lines = sum(summary.lines for summary in summaries)
        span = f"{utc(first)} to {utc(last)} ({duration(last - first)})"
        rows.append(f"total: {len(summaries)} instances, {lines:,} lines, {span}")
    else:
        rows.pop()
    return "\n".join(rows) + "\n"
