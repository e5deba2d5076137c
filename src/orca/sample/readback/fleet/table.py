"""A fleet's table (docs/metrics.md, "A fleet", "A file of many runs"), made from its runs' compact rows
(`fleet/rows.py`): the order `--sort` asks, each row's label and flags, the totals and who stands out. One table for
both: a fleet of several sources (`fleet_table`: a folded run becomes a compact row, a source that gave no run a row
of its own) and the runs of one source, which may be too many to keep whole."""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from orca.sample.readback.cells import headed_labels, run_heads, run_labels, timed_labels
from orca.sample.readback.fleet.columns import ROW
from orca.sample.readback.fleet.fields import (
    BEGIN,
    BYTES_AVAILABLE,
    BYTES_USED,
    CORES_AVAILABLE,
    CORES_USED,
    CPU_LIMITED,
    CPU_OWN,
    DURATION,
    FIELDS,
    FIRST_T,
    HOST_CPU,
    HOST_MEMORY,
    LAST_T,
    MEMORY_LIMITED,
    MEMORY_OWN,
    PRESSURE,
    START,
    USAGE_BIT,
)
from orca.sample.readback.fleet.flags import (
    GAPS,
    NO_LINES,
    STRAGGLER_SHARE,
    STRAGGLERS_FROM,
    Flag,
    HostFlag,
    hosts_saturated,
    straggler_flag,
)
from orca.sample.readback.fleet.records import FleetTotals, Run
from orca.sample.readback.fleet.rows import INTS, Rows, compact, pick

GIB = 2**30


@dataclass(frozen=True, slots=True)
class Sources:
    """Whose a fleet's rows are: each run's source's name and each row's label (`cells.run_labels`), and the sources
    that gave no run (each with why: it had no sample line, it could not be read), rows after the runs'."""

    names: Sequence[str]
    labels: Sequence[str]
    empty: Sequence[tuple[str, str]]


def fleet_table(runs: Sequence[Run], empty: Sequence[tuple[str, str]] = (), sort: str = "name") -> Table:
    """The table of a fleet's `runs`, and of the sources in `empty` that gave none, its rows sorted by `sort` (one of
    `columns.SORT_COLUMNS`)."""
    rows = Rows()
    for run in runs:
        rows.add(compact(run))
    names = [run.summary.name for run in runs]
    every = [*names, *(name for name, _ in empty)]
    labels = [*run_labels([(run.summary.name, run.summary.host, run.summary.start) for run in runs], every),
              *run_labels([(name, "", None) for name, _ in empty], every)]
    return Table("", rows, sort, Sources(names, labels, empty))


def _covered(lows: Sequence[float], highs: Sequence[float], by_low: Sequence[int] | None = None) -> float:
    """Seconds that any of the intervals from `lows[i]` to `highs[i]` covers (`by_low`, where given: their indices
    sorted stably by `lows`, as a table's rows by their begins are).

    >>> _covered([0.0, 5.0, 20.0], [10.0, 12.0, 21.0]), _covered([5.0, 0.0, 0.0], [12.0, 10.0, 4.0])
    (13.0, 12.0)
    """
    everyone: Sequence[int] = range(len(lows))
    total = _swept(lows, highs, everyone if in_order(lows) else
                   sorted(everyone, key=lows.__getitem__) if by_low is None else by_low)
    if total is not None:
        return total
    # Two begin alike: by begin, then end (two stable sorts, no pair kept a run), so that the sum is of the same terms.
    pairs = zip(lows, highs, strict=True)
    if not all(map(operator.le, pairs, itertools.islice(zip(lows, highs, strict=True), 1, None))):
        everyone = sorted(sorted(everyone, key=highs.__getitem__), key=lows.__getitem__)
    return _swept(lows, highs, everyone, alike=True) or 0.0


def _swept(lows: Sequence[float], highs: Sequence[float], everyone: Iterable[int], alike: bool = False) -> float | None:
    """`_covered` of the intervals in the order `everyone`, by their begins; None where two begin alike unless
    `alike` (they are then in the order of their ends)."""
    total, reached, before = 0.0, -math.inf, math.nan
    for index in everyone:
        low, high = lows[index], highs[index]
        if low == before and not alike:
            return None
        before = low
        if high > reached:
            total += high - (reached if reached > low else low)  # `max(low, reached)`, without a call a run
            reached = high
    return total


def shared_hosts(runs: Iterable[tuple[str, float, float, bool]]) -> list[float]:
    """Of each run (its host, begin, end, and whether its capacity is its host's rather than its cgroup's limit), the
    share of what it had that counts in the fleet's totals: 1 for a run with its own limit or alone on its host; for
    the runs that share a host, the time any of them covers over the sum of their times, so that the host's cores and
    memory are counted once.

    >>> shared_hosts([("a", 0.0, 10.0, True), ("a", 0.0, 10.0, True), ("b", 0.0, 10.0, True), ("a", 0, 10, False)])
    [0.5, 0.5, 1.0, 1.0]
    """
    hosts: dict[str, tuple[array[float], array[float]]] = {}
    of: list[str | None] = []
    for host, low, high, of_host in runs:
        if of_host:
            lows, highs = hosts.setdefault(host, (array("d"), array("d")))
            lows.append(low)
            highs.append(high)
        of.append(host if of_host else None)
    factors = {host: host_share(lows, highs) for host, (lows, highs) in hosts.items()}
    return [1.0 if host is None else factors[host] for host in of]


def host_share(lows: Sequence[float], highs: Sequence[float], by_low: Sequence[int] | None = None) -> float:
    """`shared_hosts`' share of each of the runs that share a host, from their begins and ends (at least one; `by_low`
    as `_covered` takes it)."""
    whole = sum(map(operator.sub, highs, lows))
    return _covered(lows, highs, by_low) / whole if whole > 0 else 1 / len(lows)


def order(rows: Rows, sort: str) -> Sequence[int]:
    """The rows' order for `sort` (one of `columns.SORT_COLUMNS`): by name, their host then their start; by start,
    the earliest first; by a figure, the largest first, the rows without it last. Sorted by one key after another
    (stably), so that no key of two parts is kept a row."""
    everyone = range(len(rows))
    if sort in ("name", "start"):
        begins = rows.floats(BEGIN)
        by_begin: Sequence[int] = everyone if in_order(begins) else sorted(everyone, key=begins.__getitem__)
        if sort == "start" or len(rows.hosts) == 1:
            return by_begin
        rank = {number: place for place, number in enumerate(sorted(range(len(rows.hosts)),
                                                                     key=rows.hosts.__getitem__))}
        return sorted(by_begin, key=lambda index: rank[rows.host[index]])
    if sort == "span":
        first, last = rows.floats(FIRST_T), rows.floats(LAST_T)
        return sorted(everyone, key=lambda index: -round(max(0.0, last[index] - first[index]), 3))
    [held] = [figure.held or figure.key for figure in ROW if figure.sort == sort]  # the field its figure is read from
    field = FIELDS.index(held)
    if field in INTS:
        known = [index for index in everyone if rows.value(field, index) is not None]
        return [*sorted(known, key=lambda index: -rows.value(field, index)),
                *(index for index in everyone if rows.value(field, index) is None)]
    floats = rows.floats(field)
    known = [index for index in everyone if floats[index] == floats[index]]
    return [*sorted(known, key=lambda index: -floats[index]),
            *(index for index in everyone if floats[index] != floats[index])]


def _held_order(rows: Rows, sort: str, sources: Sources | None) -> tuple[array[int], bool]:
    """`order` as C integers (its list of Python integers not kept), and whether it is the order the rows came in.
    A fleet's rows by name are then by their source's name (stably: then by host and start, as `order` put them), a
    source without runs by its name among them; by anything else, the sources without runs come last."""
    ordered = order(rows, sort)
    if sources is None or not (sources.empty or sort == "name"):
        return array("L", ordered), isinstance(ordered, range)
    everyone = [*ordered, *range(len(rows), len(rows) + len(sources.empty))]
    if sort != "name":
        return array("L", everyone), isinstance(ordered, range)
    names = [*sources.names, *(name for name, _ in sources.empty)]
    return array("L", sorted(everyone, key=names.__getitem__)), False


def in_order(values: Sequence[float]) -> bool:
    """Whether `values` never go down (the runs of a file cron appends to come in the order they began)."""
    return all(map(operator.le, values, itertools.islice(values, 1, None)))


def median(values: Sequence[float]) -> float:
    """The middle value (the mean of the two in the middle of an even count), without a sorted copy of `values` when
    they are in order already: `statistics.median`, whose import (fractions, decimal) would cost a table more than
    these lines.

    >>> median([3.0, 1.0, 2.0]), median([4.0, 1.0, 2.0, 3.0])
    (2.0, 2.5)
    """
    ordered = values if in_order(values) else sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


class Table:
    """Runs as a fleet: each row's label and flags, the totals and the hosts saturated, from `Rows`: the runs of the
    source `name`, or a fleet's (`sources`: their sources, and those without runs, rows after the runs')."""

    def __init__(self, name: str, rows: Rows, sort: str, sources: Sources | None = None) -> None:
        rows.settle()  # its columns read directly below
        self.name, self.rows, self.sorted_by, self.sources = name, rows, sort, sources
        self.order, self.in_order = _held_order(rows, sort, sources)
        by_begin = sort == "start" or (sort == "name" and len(rows.hosts) == 1)
        self._by_begin = self.order if sources is None and by_begin else None
        """The rows sorted stably by their begins (`order`'s), where the table's order is that."""
        # Each host's runs (one host's, counted without a Counter of as many rows).
        self._runs_of_host = {(name, rows.hosts[0]): len(rows)} if len(rows.hosts) == 1 else \
            {(name, rows.hosts[host]): runs for host, runs in Counter(rows.host).items()}
        self._heads = run_heads(self._runs_of_host, [name]).get(name, {}) if sources is None else {}
        """Each host's label but the start, and whether the start is said (`cells.run_heads`): made once for the
        table, as a piece's labels are a few of its many hosts'."""
        self._kinds = set(rows.bits)
        """The rows' `bits`, each once."""
        self.ends = self._straggler_bound()
        self._stragglers: dict[int, Flag] = {}
        if self.ends is not None:
            durations, ends, (median_end, margin) = rows.floats(DURATION), rows.floats(LAST_T), self.ends
            # Those that ended late enough and began by the median end (as `straggler_flag` asks, not called for
            # each of the many that began after it).
            late: Iterable[int] = range(bisect.bisect_right(ends, False, key=lambda ended: ended - median_end > margin),
                                        len(ends)) if in_order(ends) else \
                [index for index, ended in enumerate(ends) if ended - median_end > margin]
            for index in late:
                ended = ends[index]
                if (began := ended - durations[index]) <= median_end and \
                        (straggler := straggler_flag(began, ended, self.ends)) is not None:
                    self._stragglers[index] = straggler
        self.flagged_rows = rows.flags.keys() | self._stragglers.keys() | set(range(len(rows), len(self.order)))
        """The rows with a flag."""
        flagged: dict[str, list[int]] = {}
        for index in filter(self.flagged_rows.__contains__, self.order):
            for flag in self.flags(index):
                flagged.setdefault(flag.flag, []).append(index)
        self._flagged = flagged
        self.totals = self._totals()
        self.hosts_saturated = self._hosts_saturated()

    def label(self, index: int) -> str:
        """What the table, the lists, the chart and `--json` call row `index`: `cells.run_labels`'."""
        [label] = self.labels([index])
        return label

    def labels(self, indices: Sequence[int]) -> list[str]:
        """`label` of each of the rows at `indices` (a column of the table): a source's runs' are counted among all
        of its runs."""
        if self.sources is not None:
            return list(map(self.sources.labels.__getitem__, indices))
        rows = self.rows
        hosts, host = rows.hosts, rows.host
        starts, heads = pick(rows.floats(START), indices), self._heads
        if len(hosts) == 1:  # a column of one head, timed or not
            head, timed = heads[hosts[0]]
            return timed_labels(head, starts) if timed else [head] * len(starts)
        return headed_labels([heads[hosts[number]] for number in pick(host, indices)], starts)

    def name_of(self, index: int) -> str:
        """The file, `-` or object row `index` was read from."""
        sources = self.sources
        if sources is None:
            return self.name
        return sources.names[index] if index < len(self.rows) else sources.empty[index - len(self.rows)][0]

    def flags(self, index: int) -> tuple[Flag, ...]:
        """Row `index`'s flags, the straggler's among them in its place."""
        if index >= len(self.rows) and self.sources is not None:
            return (Flag(NO_LINES, self.sources.empty[index - len(self.rows)][1]),)
        flags = self.rows.flags.get(index, ())
        straggler = self._stragglers.get(index)
        if straggler is None:
            return flags
        at = len(flags) - (bool(flags) and flags[-1].flag == GAPS)
        return (*flags[:at], straggler, *flags[at:])

    def flagged(self, flag: str) -> list[int]:
        """The rows with `flag`, in the table's order."""
        return self._flagged.get(flag, [])

    def _straggler_bound(self) -> tuple[float, float] | None:
        if len(self.rows) < STRAGGLERS_FROM:
            return None
        first, last = self.rows.floats(FIRST_T), self.rows.floats(LAST_T)
        if first == last:  # runs of one line, each of no length (told by one comparison of C arrays)
            return median(last), 0.0  # the share of a median length of 0
        # `round` to some digits is slow: not called for a run of no length (as a run of one line is).
        return median(last), STRAGGLER_SHARE * median([
            round(length, 3) if (length := high - low) > 0.0 else 0.0 for low, high in zip(first, last, strict=True)])

    def _usages(self) -> Sequence[int]:
        """The rows with a usage."""
        if all(kind & USAGE_BIT for kind in self._kinds):
            return range(len(self.rows))
        return array("L", [index for index, bits in enumerate(self.rows.bits) if bits & USAGE_BIT])

    def _shares(self, placed: Sequence[int], limited: int) -> list[float]:
        """`shared_hosts` of the rows `placed`, whose capacity is their cgroup's limit by the bit `limited`."""
        rows = self.rows
        begin, last = rows.floats(BEGIN), rows.floats(LAST_T)
        if placed and len(rows.hosts) == 1 and not any(kind & limited for kind in self._kinds):
            # One host, whose capacity every run had: one share for all.
            if len(placed) == len(rows):  # the table's order may be theirs by begin already
                return [host_share(begin, last, self._by_begin)] * len(placed)
            return [host_share(pick(begin, placed), pick(last, placed))] * len(placed)
        return shared_hosts((rows.hosts[rows.host[index]], begin[index], last[index],
                             not rows.bits[index] & limited) for index in placed)

    def _totals(self) -> FleetTotals:
        rows = self.rows
        begin, last = rows.floats(BEGIN), rows.floats(LAST_T)
        placed = self._usages()
        cpu_shares = self._shares(placed, CPU_LIMITED)
        # Most runs' cores and memory are both their host's, or both their cgroup's: then the shares are the same.
        memory_shares = cpu_shares if all(bool(kind & CPU_LIMITED) == bool(kind & MEMORY_LIMITED)
                                           for kind in self._kinds if kind & USAGE_BIT) else \
            self._shares(placed, MEMORY_LIMITED)
        everyone = len(placed) == len(rows)

        def hours(field: int, unit: float = 1.0, shares: Sequence[float] = ()) -> float:
            values = rows.floats(field)
            taken: Sequence[float] = values if everyone else pick(values, placed)
            # Every value, when none is missing (NaN: then the sum is): the same sum as of the known ones.
            whole = sum(map(operator.mul, taken, shares) if shares else taken, 0.0)
            if whole == whole:
                return whole / 3600 / unit
            # Each known value (not NaN), in order, without a list of them.
            if shares:
                known: Iterable[float] = itertools.compress(map(operator.mul, taken, shares),
                                                            map(operator.eq, taken, taken))
            else:
                known = itertools.filterfalse(math.isnan, taken)
            return sum(known, 0.0) / 3600 / unit

        return FleetTotals(
            runs=len(rows),
            instance_hours=sum(rows.floats(DURATION)) / 3600,
            cpu_hours_used=hours(CORES_USED),
            cpu_hours_available=hours(CORES_AVAILABLE, shares=cpu_shares),
            memory_gib_hours_used=hours(BYTES_USED, GIB),
            memory_gib_hours_available=hours(BYTES_AVAILABLE, GIB, memory_shares),
            first_start=min(begin, default=None),
            last_end=max(last, default=None),
        )

    def _hosts_saturated(self) -> tuple[HostFlag, ...]:
        rows = self.rows
        own = [index for index in self._usages() if rows.bits[index] & (CPU_OWN | MEMORY_OWN)] \
            if any(kind & (CPU_OWN | MEMORY_OWN) for kind in self._kinds) else []
        return hosts_saturated([(rows.hosts[rows.host[index]], rows.value(HOST_CPU, index), rows.value(DURATION, index),
                                 rows.value(HOST_MEMORY, index), rows.value(PRESSURE, index)) for index in own])
