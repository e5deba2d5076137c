"""A fleet as `orca metrics --json` prints it for a script (docs/metrics.md, "A fleet"): one JSON object with the
table's rows (each run's summary inside its row, as `--json` prints one run's), the totals, and who stands out, each
a list of labels. Each row's and the totals' figures as `fleet/columns.py` declares them: numbers at the decimals of
their types, the lines' precision, as for one run's summary."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from orca.sample.readback.fleet import rows as kept
from orca.sample.readback.fleet.columns import ROW, TOTALS, Figure, kind_of
from orca.sample.readback.fleet.flags import FAILED, GAPS, IDLE, NO_LINES, SATURATED, STRAGGLER
from orca.sample.readback.fleet.records import Fleet, FleetRow
from orca.sample.readback.gather.records import ExitSummary
from orca.sample.readback.summary.as_json import Write, encoded, writer
from orca.sample.readback.words import utc

if TYPE_CHECKING:
    from orca.sample.readback.fleet.records import FleetTotals

LISTS = {"idle": IDLE, "saturated": SATURATED, "stragglers": STRAGGLER, "gaps": GAPS, "no_lines": NO_LINES}
"""The keys of who stands out, and the flag each lists."""
Record = TypeVar("Record")


def _writers(figures: Sequence[Figure[Record]]) -> tuple[tuple[str, Callable[[Record], Any], Write], ...]:
    """Each of `figures`: its key, the figure, and how `--json` writes it (as its type says: `writer`)."""
    return tuple((figure.key, figure.of, writer(figure.kind) if figure.json is None else figure.json)
                 for figure in figures)


ROW_WRITERS, TOTALS_WRITERS = _writers(ROW), _writers(TOTALS)


def row_document(row: FleetRow) -> dict[str, object]:
    """One row's object: its figures as `ROW` declares them, the run's summary last."""
    return {key: write(of(row)) for key, of, write in ROW_WRITERS}


ROW_WRITES = {key: write for key, _, write in ROW_WRITERS}


def _compact_row(fields: dict[str, Any]) -> dict[str, object]:
    """A row kept compact (`fleet/rows.py`; `fields` as `rows_json` gathers them) as `row_document` writes a row:
    its figures under `ROW`'s keys, in its order, each written as `ROW` declares; the summary `null`, its place."""
    used, host = fields["usage"], fields["host"]
    ended = fields["exit"]
    memory_bytes = fields["memory_bytes"]
    figures: dict[str, Any] = {
        "label": fields["label"], "name": fields["name"], "host": host, "start": fields["start"],
        "start_utc": None if fields["start"] is None else utc(fields["start"]), "end": fields["end"],
        "duration": fields["duration"], "span": fields["span"], "lines": fields["lines"], "cpus": fields["cpus"],
        "cpus_limited": fields["cpu_limited"] if used else None,
        "cpu_of": kind_of(fields["cpu_limited"], fields["cpu_own"]) if used else None,
        "cpu_percent": fields["cpu_percent"], "cpu_p95_percent": fields["cpu_p95"],
        "memory_bytes": None if memory_bytes is None else round(memory_bytes),
        "memory_limited": fields["memory_limited"] if used else None,
        "memory_of": kind_of(fields["memory_limited"], fields["memory_own"]) if used else None,
        "memory_percent": fields["memory_percent"], "memory_peak_percent": fields["memory_peak_percent"],
        "rss_peak": fields["rss_peak"], "disk_peak_percent": fields["disk_peak_percent"],
        "io_bytes": fields["io_bytes"], "io_of": None if host is None else "run" if fields["own_io"] else "host",
        "net_bytes": fields["net_bytes"],
        "exit": None if ended is None else ExitSummary(ended[0], ended[1], ended[2], ended[3], None, None, None),
        "flags": fields["flags"], "summary": None,
    }
    return {key: write(figures[key]) for key, write in ROW_WRITES.items()}


def row_json(fields: dict[str, Any], summary: str) -> str:
    """A row kept compact encoded, from its figures (as `rows_json` gathers them) and its summary's document,
    encoded: as `fleet_json` writes the row."""
    return encoded(_compact_row(fields))[: -len('null}')] + summary + "}"


def totals_document(totals: FleetTotals) -> dict[str, object]:
    """The totals' object: their figures as `TOTALS` declares them."""
    return {key: write(of(totals)) for key, of, write in TOTALS_WRITERS}


def fleet_document(fleet: Fleet) -> dict[str, object]:
    document: dict[str, object] = {
        "rows": [row_document(row) for row in fleet.rows],
        "sorted_by": fleet.sorted_by,
        "totals": totals_document(fleet.totals),
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
            "exit": ended,
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
