"""Runs as a table's rows (docs/metrics.md, "A fleet", "A file of many runs"), in memory that does not hold their
summaries: each run, as it closes (or each folded run of a fleet), is one compact row of the figures the table, its
totals and who stands out read (`compact`), kept in columns of C numbers (`Rows`), 200 bytes or so a run where its
records take kilobytes. The table, the totals and the lists are made from the columns (`table.py`); what only
`--json` and `--each` print of each run (its summary's document, its block) is written aside as the run closes
(`shell/run_rows.py`), not kept, or taken from a fleet's runs.
"""

from __future__ import annotations

import functools
import math
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, TypeVar

from orca.sample.readback.fleet.fields import (
    BEGIN,
    BITS,
    BYTES_AVAILABLE,
    BYTES_USED,
    CORES_AVAILABLE,
    CORES_USED,
    CPU,
    CPU_LIMITED,
    CPU_OWN,
    CPUS,
    DISK,
    DURATION,
    EXIT,
    FIELDS,
    FIRST_T,
    FLAGS,
    HOST,
    HOST_CPU,
    HOST_MEMORY,
    IO,
    LAST_T,
    LINES,
    MEMORY_BYTES,
    MEMORY_LIMITED,
    MEMORY_OWN,
    MEMORY_PEAK,
    MEMORY_PERCENT,
    NET,
    OWN_IO,
    P95,
    PRESSURE,
    RSS,
    START,
    USAGE_BIT,
)
from orca.sample.readback.fleet.flags import (
    Flag,
    flags_of,
)
from orca.sample.readback.fleet.records import Run

Compact = tuple[Any, ...]
"""One run's row: see `fleet/fields.py`'s `FIELDS` (a tuple, so that a part of a file read by another process sends it
back cheaply)."""
_FLOATS = (START, BEGIN, FIRST_T, LAST_T, DURATION, CPU, P95, MEMORY_PEAK, MEMORY_PERCENT, CPUS, MEMORY_BYTES, DISK,
           CORES_USED, CORES_AVAILABLE, BYTES_USED, BYTES_AVAILABLE, HOST_CPU, HOST_MEMORY, PRESSURE)
INTS = (LINES, RSS, IO, NET)
"""The fields held as C integers; the others are floats."""
_FLUSH_ROWS = 4096
NONE = -(2**63)
"""An integer column's None (no byte count is negative)."""
T = TypeVar("T")


class Columns(NamedTuple):
    """Rows given a column at a time: each row's host; each float field's values (NaN for None) and each integer
    field's (`NONE` for None), by field; the same `bits` for every row, which have no command's end; the flags of
    those flagged, by their place among them."""

    host: list[str]
    floats: dict[int, list[float]]
    ints: dict[int, list[int]]
    bits: int
    flags: dict[int, tuple[Flag, ...]]


def compact(run: Run) -> Compact:
    """A run's row, from its summary and usage. Its io is its own processes' when the lines have `run.io`, else its
    host's disks'; its rss, its own processes' when the lines have a run."""
    summary, usage = run.summary, run.usage
    ended = None if summary.run is None else summary.run.exit
    own_io = summary.run is not None and summary.run.io is not None
    moved = summary.run.io if summary.run is not None and summary.run.io is not None else summary.io
    bits = 0 if usage is None else USAGE_BIT | (CPU_LIMITED * usage.cpu_limited) | (CPU_OWN * usage.cpu_own) | (
        MEMORY_LIMITED * usage.memory_limited) | (MEMORY_OWN * usage.memory_own)
    return (
        summary.host, summary.start, summary.last_t - summary.duration, summary.first_t, summary.last_t,
        summary.duration, summary.lines,
        None if usage is None else usage.cpu_percent, None if usage is None else usage.cpu_p95,
        None if usage is None else usage.memory_peak_percent, None if usage is None else usage.memory_percent,
        None if usage is None else usage.cpus, None if usage is None else usage.memory_bytes,
        None if summary.run is None or summary.memory is None else summary.memory.rss_peak,
        None if summary.disk is None else summary.disk.peak_percent,
        None if moved is None else moved.read + moved.write,
        None if summary.net is None else summary.net.received + summary.net.sent,
        None if usage is None else usage.core_seconds_used, None if usage is None else usage.core_seconds_available,
        None if usage is None else usage.byte_seconds_used, None if usage is None else usage.byte_seconds_available,
        None if usage is None else usage.host_cpu_saturated_percent,
        None if usage is None else usage.host_memory_peak_percent,
        None if summary.pressure is None else summary.pressure.memory,
        bits | (OWN_IO * own_io),
        None if ended is None else (ended.code, ended.signal, ended.error, ended.wall),
        flags_of(summary, usage),
    )


class Rows:
    """Runs' compact rows in columns, in the order they were added: floats in C doubles (NaN for None), counts in
    64-bit integers (a count that does not fit aside), hosts by number, each command's end and each run's flags
    shared among the rows alike."""

    __slots__ = (
        "_big",
        "_ends",
        "_flags",
        "_floats",
        "_host_numbers",
        "_ints",
        "_new",
        "bits",
        "ends",
        "flags",
        "host",
        "hosts",
    )

    def __init__(self) -> None:
        self._floats = {field: array("d") for field in _FLOATS}
        self._ints = {field: array("q") for field in INTS}
        self._big: dict[tuple[int, int], int] = {}
        self._new: list[Compact] = []
        self.bits = array("B")
        self.host = array("I")
        self.hosts: list[str] = []
        self._host_numbers: dict[str, int] = {}
        self.ends: dict[int, tuple[int | None, int | None, str | None, float | None]] = {}
        """How each run's command ended, of the runs whose lines say (few runs have a command)."""
        self._ends: dict[tuple[int | None, int | None, str | None, float | None],
                         tuple[int | None, int | None, str | None, float | None]] = {}
        self.flags: dict[int, tuple[Flag, ...]] = {}
        """The flags of the runs flagged (few are)."""
        self._flags: dict[tuple[Flag, ...], tuple[Flag, ...]] = {(): ()}

    def __len__(self) -> int:
        return len(self.bits) + len(self._new)

    def add(self, row: Compact) -> None:
        # Held as it comes and put in columns a few thousand rows at a time (`_flush`): a column's values taken by one
        # comprehension, where a row at a time would cost a call for each of its fields.
        self._new.append(row)
        if len(self._new) >= _FLUSH_ROWS:
            self._flush()

    def extend(self, columns: Columns) -> None:
        """Rows given in columns, after those added."""
        if self._new:
            self._flush()
        index = len(self.bits)
        # `fromlist` takes a list as it is, where `extend` goes through it as any iterable: a third of the time.
        for field, values in columns.floats.items():
            self._floats[field].fromlist(values)
        for field, counts in columns.ints.items():
            self._counts(field, counts, index)
        self.bits.frombytes(bytes([columns.bits]) * len(columns.host))
        self.host.fromlist(self._numbers(columns.host))
        for place, flagged in columns.flags.items():
            self.flags[index + place] = self._flags.setdefault(flagged, flagged)

    def _counts(self, field: int, counts: list[int], index: int) -> None:
        """An integer column's values for the rows from `index` on."""
        ints = self._ints[field]
        try:
            ints.fromlist(counts)  # all or none of them: a list with a count that does not fit leaves `ints` as it was
        except OverflowError:  # bytes moved past 64 bits: a rate over a long dt in a hostile line
            for place, value in enumerate(counts):
                if not -(2**63) <= value < 2**63:
                    self._big[(field, index + place)] = value
            ints.fromlist([value if -(2**63) <= value < 2**63 else 0 for value in counts])

    def pieces(self) -> Iterator[tuple[str, Any]]:
        """The rows in a few pieces, each small enough to send on its own (a column at most), to be taken in after
        another `Rows`' rows, one after the other (`take`)."""
        if self._new:
            self._flush()
        yield "head", (self.hosts, self.host, self.bits, self.ends, self.flags, self._big)
        for field, column in self._floats.items():
            yield "floats", (field, column)
        for field, ints in self._ints.items():
            yield "ints", (field, ints)

    def take(self, piece: tuple[str, Any], offset: int) -> None:
        """A piece of another `Rows` (`pieces`), taken in after the first `offset` of these (their count before the
        first piece)."""
        if self._new:
            self._flush()
        kind, what = piece
        if kind == "floats":
            self._floats[what[0]].extend(what[1])
        elif kind == "ints":
            self._ints[what[0]].extend(what[1])
        else:
            hosts, host, bits, ends, flags, big = what
            self._big.update({(field, offset + index): value for (field, index), value in big.items()})
            self.bits.extend(bits)
            numbers = [self._number(name) for name in hosts]
            self.host.extend(host if numbers == list(range(len(numbers))) else
                             array("I", [numbers[number] for number in host]))
            for index, ended in ends.items():
                self.ends[offset + index] = self._ends.setdefault(ended, ended)
            for index, flagged in flags.items():
                self.flags[offset + index] = self._flags.setdefault(flagged, flagged)

    def _numbers(self, hosts: list[str]) -> list[int]:
        """Each host's number: looked up by one `map` while every host is known (a few hosts make many rows)."""
        try:
            return list(map(self._host_numbers.__getitem__, hosts))
        except KeyError:
            return list(map(self._number, hosts))

    def _number(self, host: str) -> int:
        number = self._host_numbers.get(host)
        if number is None:
            number = self._host_numbers[host] = len(self.hosts)
            self.hosts.append(host)
        return number

    def settle(self) -> None:
        """The rows taken in since, put in their columns (before reading `bits`, `host`, `hosts`, `ends`, `flags`)."""
        if self._new:
            self._flush()

    def _flush(self) -> None:
        """The rows taken in since, put in their columns."""
        new, self._new = self._new, []
        index = len(self.bits)
        nan = math.nan
        for field, column in self._floats.items():
            column.fromlist([nan if (value := row[field]) is None else value for row in new])
        for field in self._ints:
            self._counts(field, [NONE if (value := row[field]) is None else value for row in new], index)
        self.bits.fromlist([row[BITS] for row in new])
        self.host.fromlist(self._numbers([row[HOST] for row in new]))
        for place, row in enumerate(new):
            if (ended := row[EXIT]) is not None:
                self.ends[index + place] = self._ends.setdefault(ended, ended)
            if flagged := row[FLAGS]:
                self.flags[index + place] = self._flags.setdefault(flagged, flagged)

    def floats(self, field: int) -> array[float]:
        if self._new:
            self._flush()
        return self._floats[field]

    def value(self, field: int, index: int) -> Any:
        """Row `index`'s `field`, as `compact` gave it."""
        if self._new:
            self._flush()
        if field in self._floats:
            value = self._floats[field][index]
            return None if value != value else value
        if field in self._ints:
            value = self._ints[field][index]
            return None if value == NONE else self._big.get((field, index), value)
        if field == HOST:
            return self.hosts[self.host[index]]
        if field == BITS:
            return self.bits[index]
        return self.ends.get(index) if field == EXIT else self.flags.get(index, ())

    def named(self, index: int) -> dict[str, Any]:
        """Row `index`'s fields by their names (`FIELDS`), each as `value` reads it: `--json`'s reading of a row."""
        value = self.value
        return {name: value(field, index) for field, name in enumerate(FIELDS)}

    def ints(self, field: int) -> array[int]:
        """An integer column: `NONE` for None, and a count that does not fit read with `big`."""
        if self._new:
            self._flush()
        return self._ints[field]

    def held(self, field: int, indices: Sequence[int]) -> Sequence[int]:
        """An integer column's counts at `indices`, `NONE` for None, a count that does not fit in its place."""
        held = pick(self.ints(field), indices)
        if self._big:
            big = self._big
            return [big.get((field, index), value) for value, index in zip(held, indices, strict=True)]
        return held


def pick(values: Sequence[T], indices: Sequence[int]) -> Sequence[T]:
    """A column's values at `indices`: a slice when they follow each other (the rows in the order they came, or a
    stretch of them in an order that is mostly theirs)."""
    if isinstance(indices, range):
        return values[indices.start : indices.stop]
    if isinstance(indices, array) and indices and _following(indices):
        return values[indices[0] : indices[-1] + 1]
    return [values[index] for index in indices]


def _following(indices: array[int]) -> bool:
    """Whether each of `indices` is the one before it plus 1: compared with a stretch of the numbers from 0 by one
    comparison of C arrays, where a comparison a value would cost what picking them does."""
    first, last = indices[0], indices[-1]
    if last - first != len(indices) - 1 or first < 0:
        return False
    return indices == _counting(indices.typecode, 1 << last.bit_length())[first : last + 1]


@functools.lru_cache(maxsize=1)
def _counting(typecode: str, stop: int) -> array[int]:
    """The numbers from 0 to `stop`, a power of 2: kept for the next stretches of a table's order (made again only
    each time it doubles; the last is at most twice the table's length, 8 bytes a number)."""
    return array(typecode, range(stop))
