"""The words of a chart: its title (what ran, when it started, for how long, how it ended), each run's label, and the
moment each run's elapsed time counts from."""

from __future__ import annotations

import math
from collections.abc import Sequence

from orca.sample.line_format import CommandExit
from orca.sample.readback.chart.series import Series
from orca.sample.readback.chart.ticks import duration_text
from orca.sample.readback.summary.text import printable, utc

COMMAND_CHARS = 90
"""A command longer than this is cut, with `…`."""
SIGNALS = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 8: "SIGFPE", 9: "SIGKILL",
           11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}
"""The signals whose numbers are the same on Linux, macOS and the BSDs (a line may be read on another system)."""


def origins(series: Sequence[Series]) -> list[float]:
    """Where each run's elapsed time counts from. Runs that ran together (each starting before the ones before it
    had all ended: a fleet's instances) share one clock, from the first start; runs one after another (two runs
    written to one file) are each drawn from their own start, one over the other.

    >>> from orca.sample.readback.chart.series import SeriesFold
    >>> def run(start, end):
    ...     return Series("x", (start, end), {}, {}, 1, start=start, first=start, last=end)
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


def command_text(command: Sequence[str], argc: int | None = None) -> str:
    """A command's argv as a shell would take it, its names escaped (`printable`), cut at `COMMAND_CHARS`.

    >>> command_text(["sh", "-c", "sleep 1; echo done"]), command_text(["make", "-j4"], argc=40)
    ("sh -c 'sleep 1; echo done'", 'make -j4 … (40 arguments)')
    """
    words = [_quoted(printable(word)) for word in command]
    text = " ".join(words)
    more = argc is not None and argc > len(command)
    if len(text) > COMMAND_CHARS:
        text = text[: COMMAND_CHARS - 1].rstrip() + "…"
    elif more:
        text += " …"
    return f"{text} ({argc} arguments)" if more else text


def _quoted(word: str) -> str:
    if word and all(character.isalnum() or character in "@%+=:,./-_" for character in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def exit_text(exit: CommandExit | None) -> str:
    """How a command ended, in a few words; "" when the lines do not say (a `--pid` run, or one still running).

    >>> exit_text(CommandExit(code=0, wall=3.0)), exit_text(CommandExit(signal=9)), exit_text(CommandExit(signal=64))
    ('exit 0', 'killed by SIGKILL', 'killed by signal 64')
    >>> exit_text(CommandExit(code=127, error="No such file or directory"))
    'could not start: No such file or directory (exit 127)'
    """
    if exit is None:
        return ""
    if exit.error is not None:
        return f"could not start: {printable(exit.error)}" + ("" if exit.code is None else f" (exit {exit.code})")
    if exit.signal is not None:
        return f"killed by {SIGNALS.get(exit.signal, f'signal {exit.signal}')}"
    return "" if exit.code is None else f"exit {exit.code}"


def duration(one: Series, origin: float) -> float:
    """How long a run took: its command's wall time when the lines record it, else from `origin` to its last line."""
    if one.exit is not None and one.exit.wall is not None:
        return one.exit.wall
    return one.last - origin


def labels(series: Sequence[Series]) -> list[str]:
    """Each run's label in the legends: the file's name without its directory when that tells the files apart, and
    the run's start when one file holds several runs.

    >>> def run(name, start):
    ...     return Series(name, (), {}, {}, 1, start=start, first=start, last=start)
    >>> labels([run("m/a.jsonl", 0), run("n/b.jsonl", 0)]), labels([run("x/a.jsonl", 0), run("y/a.jsonl", 0)])
    (['a.jsonl', 'b.jsonl'], ['x/a.jsonl', 'y/a.jsonl'])
    >>> labels([run("/tmp/a.jsonl", 1796016198.7), run("/tmp/a.jsonl", 1796019798.7)])
    ['a.jsonl 05:23:18', 'a.jsonl 06:23:18']
    """
    names = [one.name for one in series]
    short = [name.rsplit("/", 1)[-1] for name in names]
    chosen = short if len(set(short)) == len(set(names)) else names
    if len(set(chosen)) == len(chosen):
        return [printable(name) for name in chosen]
    return [f"{printable(name)} {utc(one.origin)[11:19]}" for name, one in zip(chosen, series, strict=True)]


def title(series: Sequence[Series]) -> str:
    """The chart's title, two lines: what ran (the command, else the file), then when it started (UTC), for how long,
    how it ended, and how many lines a point stands for when the run was thinned.

    >>> one = Series("run.jsonl", (), {}, {}, 4, start=1796016198.7, first=1796016198.9, last=1796016230.0,
    ...              command=("make", "-j4"), exit=CommandExit(code=0, wall=31.2))
    >>> print(title([one]))
    make -j4
    started 2026-11-30T05:23:18Z · 31.2 s · exit 0 · each point stands for up to 4 lines
    """
    if not series:
        return ""
    starts = origins(series)
    if len(series) == 1:
        one = series[0]
        what = command_text(one.command, one.argc) if one.command else printable(one.name)
        facts = [f"started {utc(starts[0])}", duration_text(duration(one, starts[0])), exit_text(one.exit)]
    else:
        what = ", ".join(labels(series))
        shared = len(set(starts)) == 1
        facts = [f"started {utc(starts[0])}" if shared else "each from its own start",
                 duration_text(max(one.last for one in series) - starts[0]) if shared else ""]
    thinned = max(one.lines_per_point for one in series)
    if thinned > 1:
        facts.append(f"each point stands for up to {thinned:,} lines")
    return f"{what}\n{' · '.join(fact for fact in facts if fact)}"


def elapsed_span(series: Sequence[Series]) -> float:
    """The longest elapsed time any run is drawn to."""
    spans = [one.last - origin for one, origin in zip(series, origins(series), strict=True)]
    return max((span for span in spans if math.isfinite(span)), default=0.0)
