"""A fleet as `orca metrics` prints it for a person (docs/metrics.md, "A fleet"): one row per run in columns that
fit `WIDTH` characters (a long label is cut, never wrapped), the totals, then who stands out, by name and why."""

from __future__ import annotations

from collections.abc import Callable

from orca.sample.readback.fleet.columns import COLUMNS, Column, Figure, own_io
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
from orca.sample.readback.words import MISSING, count, cut, number, percent, printable, utc

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


MARKS = {"cgroup": LIMITED, "run": "", "host": HOST}
"""After a figure, by whose it is (`Column.whose`)."""


def _cell(figure: Figure[FleetRow], column: Column[FleetRow], over_days: bool) -> Callable[[FleetRow], str]:
    """A column's cell of a row: its figure as the column says it (`-` without it), marked by whose it is."""
    of, whose = figure.of, column.whose
    said = column.over_days if over_days and column.over_days is not None else column.said

    def cell(row: FleetRow) -> str:
        value = of(row)
        if value is None:
            return MISSING
        mark = None if whose is None else whose(row)
        return said(value) + ("" if mark is None else MARKS[mark])

    return cell


def table_rows(fleet: Fleet) -> list[str]:
    """The header and one row per run, each at most `WIDTH` characters: the columns `COLUMNS` declares."""
    (label, label_column), *shown = COLUMNS
    columns = [column for _, column in shown]
    over_days = len({utc(row.begin)[:10] for row in fleet.rows if row.begin is not None}) > 1
    each = [_cell(figure, column, over_days) for figure, column in shown]
    cells = [[cell(row) for cell in each] for row in fleet.rows]
    widths = [max(len(column.header), *(len(row[index]) for row in cells)) for index, column in enumerate(columns)]
    fixed = sum(widths) + 2 * len(columns)  # two spaces before each column
    labels = list(map(_cell(label, label_column, over_days), fleet.rows))
    label_width = max(MIN_LABEL, min(max(map(len, labels), default=0), WIDTH - fixed))
    flags_width = max(len(columns[-1].header), WIDTH - (fixed - widths[-1]) - label_width)

    def line(label: str, values: list[str]) -> str:
        parts = [cut(label, label_width).ljust(label_width)]
        for value, width, column in zip(values[:-1], widths, columns, strict=False):
            parts.append(value.ljust(width) if column.left else value.rjust(width))
        parts.append(cut(values[-1], flags_width))
        return "  ".join(parts).rstrip()[:WIDTH]

    header = line(label_column.header, [column.header for column in columns])
    return [header, *(line(label, row) for label, row in zip(labels, cells, strict=True))]


def totals_rows(fleet: Fleet) -> list[str]:
    totals = fleet.totals
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
            *(cut(f"  {cut(printable(host.host), width).ljust(width)}  {host.why} (under {count(host.runs, 'run')})",
                  WIDTH) for host in fleet.hosts_saturated)]


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
        rows += [cut(f"  {cut(label, width).ljust(width)}  {why}", WIDTH) for label, why in named]
        if len(flagged) > MOST_NAMED:
            rows.append(f"  and {len(flagged) - MOST_NAMED:,} more (--json lists them all)")
    rows += hosts_rows(fleet)
    return rows or ["none stands out: no run idle, saturated, failed, straggling, with gaps or without lines"]


def fleet_text(fleet: Fleet) -> str:
    rows = [*table_rows(fleet), *totals_rows(fleet), *of_what(fleet)]
    return "\n".join([*rows, "", *stand_out_rows(fleet)]) + "\n"
