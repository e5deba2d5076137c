"""A fleet as `orca metrics --json` prints it for a script (docs/metrics.md, "A fleet"): one JSON object with the
table's rows (each run's summary inside its row, as `--json` prints one run's), the totals, and who stands out, each
a list of labels. Numbers at the lines' precision, as for one run's summary."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from orca.sample.readback.fleet import rows as kept
from orca.sample.readback.fleet.records import FAILED, GAPS, IDLE, NO_LINES, SATURATED, STRAGGLER, Fleet, FleetRow
from orca.sample.readback.fleet.table import io_bytes, net_bytes, own_io, rss_peak
from orca.sample.readback.summary.as_json import document, encoded
from orca.sample.readback.words import utc

if TYPE_CHECKING:
    from orca.sample.readback.fleet.records import FleetTotals

LISTS = {"idle": IDLE, "saturated": SATURATED, "stragglers": STRAGGLER, "gaps": GAPS, "no_lines": NO_LINES}
"""The keys of who stands out, and the flag each lists."""
PLACES = {"instance_hours": 6, "cpu_hours_used": 6, "cpu_hours_available": 6, "memory_gib_hours_used": 6,
          "memory_gib_hours_available": 6, "cpus": 3, "start": 3, "end": 3, "duration": 3, "span": 3, "first_start": 3,
          "last_end": 3}
"""Decimals of the fleet's numbers that are not percentages (one decimal) or bytes (whole): times to the millisecond,
as the lines carry them, CPUs to the thousandth, as `cgroup.cpu_max`, and hours to the millionth (3.6 ms: a short
fleet's hours are small)."""


def _rounded(fields: dict[str, object]) -> dict[str, object]:
    """`fields` with each float at its decimals (`PLACES`); what is not a float (a run's summary, already rounded)
    as it is."""
    return {key: round(value, PLACES.get(key, 1)) if isinstance(value, float) else value
            for key, value in fields.items()}


def _utc(t: float | None) -> str | None:
    return None if t is None else utc(t)


def _of(limited: bool, own: bool) -> str:
    return "cgroup" if limited else "run" if own else "host"


def row_document(row: FleetRow) -> dict[str, object]:
    """One row's object: what the table shows, named for its unit, then the run's summary."""
    usage, summary = row.usage, row.summary
    ended = None if summary is None or summary.run is None else summary.run.exit
    return _row_object({
        "label": row.label, "name": row.name, "host": None if summary is None else summary.host, "start": row.begin,
        "end": row.end, "duration": None if summary is None else summary.duration, "span": row.span,
        "lines": 0 if summary is None else summary.lines, "usage": usage is not None,
        "cpus": None if usage is None else usage.cpus, "cpu_limited": usage is not None and usage.cpu_limited,
        "cpu_own": usage is not None and usage.cpu_own, "cpu_percent": None if usage is None else usage.cpu_percent,
        "cpu_p95": None if usage is None else usage.cpu_p95,
        "memory_bytes": None if usage is None else usage.memory_bytes,
        "memory_limited": usage is not None and usage.memory_limited,
        "memory_own": usage is not None and usage.memory_own,
        "memory_percent": None if usage is None else usage.memory_percent,
        "memory_peak_percent": None if usage is None else usage.memory_peak_percent, "rss_peak": rss_peak(summary),
        "disk_peak_percent": None if summary is None or summary.disk is None else summary.disk.peak_percent,
        "io_bytes": io_bytes(summary), "own_io": own_io(summary), "net_bytes": net_bytes(summary),
        "exit": None if ended is None else {"code": ended.code, "signal": ended.signal, "error": ended.error},
        "flags": row.flags,
    }, None if summary is None else document(summary))


def _row_object(fields: dict[str, Any], summary: object) -> dict[str, object]:
    """A row's object from its figures (`fields`: as `row_document` gathers them) and its summary's document."""
    used = fields["usage"]
    memory_bytes = fields["memory_bytes"]
    return _rounded({
        "label": fields["label"],
        "name": fields["name"],
        "host": fields["host"],
        "start": fields["start"],
        "start_utc": _utc(fields["start"]),
        "end": fields["end"],
        "duration": fields["duration"],
        "span": fields["span"],
        "lines": fields["lines"],
        "cpus": fields["cpus"],
        "cpus_limited": fields["cpu_limited"] if used else None,
        "cpu_of": _of(fields["cpu_limited"], fields["cpu_own"]) if used else None,
        "cpu_percent": fields["cpu_percent"],
        "cpu_p95_percent": fields["cpu_p95"],
        "memory_bytes": None if memory_bytes is None else round(memory_bytes),
        "memory_limited": fields["memory_limited"] if used else None,
        "memory_of": _of(fields["memory_limited"], fields["memory_own"]) if used else None,
        "memory_percent": fields["memory_percent"],
        "memory_peak_percent": fields["memory_peak_percent"],
        "rss_peak": fields["rss_peak"],
        "disk_peak_percent": fields["disk_peak_percent"],
        "io_bytes": fields["io_bytes"],
        "io_of": None if fields["host"] is None else "run" if fields["own_io"] else "host",
        "net_bytes": fields["net_bytes"],
        "exit": fields["exit"],
        "flags": [{"flag": flag.flag, "why": flag.why} for flag in fields["flags"]],
        "summary": summary,
    })


def row_json(fields: dict[str, Any], summary: str) -> str:
    """A row's object encoded, from its figures (as `row_document` gathers them) and its summary's document,
    encoded: as `fleet_json` writes the row."""
    return encoded(_row_object(fields, None))[: -len('null}')] + summary + "}"


def totals_document(totals: FleetTotals) -> dict[str, object]:
    return _rounded({
        "runs": totals.runs,
        "instance_hours": totals.instance_hours,
        "cpu_hours_used": totals.cpu_hours_used,
        "cpu_hours_available": totals.cpu_hours_available,
        "cpu_percent": totals.cpu_percent,
        "memory_gib_hours_used": totals.memory_gib_hours_used,
        "memory_gib_hours_available": totals.memory_gib_hours_available,
        "memory_percent": totals.memory_percent,
        "first_start": totals.first_start,
        "first_start_utc": _utc(totals.first_start),
        "last_end": totals.last_end,
        "last_end_utc": _utc(totals.last_end),
    })


def fleet_document(fleet: Fleet) -> dict[str, object]:
    totals = fleet.totals
    document: dict[str, object] = {
        "rows": [row_document(row) for row in fleet.rows],
        "sorted_by": fleet.sorted_by,
        "totals": totals_document(totals),
    }
    for key, flag in LISTS.items():
        document[key] = [row.label for row in fleet.flagged(flag)]
    document["failed"] = [{"label": row.label, "how": each.why} for row in fleet.flagged(FAILED)
                          for each in row.flags if each.flag == FAILED]
    document["hosts_saturated"] = [{"host": host.host, "runs": host.runs, "why": host.why}
                                   for host in fleet.hosts_saturated]
    return document


def fleet_json(fleet: Fleet) -> str:
    """The fleet as one line of JSON."""
    return encoded(fleet_document(fleet)) + "\n"


def rows_json(table: kept.Table, summaries: Callable[[int], str]) -> Iterator[str]:
    """A source's runs kept as rows (`fleet/rows.py`) as `fleet_json` prints a fleet of them, a piece at a time:
    `summaries(index)` is row `index`'s summary's document, encoded."""
    rows = table.rows
    yield '{"rows":['
    chunk: list[str] = []
    for position, index in enumerate(table.order):
        ended = rows.ends.get(index)
        fields = {
            "label": table.label(index), "name": table.name, "host": rows.hosts[rows.host[index]],
            "start": rows.value(kept.BEGIN, index), "end": rows.value(kept.LAST_T, index),
            "duration": rows.value(kept.DURATION, index),
            "span": round(max(0.0, rows.floats(kept.LAST_T)[index] - rows.floats(kept.FIRST_T)[index]), 3),
            "lines": rows.value(kept.LINES, index), "usage": bool(rows.bits[index] & kept.USAGE_BIT),
            "cpus": rows.value(kept.CPUS, index), "cpu_limited": bool(rows.bits[index] & kept.CPU_LIMITED),
            "cpu_own": bool(rows.bits[index] & kept.CPU_OWN), "cpu_percent": rows.value(kept.CPU, index),
            "cpu_p95": rows.value(kept.P95, index), "memory_bytes": rows.value(kept.MEMORY_BYTES, index),
            "memory_limited": bool(rows.bits[index] & kept.MEMORY_LIMITED),
            "memory_own": bool(rows.bits[index] & kept.MEMORY_OWN),
            "memory_percent": rows.value(kept.MEMORY_PERCENT, index),
            "memory_peak_percent": rows.value(kept.MEMORY_PEAK, index), "rss_peak": rows.value(kept.RSS, index),
            "disk_peak_percent": rows.value(kept.DISK, index), "io_bytes": rows.value(kept.IO, index),
            "own_io": bool(rows.bits[index] & kept.OWN_IO), "net_bytes": rows.value(kept.NET, index),
            "exit": None if ended is None else {"code": ended[0], "signal": ended[1], "error": ended[2]},
            "flags": table.flags(index),
        }
        chunk.append(("," if position else "") + row_json(fields, summaries(index)))
        if len(chunk) >= 1024:
            yield "".join(chunk)
            chunk = []
    yield "".join(chunk)
    rest: dict[str, object] = {"sorted_by": table.sorted_by, "totals": totals_document(table.totals)}
    for key, flag in LISTS.items():
        rest[key] = [table.label(index) for index in table.flagged(flag)]
    rest["failed"] = [{"label": table.label(index), "how": each.why} for index in table.flagged(FAILED)
                      for each in table.flags(index) if each.flag == FAILED]
    rest["hosts_saturated"] = [{"host": host.host, "runs": host.runs, "why": host.why}
                               for host in table.hosts_saturated]
    yield "]," + encoded(rest)[1:] + "\n"
