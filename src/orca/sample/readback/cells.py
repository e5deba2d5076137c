"""A table's columns said a column at a time (docs/metrics.md, "Words"): sizes, percentages, counts, times of day
and the runs' labels, each cell what `words.py` says for one figure, for the thousands of rows of a table of many runs
at once (a cell looked up or said once per distinct value, not a call a row)."""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

from orca.sample.readback.words import MISSING, day_and_minute, size_cell, utc

T = TypeVar("T", bound=Hashable)

_MINUTES = [f"{hour:02d}:{minute:02d}" for hour in range(24) for minute in range(60)]
"""Each minute of a day as `HH:MM`, by its number."""
_SECONDS = [f":{second:02d}" for second in range(60)]


def _seconds(moments: Sequence[float]) -> list[int] | list[int | None]:
    """Each moment's whole second as `datetime.fromtimestamp` takes it (rounded to the microsecond first, half to
    even; only a moment within a microsecond of the next second can round up to it); None for a
    moment `datetime` says otherwise (or refuses). Mostly each moment's whole part, each taken by one `map` where
    all are in range (no NaN: then their sum is NaN) and none is that close to its next second."""
    if moments and min(moments) >= 0 and max(moments) < 2**53 and (total := sum(moments)) == total:
        wholes = list(map(int, moments))
        if max(map(operator.sub, moments, wholes)) < 0.9999994:
            return wholes
    return [None if not 0 <= t < 2**53 else
            (whole := int(t)) + (t - whole >= 0.9999994 and round((t - whole) * 1e6) >= 1_000_000) for t in moments]


def times_of_day(moments: Sequence[float]) -> list[str]:
    """Each moment's time of day, UTC, to the second (a column of a table of many runs): `utc(t)`'s, counted without
    a datetime, its second rounded as `datetime.fromtimestamp` rounds it, to the microsecond, half to even.

    >>> times_of_day([1796016198.738, 59.9999996, 59.9999994, -0.5])
    ['05:23:18', '00:01:00', '00:00:59', '23:59:59']
    """
    return [utc(t)[11:19] if second is None else _MINUTES[(rest := second % 86400) // 60] + _SECONDS[rest % 60]
            for t, second in zip(moments, _seconds(moments), strict=True)]


def days_and_minutes(moments: Sequence[float]) -> list[str]:
    """`day_and_minute` of each of `moments`, each day's date said once.

    >>> days_and_minutes([1796016198.738, 1796016198.738 + 86400, 59.9999996, -0.5])
    ['11-30 05:23', '12-01 05:23', '01-01 00:01', '12-31 23:59']
    """
    days: dict[int, str] = {}

    def date(day: int) -> str:
        said = days[day] = utc(day * 86400)[5:10] + " "
        return said

    return [day_and_minute(t) if second is None else
            (days.get(day := second // 86400) or date(day)) + _MINUTES[second % 86400 // 60]
            for t, second in zip(moments, _seconds(moments), strict=True)]


@functools.lru_cache(maxsize=4)
def _size_texts(after: str) -> tuple[list[str], list[str], list[str], list[str], list[str]]:
    """The cells of the sizes under a GiB (`size_cell`), `after` after each, by what they say: whole bytes (under a
    KiB), tenths of a KiB (under 10), whole KiB, tenths of a MiB (under 10), whole MiB."""
    return ([f"{n}B{after}" for n in range(1024)], [f"{n // 10}.{n % 10}K{after}" for n in range(101)],
            [f"{n}K{after}" for n in range(1025)], [f"{n // 10}.{n % 10}M{after}" for n in range(101)],
            [f"{n}M{after}" for n in range(1025)])


def size_cells(counts: Sequence[int], missing: int | None = None, after: str = "") -> list[str]:
    """`size_cell` of each of `counts` (a column of a table of many runs), `after` after each said (a mark of whose it
    is), `-` for the count `missing` stands for. A size under a GiB is looked up by its count of what it says, rounded
    in integers as `size_cell`'s formatting rounds the exact quotient (half to even): the quotient `q` by a power of
    two is one more where the remainder is over half, or half and `q` odd.

    >>> size_cells([0, 512, 1536, 136 * 2**20, 13314398618, -1, 3 * 2**40], missing=-1)
    ['0B', '512B', '1.5K', '136M', '12G', '-', '3.0T']
    """
    return _by_value(counts, lambda some: _sizes(some, missing, after))  # one value: such as a column all `missing`


def _sizes(counts: Sequence[int], missing: int | None, after: str) -> list[str]:
    whole, kib_tenths, kib, mib_tenths, mib = _size_texts(after)
    return [whole[count] if 0 <= count < 1024
            else kib_tenths[(5 * count + 255 + (5 * count >> 9 & 1)) >> 9] if 1024 <= count < 10240
            else kib[(count + 511 + (count >> 10 & 1)) >> 10] if 10240 <= count < 1048576
            else mib_tenths[(5 * count + 262143 + (5 * count >> 19 & 1)) >> 19] if 1048576 <= count < 10485760
            else mib[(count + 524287 + (count >> 20 & 1)) >> 20] if 10485760 <= count < 1073741824
            else MISSING if count == missing else size_cell(count) + after for count in counts]


_SAMPLE = 1024
"""Values looked at to tell whether a column holds few distinct values."""


def one_value(values: Sequence[object]) -> bool:
    """Whether `values` are one value (a file of one-line runs' counts of lines, or a figure none of them has), told
    by one count, without a set; most columns of many values are told otherwise by their first and last alone."""
    return bool(values) and values[0] == values[-1] and values.count(values[0]) == len(values)


def _few(values: Sequence[object]) -> bool:
    """Whether `values` seem to hold few distinct values (at most half of the first `_SAMPLE` distinct): then each is
    said once and looked up, where saying each of many distinct values once would cost more than saying every one."""
    sample = values[:_SAMPLE]
    return len(set(sample)) * 2 <= len(sample)


def _by_value(values: Sequence[T], said: Callable[[Sequence[T]], list[str]]) -> list[str]:
    """`said(values)`, each distinct value said once where they are one value or seem few (`one_value`, `_few`)."""
    if one_value(values):
        return said(values[:1]) * len(values)
    if _few(values):
        distinct = list(set(values))
        return list(map(dict(zip(distinct, said(distinct), strict=True)).__getitem__, values))
    return said(values)


class Percents(dict[float | None, str]):
    """`percent_cells`' cells, by share, each said as it is first looked up (`__missing__`, from C: a column looked
    up by one `map`) and kept, but for 0.0 and -0.0 (one key, said apart) and None and NaN (`-`)."""

    __slots__ = ("_said",)

    def __init__(self, after: str = "") -> None:
        super().__init__()
        self._said = "%.1f" + after.replace("%", "%%")

    def __missing__(self, share: float | None) -> str:
        if share is None or share != share:
            return MISSING
        said = self._said % share
        if share:
            self[share] = said
        return said


def percent_cells(shares: Sequence[float | None], after: str = "", said: Percents | None = None) -> list[str]:
    """`percent` of each of `shares` in a table's cell, under a header that says `%`, `after` after each said (a mark
    of whose it is); `-` for None or NaN (a table's column of floats holds a missing figure as NaN). Shares of one
    decimal (as a line's are) are few values: each said once, into `said` where given (the cells of a column said a
    piece at a time, with this `after`).

    >>> percent_cells([26.94, 199.0, None, float("nan")]), percent_cells([26.94, -0.0, float("nan")], "*")
    (['26.9', '199.0', '-', '-'], ['26.9*', '-0.0*', '-'])
    """
    if one_value(shares) and (one := shares[0]) != 0:  # -0.0 counts as 0.0 too
        return [Percents(after)[one]] * len(shares)
    if _few(shares):
        return list(map((Percents(after) if said is None else said).__getitem__, shares))
    plain = "%.1f" + after.replace("%", "%%")
    return [MISSING if share is None or share != share else plain % share for share in shares]


def count_cells(counts: Sequence[int]) -> list[str]:
    """Each of `counts` with its thousands separated (a column of counts, most of them alike: each said once).

    >>> count_cells([1, 1, 12345])
    ['1', '1', '12,345']
    """
    return _by_value(counts, lambda some: [f"{each:,}" for each in some])


def run_labels(runs: Sequence[tuple[str, str, float | None]], names: Sequence[str] = (),
               runs_of_host: Mapping[tuple[str, str], int] | None = None) -> list[str]:
    """Each run's label, from its source's name, host and start: the shortest end of its source's path that tells
    the sources (`names` too) apart, then its host where one source holds several hosts' runs, and its start's time
    of day where one source holds several runs of a host. `runs_of_host` counts each source's host's runs when `runs`
    are a few of them (a file of many runs is labelled a piece at a time).

    >>> run_labels([("m/a.jsonl", "h", 1.0), ("m/b.jsonl", "h", 1.0)])
    ['a', 'b']
    >>> run_labels([("x/a.jsonl", "h", 1.0), ("y/a.jsonl", "h", 1.0)])
    ['x/a', 'y/a']
    >>> run_labels([("s3://l/n/7/metrics/w-3.jsonl", "h", 1.0), ("s3://l/n/8/metrics/w-3.jsonl", "h", 1.0)])
    ['7/w-3', '8/w-3']
    >>> run_labels([("a.jsonl", "h1", 1.0), ("a.jsonl", "h2", 1.0), ("a.jsonl", "h2", None)])
    ['a (h1)', 'a (h2) 00:00:01', 'a (h2) before start']
    >>> run_labels([("a.jsonl", "h2", 3600.0)], runs_of_host={("a.jsonl", "h1"): 1, ("a.jsonl", "h2"): 2})
    ['a (h2) 01:00:00']
    """
    heads = run_heads(Counter((name, host) for name, host, _ in runs) if runs_of_host is None else runs_of_host,
                      sorted({*names, *(name for name, _, _ in runs)}))
    return headed_labels([heads[name][host] for name, host, _ in runs], [start for _, _, start in runs])


def headed_labels(heads: Sequence[tuple[str, bool]], starts: Sequence[float | None]) -> list[str]:
    """`run_labels`' label of each run from its head and whether its start is said (`run_heads`), and its start
    (None or NaN: before start)."""
    times = times_of_day([0.0 if start is None or start != start else start for start in starts])
    return [head + " " + ("before start" if start is None or start != start else time) if timed else head
            for (head, timed), start, time in zip(heads, starts, times, strict=True)]


def run_heads(runs_of_host: Mapping[tuple[str, str], int], names: Sequence[str]) -> dict[str, dict[str, tuple[str,
                                                                                                             bool]]]:
    """`run_labels`' label of each source's host's runs but their starts, and whether their starts are said, by
    source and host: from the count of each source's host's runs, and every source's name (`names`, distinct)."""
    short = shortest_names(names)
    hosts = Counter(name for name, _ in runs_of_host)  # each source's distinct hosts
    # Once each, not once a run (by name, then host: no pair made a run).
    heads: dict[str, dict[str, tuple[str, bool]]] = {}
    for (name, host), runs_of_it in runs_of_host.items():
        if name in short:
            heads.setdefault(name, {})[host] = (short[name] + (f" ({host})" if hosts[name] > 1 else ""), runs_of_it > 1)
    return heads


def timed_labels(head: str, starts: Sequence[float]) -> list[str]:
    """`run_labels`' label of each of a source's host's runs whose starts are said, from their `head` (`run_heads`)
    and their starts (NaN for before start), the head said with each minute of the day (a call a column, not a row).

    >>> timed_labels("a (h2)", [3600.0, float("nan"), 86399.9999996])
    ['a (h2) 01:00:00', 'a (h2) before start', 'a (h2) 00:00:00']
    """
    minutes = _headed_minutes(head + " ")
    return [minutes[(rest := second % 86400) // 60] + _SECONDS[rest % 60] if second is not None
            else head + " " + ("before start" if start != start else utc(start)[11:19])
            for start, second in zip(starts, _seconds(starts), strict=True)]


@functools.lru_cache(maxsize=4)
def _headed_minutes(head: str) -> list[str]:
    """Each minute of a day as `HH:MM`, by its number, after `head`."""
    return [head + minute for minute in _MINUTES]


def shortest_names(names: Sequence[str]) -> dict[str, str]:
    """Each of `names` (distinct) by the fewest parts of its path, from its file's name up, that tell it from the
    others, without `.jsonl`: a directory is named only where it tells this name from those that share every part
    named so far (`.../7/metrics/w-3.jsonl` is `7/w-3` beside `.../8/metrics/w-3.jsonl`). Should two come out alike,
    each is its whole name.

    >>> shortest_names(["a/m/x.jsonl", "b/m/x.jsonl", "a/n/x.jsonl", "x.jsonl", "y.jsonl"])
    {'a/m/x.jsonl': 'a/m/x', 'b/m/x.jsonl': 'b/m/x', 'a/n/x.jsonl': 'n/x', 'x.jsonl': 'x', 'y.jsonl': 'y'}
    """
    parts = {name: name.removesuffix(".jsonl").split("/")[::-1] for name in names}
    from toolz import groupby  # here: toolz's import is a tenth of the start-up, and a summary names no rivals

    # Only names of the same file name are rivals: grouped once, so a fleet of many instances is not a square.
    by_file = groupby(lambda name: parts[name][0], parts)
    short: dict[str, str] = {}
    for name, mine in parts.items():
        rivals = [parts[other] for other in by_file[mine[0]] if other != name]
        kept = [mine[0]]
        level = 1
        while rivals and level < max(len(mine), *(len(theirs) for theirs in rivals)):
            part = mine[level] if level < len(mine) else None
            if any((theirs[level] if level < len(theirs) else None) != part for theirs in rivals):
                if part is not None:
                    kept.append(part)
                rivals = [theirs for theirs in rivals if (theirs[level] if level < len(theirs) else None) == part]
            level += 1
        short[name] = "/".join(kept[::-1])
    if len(set(short.values())) < len(short):
        return {name: name.removesuffix(".jsonl") for name in names}
    return short
