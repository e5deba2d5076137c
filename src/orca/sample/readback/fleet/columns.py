"""What a fleet's row and totals hold, declared once (docs/metrics.md, "A fleet"): each figure in the order `--json`
writes it, with its number type (the line's, `line_format.py`: its decimals in `--json`); for a figure the table
shows, its column's header and how its cells say it; for one the rows can be sorted by, its `--sort` name. The table's
text (`fleet/text.py`), `--sort` (`SORT_COLUMNS`, `fleet/table.py`'s `order`), `--json` (`fleet/as_json.py`, which
reads a fleet's rows and a file of many runs' alike: `Held`) and the docs' tables (held to this by
tests/fleet/test_columns.py) follow `ROW` and `TOTALS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from msgspec import Meta

from orca.sample.line_format import Cores, Count, Percent, Seconds
from orca.sample.readback.fleet.fields import CPU_LIMITED, CPU_OWN, MEMORY_LIMITED, MEMORY_OWN, OWN_IO
from orca.sample.readback.fleet.flags import Flag
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.summary.as_json import document
from orca.sample.readback.words import utc

Hours = Annotated[float, Meta(ge=0, extra={"places": 6})]
"""Hours of a fleet, to the millionth (3.6 ms: a short fleet's hours are small)."""


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure of a row (or of the totals)."""

    key: str
    """Its name in `--json`."""
    kind: object
    """Its type: a number's (the line's, whose `places` are its decimals in `--json`), or a record's."""
    held: str | Callable[[Any], Any] | None = None
    """What `--json` reads: of the totals, their attribute of this name (its key's when None), or a function of them;
    of a row, its field of this name in `Held` (its key's), or a function of that: a fleet's rows and a file of many
    runs' read alike."""
    json: Callable[[Any], object] | None = None
    """What `--json` writes of it, when not the figure itself (at its decimals)."""
    header: str | None = None
    """Its column's header in the table, in this order; None for a figure only `--json` has."""
    said: str = ""
    """How its column's cells say it (`fleet/text.py`'s `row_cells`): `start` (the time of day, or the day and
    minute when the runs began on several days), `span`, `count`, `percent`, `size`, `exit`, `flags`; `-` for a row
    without it."""
    whose: tuple[int, int] | None = None
    """The bits of a row's `bits` (`fleet/fields.py`) that say whose the figure is: its cgroup's limit's, or else its
    run's own processes', or else its host's (the table marks a cgroup's and a host's after it)."""
    left: bool = False
    """Its column's cells flush left."""
    sort: str | None = None
    """Its `--sort` name (in the order `fleet/table.py`'s `order` says)."""


Ended = tuple[int | None, int | None, str | None, float | None]
"""How a run's command ended, as a compact row holds it: its code, signal, error and wall time."""
Held = dict[str, Any]
"""A row as `--json` reads it (`fleet/as_json.py`): the fields of its compact row by name (`fleet/fields.py`'s `FIELDS`,
and its `bits`: `usage`, `cpu_limited`, `cpu_own`, `memory_limited`, `memory_own`, `own_io`), with its `label`, `name`,
`flags` (the straggler's among them) and `summary`."""


def _exit(ended: Ended | None) -> object:
    return None if ended is None else {"code": ended[0], "signal": ended[1], "error": ended[2]}


def _utc(t: float | None) -> str | None:
    return None if t is None else utc(t)


def _span(held: Held) -> float | None:
    return None if held["first_t"] is None else round(max(0.0, held["last_t"] - held["first_t"]), 3)


def _limited(limited: str) -> Callable[[Held], bool | None]:
    return lambda held: held[limited] if held["usage"] else None


def _whose(limited: str, own: str) -> Callable[[Held], str | None]:
    """Whose a figure is: its cgroup's limit's, its run's own processes' or its host's."""
    return lambda held: ("cgroup" if held[limited] else "run" if held[own] else "host") if held["usage"] else None


ROW: tuple[Figure, ...] = (
    Figure("label", str, header="instance"),
    Figure("name", str, sort="name"),
    Figure("host", str | None),
    Figure("start", Seconds, "begin", header="start", said="start", sort="start"),
    Figure("start_utc", str | None, lambda held: _utc(held["begin"])),
    Figure("end", Seconds, "last_t", sort="end"),
    Figure("duration", Seconds),
    Figure("span", Seconds, _span, header="span", said="span", sort="span"),
    Figure("lines", Count, header="lines", said="count", sort="lines"),
    Figure("cpus", Cores),
    Figure("cpus_limited", bool | None, _limited("cpu_limited")),
    Figure("cpu_of", str | None, _whose("cpu_limited", "cpu_own")),
    Figure("cpu_percent", Percent, header="cpu%", said="percent", whose=(CPU_LIMITED, CPU_OWN), sort="cpu"),
    Figure("cpu_p95_percent", Percent, "cpu_p95", header="p95", said="percent", sort="p95"),
    Figure("memory_bytes", Count, lambda held: None if held["memory_bytes"] is None else round(held["memory_bytes"])),
    Figure("memory_limited", bool | None, _limited("memory_limited")),
    Figure("memory_of", str | None, _whose("memory_limited", "memory_own")),
    Figure("memory_percent", Percent),
    Figure("memory_peak_percent", Percent, header="mem%", said="percent", whose=(MEMORY_LIMITED, MEMORY_OWN),
           sort="mem"),
    Figure("rss_peak", Count, header="rss", said="size", sort="rss"),
    Figure("disk_peak_percent", Percent, header="disk%", said="percent", sort="disk"),
    Figure("io_bytes", Count, header="io", said="size", whose=(0, OWN_IO), sort="io"),
    Figure("io_of", str | None, lambda held: None if held["host"] is None else "run" if held["own_io"] else "host"),
    Figure("net_bytes", Count, header="net", said="size", sort="net"),
    Figure("exit", Ended | None, json=_exit, header="end", said="exit", left=True),
    Figure("flags", tuple[Flag, ...], header="flags", said="flags", left=True),
    Figure("summary", InstanceSummary | None, json=lambda summary: None if summary is None else document(summary)),
)
"""A row's figures, in the order `--json` writes them; those with a `header` are the table's columns, in this order
(the label first, the flags last)."""

TOTALS: tuple[Figure, ...] = (
    Figure("runs", Count),
    Figure("instance_hours", Hours),
    Figure("cpu_hours_used", Hours),
    Figure("cpu_hours_available", Hours),
    Figure("cpu_percent", Percent),
    Figure("memory_gib_hours_used", Hours),
    Figure("memory_gib_hours_available", Hours),
    Figure("memory_percent", Percent),
    Figure("first_start", Seconds),
    Figure("first_start_utc", str | None, lambda totals: _utc(totals.first_start)),
    Figure("last_end", Seconds),
    Figure("last_end_utc", str | None, lambda totals: _utc(totals.last_end)),
)
"""The totals' figures, in the order `--json` writes them (the text says them in words: `fleet/text.py`)."""

COLUMNS = tuple(figure for figure in ROW if figure.header is not None)
"""The table's columns: the label, the figures, the flags."""

SORT_COLUMNS = tuple(figure.sort for figure in ROW if figure.sort is not None)
"""What a table's rows can be sorted by (`--sort`)."""
