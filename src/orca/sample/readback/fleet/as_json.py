"""A fleet as `orca metrics --json` prints it for a script (docs/metrics.md, "A fleet"): one JSON object with the
table's rows (each run's summary inside its row, as `--json` prints one run's), the totals, and who stands out, each
a list of labels. Each row's and the totals' figures as `fleet/columns.py` declares them: numbers at the decimals of
their types, the lines' precision, as for one run's summary."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from orca.sample.readback.fleet.columns import ROW, TOTALS, Figure
from orca.sample.readback.fleet.records import FAILED, GAPS, IDLE, NO_LINES, SATURATED, STRAGGLER, Fleet, FleetRow
from orca.sample.readback.summary.as_json import Write, encoded, writer

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


def fleet_document(fleet: Fleet) -> dict[str, object]:
    document: dict[str, object] = {
        "rows": [row_document(row) for row in fleet.rows],
        "sorted_by": fleet.sorted_by,
        "totals": {key: write(of(fleet.totals)) for key, of, write in TOTALS_WRITERS},
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
