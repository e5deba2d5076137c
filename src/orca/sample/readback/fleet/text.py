"""A fleet as `orca metrics` prints it for a person (docs/metrics.md, "A fleet"): one row per run in columns that
fit `WIDTH` characters (a long label is cut, never wrapped), the totals, then who stands out, by name and why."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from orca.sample.readback.fleet.columns import COLUMNS, Column, Figure, Said, own_io
from orca.sample.readback.fleet.records import (
    FAILED,
    GAPS,
    IDLE,
    NO_LINES,
    SATURATED,
    STRAGGLER,
    Fleet,
    FleetRow,
)
from orca.sample.readback.gather.records import ExitSummary
from orca.sample.readback.summary.text import SIGNAL_NAMES, printable, utc

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


def compact_size(count: float | None) -> str:
    """Bytes in a few characters: `0B`, `512B`, `1.5K`, `130M`, `12G`.

    >>> [compact_size(n) for n in (0, 512, 1536, 136 * 2**20, 12.4 * 2**30, None)]
    ['0B', '512B', '1.5K', '136M', '12G', '-']
    """
    if count is None:
        return "-"
    for unit in ("B", "K", "M", "G", "T", "P"):
        if count < 1024 or unit == "P":
            if unit == "B":
                return f"{count:.0f}B"
            return f"{count:.1f}{unit}" if count < 10 else f"{count:.0f}{unit}"
        count /= 1024
    return "-"  # not reached


def compact_span(seconds: float | None) -> str:
    """A duration in a few characters.

    >>> [compact_span(s) for s in (0.2, 20.06, 200, 3725, 90061, 3 * 86400 + 4 * 3600, None)]
    ['0.2s', '20.1s', '3m20s', '1h02m', '25h01m', '3d04h', '-']
    """
    if seconds is None or not math.isfinite(seconds):
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    if whole < 72 * 3600:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 86400}d{whole % 86400 // 3600:02d}h"


def end_text(ended: ExitSummary | None) -> str:
    """How a command ended, in a few characters; `-` when the lines do not say.

    >>> [end_text(ExitSummary(0, None, None, 1.0, None, None, None)), end_text(ExitSummary(None, 9, *[None] * 5))]
    ['exit 0', 'SIGKILL']
    >>> end_text(ExitSummary(127, None, "No such file", *[None] * 4)), end_text(None)
    ('no start', '-')
    """
    if ended is None:
        return "-"
    if ended.error is not None:
        return "no start"
    if ended.signal is not None:
        return SIGNAL_NAMES.get(ended.signal, f"sig {ended.signal}")
    return "-" if ended.code is None else f"exit {ended.code}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


MARKS = {"cgroup": LIMITED, "run": "", "host": HOST}
"""After a figure, by whose it is (`Column.whose`)."""


def _words(fleet: Fleet) -> dict[Said, Callable[[Any], str]]:
    """How the table says each kind of figure (`Said`)."""
    begins = [row.begin for row in fleet.rows if row.begin is not None]
    one_day = len({utc(begin)[:10] for begin in begins}) <= 1

    def moment(t: float | None) -> str:
        if t is None:
            return "-"
        return utc(t)[11:19] if one_day else f"{utc(t)[5:10]} {utc(t)[11:16]}"

    return {Said.LABEL: printable, Said.MOMENT: moment, Said.SPAN: compact_span, Said.COUNT: lambda count: f"{count:,}",
            Said.PERCENT: _percent, Said.SIZE: compact_size, Said.END: end_text,
            Said.FLAGS: lambda flags: ",".join(flag.flag for flag in flags)}


def _cell(figure: Figure[FleetRow], column: Column[FleetRow], said: Callable[[Any], str]) -> Callable[[FleetRow], str]:
    """A column's cell of a row: its figure as said, marked by whose it is."""
    of, whose = figure.of, column.whose
    if whose is None:
        return lambda row: said(of(row))

    def cell(row: FleetRow) -> str:
        value = of(row)
        mark = None if value is None else whose(row)
        return said(value) + ("" if mark is None else MARKS[mark])

    return cell


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def table_rows(fleet: Fleet) -> list[str]:
    """The header and one row per run, each at most `WIDTH` characters: the columns `COLUMNS` declares."""
    (label, label_column), *shown = COLUMNS
    columns = [column for _, column in shown]
    words = _words(fleet)
    each = [_cell(figure, column, words[column.said]) for figure, column in shown]
    cells = [[cell(row) for cell in each] for row in fleet.rows]
    widths = [max(len(column.header), *(len(row[index]) for row in cells)) for index, column in enumerate(columns)]
    fixed = sum(widths) + 2 * len(columns)  # two spaces before each column
    labels = list(map(_cell(label, label_column, words[label_column.said]), fleet.rows))
    label_width = max(MIN_LABEL, min(max(map(len, labels), default=0), WIDTH - fixed))
    flags_width = max(len(columns[-1].header), WIDTH - (fixed - widths[-1]) - label_width)

    def line(label: str, values: list[str]) -> str:
        parts = [_cut(label, label_width).ljust(label_width)]
        for value, width, column in zip(values[:-1], widths, columns, strict=False):
            parts.append(value.ljust(width) if column.left else value.rjust(width))
        parts.append(_cut(values[-1], flags_width))
        return "  ".join(parts).rstrip()[:WIDTH]

    header = line(label_column.header, [column.header for column in columns])
    return [header, *(line(label, row) for label, row in zip(labels, cells, strict=True))]


def number(value: float) -> str:
    """A total at three significant figures or more: `0.0312`, `4.17`, `1,234`.

    >>> [number(value) for value in (0.031234, 4.1666, 9600.0, 0.0)]
    ['0.0312', '4.17', '9,600', '0']
    """
    if value == 0 or not math.isfinite(value):
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{max(1, 2 - math.floor(math.log10(abs(value))))}f}"


def totals_rows(fleet: Fleet) -> list[str]:
    totals = fleet.totals
    when = ""
    if totals.first_start is not None and totals.last_end is not None:
        when = f" from {utc(totals.first_start)} to {utc(totals.last_end)}"
    cpu = "" if totals.cpu_percent is None else f" ({totals.cpu_percent:.1f}%)"
    memory = "" if totals.memory_percent is None else f" ({totals.memory_percent:.1f}%)"
    return [
        f"total: {totals.runs:,} run{'' if totals.runs == 1 else 's'}, {number(totals.instance_hours)} "
        f"instance-hours{when}",
        f"  cpu {number(totals.cpu_hours_used)} of {number(totals.cpu_hours_available)} CPU-hours used{cpu}, "
        f"memory {number(totals.memory_gib_hours_used)} of {number(totals.memory_gib_hours_available)} "
        f"GiB-hours{memory}",
    ]


def of_what(fleet: Fleet) -> list[str]:
    """What the figures of cpu%, mem% and io are of, for the kinds of row the fleet has: the run's own processes',
    its cgroup's limits (`LIMITED`), the host's as a whole (`HOST`)."""
    usages = [row.usage for row in fleet.rows if row.usage is not None]
    kinds = []
    if any(usage.cpu_own or usage.memory_own for usage in usages):
        kinds.append("cpu%, mem% and io are the run's own processes', of its host's cores and memory (net is the "
                     "host's)")
    if any(usage.cpu_limited or usage.memory_limited for usage in usages):
        kinds.append(f"{LIMITED}: of the run's cgroup limit")
    summaries = [row.summary for row in fleet.rows if row.summary is not None]
    if any(not (usage.cpu_own or usage.cpu_limited) or not (usage.memory_own or usage.memory_limited)
           for usage in usages) or any(not own_io(summary) for summary in summaries):
        kinds.append(f"{HOST}: the host's as a whole (lines without a run; io, without its run's io)")
    return [f"  ({'; '.join(kinds)})"] if kinds else []


def hosts_rows(fleet: Fleet) -> list[str]:
    """The hosts that were themselves saturated, apart from the runs on them."""
    if not fleet.hosts_saturated:
        return []
    width = min(max(len(printable(host.host)) for host in fleet.hosts_saturated), WIDTH // 3)
    return [f"hosts saturated ({len(fleet.hosts_saturated):,}), apart from the runs on them:",
            *(_cut(f"  {_cut(printable(host.host), width).ljust(width)}  {host.why} (under {host.runs:,} "
                   f"run{'s' if host.runs > 1 else ''})", WIDTH) for host in fleet.hosts_saturated)]


def stand_out_rows(fleet: Fleet) -> list[str]:
    """Who stands out: under each way, how many, then the first `MOST_NAMED` by name and why, each on a row of its
    own cut at `WIDTH`, and how many more; then the hosts saturated."""
    rows: list[str] = []
    for flag, title in LISTS:
        flagged = fleet.flagged(flag)
        if not flagged:
            continue
        rows.append(f"{title} ({len(flagged):,}):")
        named = [(printable(row.label), why) for row in flagged[:MOST_NAMED]
                 for why in (each.why for each in row.flags if each.flag == flag)]
        width = min(max(len(label) for label, _ in named), WIDTH // 3)
        rows += [_cut(f"  {_cut(label, width).ljust(width)}  {why}", WIDTH) for label, why in named]
        if len(flagged) > MOST_NAMED:
            rows.append(f"  and {len(flagged) - MOST_NAMED:,} more (--json lists them all)")
    rows += hosts_rows(fleet)
    return rows or ["none stands out: no run idle, saturated, failed, straggling, with gaps or without lines"]


def fleet_text(fleet: Fleet) -> str:
    rows = [*table_rows(fleet), *totals_rows(fleet), *of_what(fleet)]
    return "\n".join([*rows, "", *stand_out_rows(fleet)]) + "\n"
