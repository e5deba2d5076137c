"""What a person reads, declared once (docs/metrics.md, "A fleet", "`--json`"): the docs' tables of the fleet's
columns, its `--sort` names, its `--json` keys and the summary's `--json` keys name what `fleet/columns.py` and the
summary's records declare, in their order; every fraction a summary holds declares its decimals."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Annotated, get_args, get_origin, get_type_hints

from orca.sample.readback.fleet.columns import COLUMNS, ROW, SORT_COLUMNS, TOTALS
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.summary.as_json import declared, places

METRICS = (Path(__file__).resolve().parents[2] / "docs" / "metrics.md").read_text()


def section(title: str) -> str:
    """The text under the heading `title`, to the next heading."""
    start = METRICS.index(f"# {title}\n")
    return METRICS[start:].split("\n#", 1)[0]


def table(title: str) -> dict[str, str]:
    """The table under `title`: each row's first cell to its second."""
    rows = [line.strip("|").split(" | ") for line in section(title).splitlines() if line.startswith("| ")]
    return {first.strip(): second.strip() for first, second in rows[1:]}


def named(text: str) -> list[str]:
    """The names in backquotes in `text`, leaving out those in parentheses (what a name is, said after it)."""
    while (bare := re.sub(r"\([^()]*\)", "", text)) != text:
        text = bare
    return re.findall(r"`([^`]+)`", text)


def test_the_docs_table_of_columns_is_the_declarations() -> None:
    columns = table("What each run had, and what it used")
    assert [name for first in columns for name in named(first)] == [column.header for column in COLUMNS]


def test_the_docs_sort_names_are_the_declarations_and_so_are_sorts_choices() -> None:
    said = section("What each run had, and what it used").split("Rows are sorted by", 1)[1].split("\n\n", 1)[0]
    assert [name for name in named(said) if not name.startswith("--")] == list(SORT_COLUMNS)
    done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", "--help"], capture_output=True, text=True,
                          timeout=60, check=True)
    assert ", ".join(SORT_COLUMNS) in " ".join(done.stdout.split())


def test_the_docs_json_keys_of_a_fleet_are_the_declarations() -> None:
    keys = table("A fleet's `--json`")
    assert named(keys["`rows`"].split(":", 1)[1]) == [figure.key for figure in ROW]
    assert named(keys["`totals`"]) == [figure.key for figure in TOTALS]


def _records(record: type) -> dict[str, type]:
    """The records a field of `record` holds, by the field's name."""
    hints = get_type_hints(record, include_extras=True)
    held = {}
    for field in fields(record):
        for each in (hints[field.name], *get_args(hints[field.name])):
            for inner in (each, *get_args(each)):
                if isinstance(inner, type) and is_dataclass(inner):
                    held[field.name] = inner
    return held


def test_the_docs_json_keys_of_a_summary_are_the_declarations() -> None:
    """The table names each key of the summary in order, and in a section's row each key of its record (a key's
    meaning may name other things after it)."""
    keys = table("`--json`")
    written = [key for _, key, _ in declared(InstanceSummary)]
    assert [name for first in keys for name in named(first)] == [*written[:3], "start_utc", *written[3:]]
    for name, record in _records(InstanceSummary).items():
        said = iter(named(keys[f"`{name}`"]))
        assert all(key in said for _, key, _ in declared(record)), name  # each in turn: a subsequence


def _fractions(record: type, seen: set[type]) -> list[tuple[str, str, object]]:
    """Each field of `record`, and of the records it holds, whose type is a fraction (a float)."""
    seen.add(record)
    found = []
    hints = get_type_hints(record, include_extras=True)
    for field in fields(record):
        hint = hints[field.name]
        bare = {get_args(each)[0] if get_origin(each) is Annotated else each for each in (hint, *get_args(hint))}
        if float in bare:
            found.append((record.__name__, field.name, hint))
    for inner in _records(record).values():
        if inner not in seen:
            found += _fractions(inner, seen)
    return found


def test_every_fraction_of_a_summary_declares_its_decimals() -> None:
    fractions = _fractions(InstanceSummary, set())
    assert len(fractions) > 20
    assert [(record, name) for record, name, hint in fractions if places(hint) is None] == []


def test_every_figure_has_a_key_of_its_own() -> None:
    for keys in ([figure.key for figure in ROW], [figure.key for figure in TOTALS]):
        assert len(set(keys)) == len(keys)
