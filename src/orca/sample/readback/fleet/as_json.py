"""A fleet as `orca metrics --json` prints it for a script (docs/metrics.md, "A fleet"): one JSON object with the
table's rows (each run's summary inside its row, as `--json` prints one run's), the totals, and who stands out, each
a list of labels. Numbers at the lines' precision, as for one run's summary."""

from __future__ import annotations

from orca.sample.readback.fleet.records import FAILED, GAPS, IDLE, NO_LINES, SATURATED, STRAGGLER, Fleet, FleetRow
from orca.sample.readback.fleet.table import io_bytes, net_bytes, own_io, rss_peak
from orca.sample.readback.summary.as_json import document, encoded
from orca.sample.readback.words import utc

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
    return _rounded({
        "label": row.label,
        "name": row.name,
        "host": None if summary is None else summary.host,
        "start": row.begin,
        "start_utc": _utc(row.begin),
        "end": row.end,
        "duration": None if summary is None else summary.duration,
        "span": row.span,
        "lines": 0 if summary is None else summary.lines,
        "cpus": None if usage is None else usage.cpus,
        "cpus_limited": None if usage is None else usage.cpu_limited,
        "cpu_of": None if usage is None else _of(usage.cpu_limited, usage.cpu_own),
        "cpu_percent": None if usage is None else usage.cpu_percent,
        "cpu_p95_percent": None if usage is None else usage.cpu_p95,
        "memory_bytes": None if usage is None or usage.memory_bytes is None else round(usage.memory_bytes),
        "memory_limited": None if usage is None else usage.memory_limited,
        "memory_of": None if usage is None else _of(usage.memory_limited, usage.memory_own),
        "memory_percent": None if usage is None else usage.memory_percent,
        "memory_peak_percent": None if usage is None else usage.memory_peak_percent,
        "rss_peak": rss_peak(summary),
        "disk_peak_percent": None if summary is None or summary.disk is None else summary.disk.peak_percent,
        "io_bytes": io_bytes(summary),
        "io_of": None if summary is None else "run" if own_io(summary) else "host",
        "net_bytes": net_bytes(summary),
        "exit": None if ended is None else {"code": ended.code, "signal": ended.signal, "error": ended.error},
        "flags": [{"flag": flag.flag, "why": flag.why} for flag in row.flags],
        "summary": None if summary is None else document(summary),
    })


def fleet_document(fleet: Fleet) -> dict[str, object]:
    totals = fleet.totals
    document: dict[str, object] = {
        "rows": [row_document(row) for row in fleet.rows],
        "sorted_by": fleet.sorted_by,
        "totals": _rounded({
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
        }),
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
