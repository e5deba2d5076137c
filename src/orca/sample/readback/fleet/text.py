"""A fleet as `orca metrics` prints it for a person (docs/metrics.md, "A fleet"): one row per run in columns that
fit `WIDTH` characters (a long label is cut, never wrapped), the totals, then who stands out, by name and why."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from orca.sample.readback.fleet.records import (
    FAILED,
    GAPS,
    IDLE,
    NO_LINES,
    SATURATED,
    STRAGGLER,
    Fleet,
    FleetRow,
    FleetTotals,
    HostFlag,
)
from orca.sample.readback.fleet.table import io_bytes, net_bytes, own_io, rss_peak
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


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    cell: Callable[[FleetRow], str]
    left: bool = False


def _cells(fleet: Fleet) -> list[Column]:
    """The columns after the label, the flags last."""
    begins = [row.begin for row in fleet.rows if row.begin is not None]
    one_day = len({utc(begin)[:10] for begin in begins}) <= 1

    def start(row: FleetRow) -> str:
        if row.begin is None:
            return "-"
        return utc(row.begin)[11:19] if one_day else f"{utc(row.begin)[5:10]} {utc(row.begin)[11:16]}"

    def cpu(row: FleetRow) -> str:
        usage = row.usage
        if usage is None or usage.cpu_percent is None:
            return "-"
        return _percent(usage.cpu_percent) + (LIMITED if usage.cpu_limited else "" if usage.cpu_own else HOST)

    def memory(row: FleetRow) -> str:
        usage = row.usage
        if usage is None or usage.memory_peak_percent is None:
            return "-"
        return _percent(usage.memory_peak_percent) + (LIMITED if usage.memory_limited else "" if usage.memory_own
                                                      else HOST)

    def io(row: FleetRow) -> str:
        moved = io_bytes(row.summary)
        return compact_size(moved) + ("" if moved is None or own_io(row.summary) else HOST)

    return [
        Column("start", start),
        Column("span", lambda row: compact_span(row.span)),
        Column("lines", lambda row: "0" if row.summary is None else f"{row.summary.lines:,}"),
        Column("cpu%", cpu),
        Column("p95", lambda row: _percent(None if row.usage is None else row.usage.cpu_p95)),
        Column("mem%", memory),
        Column("rss", lambda row: compact_size(rss_peak(row.summary))),
        Column("disk%", lambda row: _percent(None if row.summary is None or row.summary.disk is None
                                             else row.summary.disk.peak_percent)),
        Column("io", io),
        Column("net", lambda row: compact_size(net_bytes(row.summary))),
        Column("end", lambda row: end_text(None if row.summary is None or row.summary.run is None
                                           else row.summary.run.exit), left=True),
        Column("flags", lambda row: ",".join(flag.flag for flag in row.flags), left=True),
    ]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


HEADERS = ("start", "span", "lines", "cpu%", "p95", "mem%", "rss", "disk%", "io", "net", "end", "flags")
"""The headers of the columns after the label, as `_cells` gives them."""


def table_rows(fleet: Fleet) -> list[str]:
    """The header and one row per run, each at most `WIDTH` characters."""
    columns = _cells(fleet)
    cells = [[column.cell(row) for column in columns] for row in fleet.rows]
    widths = [max(len(column.header), *(len(row[index]) for row in cells)) for index, column in enumerate(columns)]
    labels = [printable(row.label) for row in fleet.rows]
    line = line_maker(widths, max(map(len, labels), default=0), [column.left for column in columns])
    header = line("instance", [column.header for column in columns])
    return [header, *(line(label, row) for label, row in zip(labels, cells, strict=True))]


def line_maker(widths: list[int], longest_label: int, left: list[bool]) -> Callable[[str, list[str]], str]:
    """How a row is laid out, given each column's width (the flags' last), the longest label and which columns are
    left-aligned: the label cut to what the other columns leave of `WIDTH`, and the flags to what is left."""
    fixed = sum(widths) + 2 * len(widths)  # two spaces before each column
    label_width = max(MIN_LABEL, min(longest_label, WIDTH - fixed))
    flags_width = max(len(HEADERS[-1]), WIDTH - (fixed - widths[-1]) - label_width)

    def line(label: str, values: list[str]) -> str:
        parts = [_cut(label, label_width).ljust(label_width)]
        for value, width, on_left in zip(values[:-1], widths, left, strict=False):
            parts.append(value.ljust(width) if on_left else value.rjust(width))
        parts.append(_cut(values[-1], flags_width))
        return "  ".join(parts).rstrip()[:WIDTH]

    return line


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


def totals_rows(totals: FleetTotals) -> list[str]:
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
    """What the figures of cpu%, mem% and io are of, for the kinds of row the fleet has (`kinds_said`)."""
    usages = [row.usage for row in fleet.rows if row.usage is not None]
    summaries = [row.summary for row in fleet.rows if row.summary is not None]
    return kinds_said(any(usage.cpu_own or usage.memory_own for usage in usages),
                      any(usage.cpu_limited or usage.memory_limited for usage in usages),
                      any(not (usage.cpu_own or usage.cpu_limited) or not (usage.memory_own or usage.memory_limited)
                          for usage in usages) or any(not own_io(summary) for summary in summaries))


def kinds_said(own: bool, limited: bool, host: bool) -> list[str]:
    """What the figures of cpu%, mem% and io are of, when some rows are the run's own processes' (`own`), some of
    their cgroup's limits (`LIMITED`), some the host's as a whole (`HOST`)."""
    kinds = []
    if own:
        kinds.append("cpu%, mem% and io are the run's own processes', of its host's cores and memory (net is the "
                     "host's)")
    if limited:
        kinds.append(f"{LIMITED}: of the run's cgroup limit")
    if host:
        kinds.append(f"{HOST}: the host's as a whole (lines without a run; io, without its run's io)")
    return [f"  ({'; '.join(kinds)})"] if kinds else []


def hosts_rows(hosts: tuple[HostFlag, ...]) -> list[str]:
    """The hosts that were themselves saturated, apart from the runs on them."""
    if not hosts:
        return []
    width = min(max(len(printable(host.host)) for host in hosts), WIDTH // 3)
    return [f"hosts saturated ({len(hosts):,}), apart from the runs on them:",
            *(_cut(f"  {_cut(printable(host.host), width).ljust(width)}  {host.why} (under {host.runs:,} "
                   f"run{'s' if host.runs > 1 else ''})", WIDTH) for host in hosts)]


def stand_out_rows(fleet: Fleet) -> list[str]:
    """Who stands out (`stand_out_text`)."""
    named = []
    for flag, title in LISTS:
        flagged = fleet.flagged(flag)
        named.append((title, len(flagged), [(printable(row.label), why) for row in flagged[:MOST_NAMED]
                                            for why in (each.why for each in row.flags if each.flag == flag)]))
    return stand_out_text(named, fleet.hosts_saturated)


def stand_out_text(named: list[tuple[str, int, list[tuple[str, str]]]], hosts: tuple[HostFlag, ...]) -> list[str]:
    """Who stands out: under each way (its title, how many, and the first `MOST_NAMED` labels with why), how many,
    then those by name and why, each on a row of its own cut at `WIDTH`, and how many more; then the hosts
    saturated."""
    rows: list[str] = []
    for title, count, firsts in named:
        if not count:
            continue
        rows.append(f"{title} ({count:,}):")
        width = min(max(len(label) for label, _ in firsts), WIDTH // 3)
        rows += [_cut(f"  {_cut(label, width).ljust(width)}  {why}", WIDTH) for label, why in firsts]
        if count > MOST_NAMED:
            rows.append(f"  and {count - MOST_NAMED:,} more (--json lists them all)")
    rows += hosts_rows(hosts)
    return rows or ["none stands out: no run idle, saturated, failed, straggling, with gaps or without lines"]


def fleet_text(fleet: Fleet) -> str:
    rows = [*table_rows(fleet), *totals_rows(fleet.totals), *of_what(fleet)]
    return "\n".join([*rows, "", *stand_out_rows(fleet)]) + "\n"
