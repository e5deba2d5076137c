"""A fleet as `orca metrics` prints it for a person (docs/metrics.md, "A fleet"): one row per run in columns that
fit `WIDTH` characters (a long label is cut, never wrapped), the totals, then who stands out, by name and why."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TextIO

from orca.sample.readback.cells import (
    Percents,
    count_cells,
    days_and_minutes,
    one_value,
    percent_cells,
    size_cells,
    times_of_day,
)
from orca.sample.readback.fleet.columns import COLUMNS
from orca.sample.readback.fleet.fields import (
    BEGIN,
    CPU_LIMITED,
    CPU_OWN,
    FIELDS,
    FIRST_T,
    LAST_T,
    MEMORY_LIMITED,
    MEMORY_OWN,
    OWN_IO,
    USAGE_BIT,
)
from orca.sample.readback.fleet.flags import FAILED, GAPS, IDLE, NO_LINES, SATURATED, STRAGGLER
from orca.sample.readback.fleet.records import FleetTotals
from orca.sample.readback.fleet.rows import NONE, pick
from orca.sample.readback.fleet.table import Table
from orca.sample.readback.gather.records import ExitSummary
from orca.sample.readback.words import MISSING, count, cut, duration, exit_cell, number, percent, printable, utc

WIDTH = 120
"""The widest a row is: a terminal's usual width."""
MIN_LABEL = 12
MOST_NAMED = 20
"""Names listed at most for each way of standing out; the rest are counted (`--json` lists them all)."""
LISTS = ((SATURATED, "saturated"), (FAILED, "failed"), (IDLE, "idle"), (STRAGGLER, "stragglers"), (GAPS, "gaps"),
         (NO_LINES, "no lines"))
"""Who stands out, in the order said, each under the name it is said with."""
LIMITED = "*"
"""After a figure of the run's cgroup's limit."""
HOST = "^"
"""After a figure of the host as a whole, in a row whose lines have no run (or a run without `run.io`, for io)."""


HEADERS = tuple(str(column.header) for column in COLUMNS[1:])
"""The headers of the columns after the label, as `COLUMNS` declares them."""


def _widths(widths: list[int], longest_label: int) -> tuple[int, int]:
    """The label's width and the flags' most, given each column's width (the flags' last) and the longest label: the
    label cut to what the other columns leave of `WIDTH`, and the flags to what is left."""
    fixed = sum(widths) + 2 * len(widths)  # two spaces before each column
    label_width = max(MIN_LABEL, min(longest_label, WIDTH - fixed))
    return label_width, max(len(HEADERS[-1]), WIDTH - (fixed - widths[-1]) - label_width)


def lines_template(widths: list[int], longest_label: int, left: list[bool]) -> Callable[[list[list[str]]], list[str]]:
    """How rows are laid out, given each column's width (the flags' last), the longest label and which columns are
    left-aligned (`_widths`): the rows given as their columns (the label's first), each row laid out by one `%` of a
    template of the columns' widths, in which a column of one cell (as a file of one-line runs' spans and lines are)
    is written once."""
    label_width, flags_width = _widths(widths, longest_label)
    pads = [(str.ljust, f"%-{width}s") if on_left else (str.rjust, f"%{width}s")
            for on_left, width in zip(left[: len(widths) - 1], widths[:-1], strict=True)]

    def lines(given: list[list[str]]) -> list[str]:
        labels, *cells, flags = given
        if max(map(len, labels), default=0) > label_width:
            labels = [cut(label, label_width) for label in labels]
        if max(map(len, flags), default=0) > flags_width:
            flags = [flag if len(flag) <= flags_width else cut(flag, flags_width) for flag in flags]
        template, varying = [f"%-{label_width}s"], [labels]
        for (pad, placed), width, column in zip(pads, widths[:-1], cells, strict=True):
            if one_value(column):
                template.append(pad(column[0], width).replace("%", "%%"))
            else:
                template.append(placed)
                varying.append(column)
        laid = list(map(str.rstrip, map("  ".join([*template, "%s"]).__mod__, zip(*varying, flags, strict=True))))
        return laid if max(map(len, laid), default=0) <= WIDTH else [line[:WIDTH] for line in laid]

    return lines


def totals_rows(totals: FleetTotals) -> list[str]:
    when = ""
    if totals.first_start is not None and totals.last_end is not None:
        when = f" from {utc(totals.first_start)} to {utc(totals.last_end)}"
    cpu = "" if totals.cpu_percent is None else f" ({percent(totals.cpu_percent)})"
    memory = "" if totals.memory_percent is None else f" ({percent(totals.memory_percent)})"
    return [
        f"total: {count(totals.runs, 'run')}, {number(totals.instance_hours)} "
        f"instance-hours{when}",
        f"  cpu {number(totals.cpu_hours_used)} of {number(totals.cpu_hours_available)} CPU-hours used{cpu}, "
        f"memory {number(totals.memory_gib_hours_used)} of {number(totals.memory_gib_hours_available)} "
        f"GiB-hours{memory}",
    ]


def kinds_said(table: Table) -> list[str]:
    """What the figures of cpu%, mem% and io are of, when some rows are the run's own processes', some of their
    cgroup's limits (`LIMITED`), some the host's as a whole (`HOST`)."""
    bits = set(table.rows.bits)  # each kind of row once
    used = [each for each in bits if each & USAGE_BIT]
    kinds = []
    if any(each & (CPU_OWN | MEMORY_OWN) for each in used):
        kinds.append("cpu%, mem% and io are the run's own processes', of its host's cores and memory (net is the "
                     "host's)")
    if any(each & (CPU_LIMITED | MEMORY_LIMITED) for each in used):
        kinds.append(f"{LIMITED}: of the run's cgroup limit")
    if any(not each & (CPU_OWN | CPU_LIMITED) or not each & (MEMORY_OWN | MEMORY_LIMITED) for each in used) or \
            any(not each & OWN_IO for each in bits):
        kinds.append(f"{HOST}: the host's as a whole (lines without a run; io, without its run's io)")
    return [f"  ({'; '.join(kinds)})"] if kinds else []


def stand_out_rows(table: Table) -> list[str]:
    """Who stands out: under each way, how many, then the first `MOST_NAMED` by name and why, each on a row of its own
    cut at `WIDTH`, and how many more; then the hosts that were themselves saturated, apart from the runs on them."""
    rows: list[str] = []
    for flag, title in LISTS:
        flagged = table.flagged(flag)
        if not flagged:
            continue
        named = flagged[:MOST_NAMED]
        firsts = [(printable(label), each.why) for index, label in zip(named, table.labels(named), strict=True)
                  for each in table.flags(index) if each.flag == flag]
        rows.append(f"{title} ({len(flagged):,}):")
        width = min(max(len(label) for label, _ in firsts), WIDTH // 3)
        rows += [cut(f"  {cut(label, width).ljust(width)}  {why}", WIDTH) for label, why in firsts]
        if len(flagged) > MOST_NAMED:
            rows.append(f"  and {len(flagged) - MOST_NAMED:,} more (--json lists them all)")
    if hosts := table.hosts_saturated:
        width = min(max(len(printable(host.host)) for host in hosts), WIDTH // 3)
        rows += [f"hosts saturated ({len(hosts):,}), apart from the runs on them:",
                 *(cut(f"  {cut(printable(host.host), width).ljust(width)}  {host.why} "
                       f"(under {count(host.runs, 'run')})", WIDTH) for host in hosts)]
    return rows or ["none stands out: no run idle, saturated, failed, straggling, with gaps or without lines"]


def row_cells(table: Table, one_day: bool) -> Callable[[Sequence[int]], list[list[str]]]:
    """How a table's rows are said after their labels, each column as `COLUMNS` declares (`Figure.said`, marked by
    `Figure.whose`): of the rows at some indices, each column's cells (a column at a time: a few thousand rows cost a
    comprehension a column, not a call a row). A source without runs is a row of `-` but its 0 lines and its flag."""
    rows = table.rows
    first, last, bits, ends, flagged, has = (rows.floats(FIRST_T), rows.floats(LAST_T), rows.bits, rows.ends,
                                             table.flags, table.flagged_rows)
    start = times_of_day if one_day else days_and_minutes

    def starts(field: int, indices: Sequence[int], _: list[str] | None) -> list[str]:
        return start(pick(rows.floats(field), indices))

    def spans(_: int, indices: Sequence[int], __: list[str] | None) -> list[str]:
        lows, highs = pick(first, indices), pick(last, indices)
        if lows == highs:  # runs of one line (none NaN: NaN is not equal to itself)
            return [duration(0.0)] * len(indices)
        # `max(0.0, ...)` without a call a row.
        lengths = [length if (length := high - low) > 0.0 else 0.0 for low, high in zip(lows, highs, strict=True)]
        said = {length: duration(round(length, 3)) for length in set(lengths)}  # once each: one-line runs' are all 0
        return list(map(said.__getitem__, lengths))

    def counts(field: int, indices: Sequence[int], _: list[str] | None) -> list[str]:
        return count_cells(pick(rows.ints(field), indices))

    def marked(cells: list[str], indices: Sequence[int], marks: list[str]) -> list[str]:
        return [cell if cell == MISSING else cell + marks[kind] for cell, kind in zip(cells, pick(bits, indices),
                                                                                      strict=True)]

    # Most tables' rows are all of one kind: then a column's mark is said with each of its cells, not joined to each.
    kinds = set(bits)
    alike = next(iter(kinds)) if len(kinds) == 1 else None

    kept: dict[int, Percents] = {}
    """Each percent column's cells said so far, by field (a column of one-decimal shares has few)."""

    def percents(field: int, indices: Sequence[int], marks: list[str] | None) -> list[str]:
        shares = pick(rows.floats(field), indices)
        after = "" if marks is None or alike is None else marks[alike]
        if (said := kept.get(field)) is None:
            said = kept[field] = Percents(after)
        if marks is None or alike is not None:
            return percent_cells(shares, after, said)
        return marked(percent_cells(shares, "", said), indices, marks)

    def sizes(field: int, indices: Sequence[int], marks: list[str] | None) -> list[str]:
        counts = rows.held(field, indices)
        if marks is None:
            return size_cells(counts, NONE)
        if alike is not None:
            return size_cells(counts, NONE, marks[alike])
        return marked(size_cells(counts, NONE), indices, marks)

    def exits(_: int, indices: Sequence[int], __: list[str] | None) -> list[str]:
        if not ends:
            return [MISSING] * len(indices)
        return [MISSING if (ended := ends.get(index)) is None else exit_cell(ExitSummary(*ended, None, None, None))
                for index in indices]

    def flags(_: int, indices: Sequence[int], __: list[str] | None) -> list[str]:
        return [",".join(flag.flag for flag in flagged(index)) if index in has else "" for index in indices]

    ways = {"start": starts, "span": spans, "count": counts, "percent": percents, "size": sizes, "exit": exits,
            "flags": flags}
    said = [(ways[figure.said], FIELDS.index(held) if isinstance(held := figure.held or figure.key, str) else -1,
             None if figure.whose is None else _marks(*figure.whose)) for figure in COLUMNS[1:]]
    # A source without runs: no figure but its 0 lines (the only count shown).
    empty = [f"{0:,}" if figure.said == "count" else MISSING for figure in COLUMNS[1:-1]]

    def cells(indices: Sequence[int]) -> list[list[str]]:
        if indices and max(indices) >= len(rows):
            runs = iter(zip(*cells([index for index in indices if index < len(rows)]), strict=True))
            return [list(column) for column in zip(*(next(runs) if index < len(rows) else
                                                     (*empty, *flags(-1, [index], None)) for index in indices),
                                                   strict=True)]
        return [say(field, indices, marks) for say, field, marks in said]

    return cells


def _marks(limited: int, own: int) -> list[str]:
    """What is said after a figure, by a row's `bits`: `LIMITED` for its cgroup's limit's, nothing for its run's own
    processes', else `HOST`."""
    return [LIMITED if kind & limited else "" if kind & own else HOST for kind in range(256)]


_CHUNK = 4096
"""Rows said at a time: their cells held while their widths are taken, a few MB."""


def table_text(table: Table, said: TextIO) -> Iterator[str]:
    """A table as text for a person (a fleet's, or of a source's runs), a piece at a time.
    Each row is said once, into `said` (a temporary file, empty, open to write and read), while the columns' widths
    are found; then laid out from there. Each piece of rows is said a column after the other, a cell a line (no cell
    has a line's end: `printable` escapes it), and read back so."""
    rows = table.rows
    begins = rows.floats(BEGIN)
    one_day = utc(min(begins))[:10] == utc(max(begins))[:10]  # `utc` never goes back as its time goes on
    cells = row_cells(table, one_day)
    widths = [len(header) for header in HEADERS]
    label_length = 0
    order = table.order
    written: list[list[int]] = []
    """Of each piece of rows, the length of each column said."""
    for at in range(0, len(order), _CHUNK):
        indices: Sequence[int] = range(at, min(at + _CHUNK, len(order))) if table.in_order else order[at : at + _CHUNK]
        labels = table.labels(indices)
        if not all(map(str.isprintable, labels)):  # seldom: not a call a label
            labels = list(map(printable, labels))
        label_length = max(label_length, max(map(len, labels)))
        columns = cells(indices)
        widths = [max(width, max(map(len, column))) for width, column in zip(widths, columns, strict=True)]
        texts = ["\n".join(column) for column in (labels, *columns)]
        said.write("".join(texts))
        written.append(list(map(len, texts)))
    said.seek(0)
    laid = lines_template(widths, label_length, [column.left for column in COLUMNS[1:]])
    yield laid([[str(COLUMNS[0].header)], *([header] for header in HEADERS)])[0] + "\n"
    for lengths in written:
        yield "\n".join(laid([said.read(length).split("\n") for length in lengths])) + "\n"
    yield "\n".join([*totals_rows(table.totals), *kinds_said(table), "", *stand_out_rows(table)]) + "\n"
