"""A fleet as `orca metrics --json` prints it for a script (docs/metrics.md, "A fleet"): one JSON object with the
table's rows (each run's summary inside its row, as `--json` prints one run's), the totals, and who stands out, each
a list of labels. Each row's and the totals' figures as `fleet/columns.py` declares them: numbers at the decimals of
their types, the lines' precision, as for one run's summary."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from operator import attrgetter, itemgetter
from typing import Any

from toolz import partition_all

from orca.sample.readback.fleet.columns import ROW, TOTALS, Figure, Held
from orca.sample.readback.fleet.fields import BIT_NAMES, FIELDS
from orca.sample.readback.fleet.flags import FAILED, GAPS, IDLE, NO_LINES, SATURATED, STRAGGLER, Flag
from orca.sample.readback.fleet.table import Table
from orca.sample.readback.summary.as_json import Write, encoded, writer

LISTS = {"idle": IDLE, "saturated": SATURATED, "stragglers": STRAGGLER, "gaps": GAPS, "no_lines": NO_LINES}
"""The keys of who stands out, and the flag each lists."""
NO_LINES_HELD: Held = {**dict.fromkeys(FIELDS), "lines": 0, "bits": 0}
"""The fields of a row without lines: none but its 0 lines."""


def _writers(figures: Sequence[Figure], named: Callable[[str], Callable[[Any], Any]],
             ) -> tuple[tuple[str, Callable[[Any], Any], Write], ...]:
    """Each of `figures`: its key, how it is read (`named`: by a name), and how `--json` writes it (as its type
    says: `writer`)."""
    return tuple((figure.key, named(read) if isinstance(read := figure.held or figure.key, str) else read,
                  writer(figure.kind) if figure.json is None else figure.json) for figure in figures)


ROW_WRITERS, TOTALS_WRITERS = _writers(ROW, itemgetter), _writers(TOTALS, attrgetter)


def held(fields: Held | None, label: str, name: str, flags: tuple[Flag, ...]) -> Held:
    """A row as `--json` reads it, from its compact row's `fields` by name (`Rows.named`; None: a source without
    lines); its summary is written aside (`table_json`)."""
    row = NO_LINES_HELD.copy() if fields is None else fields
    bits = row["bits"]
    row.update({bit: bool(bits & value) for bit, value in BIT_NAMES.items()}, label=label, name=name, flags=flags,
               summary=None)
    return row


def table_json(table: Table, summaries: Callable[[int], str]) -> Iterator[str]:
    """A table (a fleet's, or of a source's runs) as one JSON object for a script, a piece at a time: its rows (each
    run's summary in its row: `summaries(index)`, row `index`'s summary's document encoded; a source without runs has
    none), how they are sorted, the totals, and who stands out."""
    named, runs, labels, flags = table.rows.named, len(table.rows), table.labels, table.flags

    def row(index: int, label: str) -> str:
        """The row's figures as `ROW` declares them, the run's summary last."""
        fields = held(named(index) if index < runs else None, label, table.name_of(index), flags(index))
        document = encoded({key: write(read(fields)) for key, read, write in ROW_WRITERS})
        return document if index >= runs else document[: -len("null}")] + summaries(index) + "}"  # written aside

    yield '{"rows":['
    for at, chunk in enumerate(partition_all(1024, table.order)):
        yield ("," if at else "") + ",".join(map(row, chunk, labels(chunk)))
    totals = table.totals
    rest: dict[str, object] = {"sorted_by": table.sorted_by,
                               "totals": {key: write(read(totals)) for key, read, write in TOTALS_WRITERS},
                               **{key: labels(table.flagged(flag)) for key, flag in LISTS.items()}}
    failed = table.flagged(FAILED)
    rest["failed"] = [{"label": label, "how": each.why} for index, label in zip(failed, labels(failed), strict=True)
                      for each in flags(index) if each.flag == FAILED]
    rest["hosts_saturated"] = [{"host": host.host, "runs": host.runs, "why": host.why}
                               for host in table.hosts_saturated]
    yield "]," + encoded(rest)[1:] + "\n"
