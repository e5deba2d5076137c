"""The line's schema (docs/line.md, "The line's schema"): generated from the line's one declaration, shipped as
`docs/line.schema.json` and printed by `orca schema`, all three equal; and the columns it gives loading real lines
into DuckDB as they are, every field of every line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orca.sample.line_format import Sample
from orca.sample.line_schema import (
    DUCKDB,
    HIVE,
    PARTITIONS,
    columns,
    duckdb_columns,
    hive_columns,
    hive_table,
    line_schema,
    schema_text,
)
from tests.engines.rows import expected
from tests.fleet.fleets import CAPTURES
from tests.lines import samples, text_of

duckdb = pytest.importorskip("duckdb")
DOCS = Path(__file__).resolve().parents[2] / "docs"
SHIPPED = DOCS / "line.schema.json"
CONTROL_CAPTURE = Path(__file__).resolve().parents[1] / "control" / "samples"


def test_the_shipped_schema_is_the_generators_and_orca_schema_prints_it() -> None:
    assert SHIPPED.read_text() == schema_text()
    done = subprocess.run([sys.executable, "-m", "orca.sample", "schema"], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout == schema_text()
    columns_printed = subprocess.run([sys.executable, "-m", "orca.sample", "schema", "--duckdb"],
                                     capture_output=True, text=True, timeout=60, check=True)
    assert columns_printed.stdout == duckdb_columns() + "\n"


def encoded_names(kind: type[msgspec.Struct]) -> list[str]:
    return [field.encode_name for field in msgspec.structs.fields(kind)]


def test_the_schema_follows_the_declaration() -> None:
    """Every record of the line is in the schema with its fields, under their written names, in their order: a field
    added to the declaration is in the schema by itself."""
    schema = line_schema()
    definitions = schema["$defs"]
    records: list[type[msgspec.Struct]] = [Sample]
    seen = set()
    while records:
        kind = records.pop()
        if kind.__name__ in seen:
            continue
        seen.add(kind.__name__)
        assert list(definitions[kind.__name__]["properties"]) == encoded_names(kind), kind
        for field in msgspec.structs.fields(kind):
            records += _records_in(field.type)
    assert seen == set(definitions)
    assert [name for name, _ in columns(DUCKDB)] == [name for name, _ in columns(HIVE)] == encoded_names(Sample)


def _records_in(annotation: Any) -> list[type[msgspec.Struct]]:
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return [annotation]
    return [part for argument in getattr(annotation, "__args__", ()) for part in _records_in(argument)]


def loaded(paths: list[Path]) -> list[dict[str, Any]]:
    """The lines of `paths` read by DuckDB with the declared columns, one dict per line, in file order."""
    files = ", ".join(f"'{path}'" for path in paths)
    relation = duckdb.sql(f"SELECT * FROM read_ndjson([{files}], columns = {duckdb_columns()})")
    names = relation.columns
    return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]


def test_real_lines_load_into_duckdb_with_the_declared_columns() -> None:
    """The fleet's captures (a run, its cgroup, pressure) and the control capture (a plain host's line): every value
    of every line, as json reads it."""
    paths = [*sorted(CAPTURES.glob("*.jsonl")), next(CONTROL_CAPTURE.glob("capture.*.jsonl"))]
    rows = loaded(paths)
    assert len(rows) == sum(len(path.read_text().splitlines()) for path in paths)
    assert rows == expected(paths)
    killed = [row for row in rows if row["run"] is not None and row["run"]["exit"] is not None
              and row["run"]["exit"]["signal"] == 9]
    assert len(killed) == 1 and killed[0]["cgroup"]["oom_kill"] == 1


@settings(max_examples=25, deadline=None)
@given(st.lists(samples, min_size=1, max_size=5))
def test_any_line_loads_with_the_declared_columns(tmp_path_factory: pytest.TempPathFactory,
                                                  lines: list[Sample]) -> None:
    """Lines of every field (a file system's sizes within DuckDB's 128 bits: no file system holds 2^127 bytes)."""
    lines = [line for line in lines if not line.disk or all(max(disk.total, disk.used, disk.free) < 2**127
                                                             for disk in line.disk)]
    if not lines:
        return
    path = tmp_path_factory.mktemp("lines") / "lines.jsonl"
    path.write_text("".join(text_of(line) + "\n" for line in lines))
    assert loaded([path]) == expected([path])


def test_the_tables_partitions_are_no_columns_of_a_line() -> None:
    """Hive, and so Athena and Spark, refuse a partition column that is also a column."""
    assert not set(PARTITIONS) & {name for name, _ in columns(HIVE)}


def test_the_readme_and_docs_show_the_generated_table() -> None:
    """The README's statement is `hive_table()`'s; docs/line.md's the same, its columns left to `orca schema
    --athena` (which prints them)."""
    readme = (DOCS.parent / "README.md").read_text()
    assert f"```sql\n{hive_table()};\n```\n" in readme
    shown = hive_table().replace(hive_columns(), "  -- the output of `orca schema --athena`")
    assert f"```sql\n{shown};\n```\n" in (DOCS / "line.md").read_text()
    printed = subprocess.run([sys.executable, "-m", "orca.sample", "schema", "--athena"], capture_output=True,
                             text=True, timeout=60, check=True)
    assert printed.stdout == hive_columns() + "\n"
