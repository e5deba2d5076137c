"""The words of a chart: its title (what ran, when it started, for how long, how it ended; or how many runs), each
run's label, and the moment each run's elapsed time counts from."""

from __future__ import annotations

import math
from collections.abc import Sequence

from orca.sample.readback.cells import run_labels
from orca.sample.readback.gather.series import Series
from orca.sample.readback.words import command, cut_start, duration, exit_status, printable, utc

COMMAND_CHARS = 90
"""A command longer than this is cut, with `…`."""
LABEL_CHARS = 40
"""A run's label longer than this is cut at its start, with `…`: its end (the file's name, the start) tells runs
apart."""


def origins(series: Sequence[Series]) -> list[float]:
    """Where each run's elapsed time counts from. Runs that ran together (each starting before the ones before it
    had all ended: a fleet's instances) share one clock, from the first start; runs one after another (two runs
    written to one file) are each drawn from their own start, one over the other.

    >>> def run(start, end):
    ...     return Series("x", (start, end), {}, start=start, first=start, last=end)
    >>> origins([run(100, 200), run(150, 300)]), origins([run(100, 200), run(500, 600)])
    ([100, 100], [100, 500])
    """
    if not series:
        return []
    spans = sorted((one.origin, one.last) for one in series)
    reach = spans[0][1]
    together = True
    for begin, end in spans[1:]:
        together = together and begin <= reach
        reach = max(reach, end)
    return [spans[0][0]] * len(series) if together else [one.origin for one in series]


def run_seconds(one: Series, origin: float) -> float:
    """How long a run took: its command's wall time when the lines record it, else its span as the summary gives
    it (from its start to its last line), else from `origin` to its last line."""
    if one.exit is not None and one.exit.wall is not None:
        return one.exit.wall
    return one.span if math.isfinite(one.span) else one.last - origin


def labels(series: Sequence[Series]) -> list[str]:
    """Each run's label as the fleet's table says it (`run_labels`), cut to `LABEL_CHARS`.

    >>> def run(name, start, host="h"):
    ...     return Series(name, (), {}, host=host, start=start, first=start, last=start)
    >>> labels([run("m/a.jsonl", 0), run("n/b.jsonl", 0)]), labels([run("x/a.jsonl", 0), run("y/a.jsonl", 0)])
    (['a', 'b'], ['x/a', 'y/a'])
    >>> labels([run("/tmp/a.jsonl", 1796016198.7), run("/tmp/a.jsonl", 1796019798.7)])
    ['a 05:23:18', 'a 06:23:18']
    >>> labels([run("f.jsonl", 0, "db"), run("f.jsonl", 0, "web")])
    ['f (db)', 'f (web)']
    """
    chosen = run_labels([(one.name, one.host, one.origin) for one in series])
    return [cut_start(printable(label), LABEL_CHARS) for label in chosen]


def title(series: Sequence[Series], runs: int | None = None) -> str:
    """The chart's title, two lines: what ran (the command, else the file; or how many runs), then when it started
    (UTC), for how long, how it ended, and how many lines a point stands for when the run was thinned.

    >>> from orca.sample.line_format import CommandExit
    >>> one = Series("run.jsonl", (), {}, lines_per_point=4, start=1796016198.7, first=1796016198.9,
    ...              last=1796016230.0, command=("make", "-j4"), exit=CommandExit(code=0, wall=31.2))
    >>> print(title([one]))
    make -j4
    started 2026-11-30T05:23:18Z · 31.2 s · exit 0 · each point stands for up to 4 lines
    """
    if not series:
        return ""
    starts = origins(series)
    total = len(series) if runs is None else runs
    if total == 1:
        one = series[0]
        what = command(one.command, one.argc, COMMAND_CHARS) if one.command else printable(one.name)
        facts = [f"started {utc(starts[0])}", duration(run_seconds(one, starts[0])),
                 "" if one.exit is None else exit_status(one.exit)]
    else:
        names = {printable(one.name) for one in series}
        what = f"{total:,} runs" + (f" in {cut_start(names.pop(), LABEL_CHARS)}" if len(names) == 1 else "")
        shared = len(set(starts)) == 1
        facts = [f"started {utc(starts[0])}" if shared else "each from its own start",
                 duration(max(one.last for one in series) - starts[0]) if shared else ""]
    thinned = max(one.lines_per_point for one in series)
    if thinned > 1:
        facts.append(f"each point stands for up to {thinned:,} lines")
    return f"{what}\n{' · '.join(fact for fact in facts if fact)}"


def elapsed_span(series: Sequence[Series]) -> float:
    """The longest elapsed time any run is drawn to."""
    spans = [one.last - origin for one, origin in zip(series, origins(series), strict=True)]
    return max((span for span in spans if math.isfinite(span)), default=0.0)
