"""The line's JSON Schema, generated from its one declaration (`line_format.Sample`, by msgspec), and the columns of a
table over lines that it gives for the engines that read a fleet's lines where no one machine should: DuckDB's
`read_ndjson(..., columns = ...)`, and the columns and the whole `CREATE EXTERNAL TABLE` in Hive DDL, as Athena
and Spark take it (docs/line.md, "The line's schema"). `orca schema` prints the schema and the columns;
`docs/line.schema.json` is the schema, held equal to this by a test. A field added to the declaration is in all of
them with no edit here.

Types, from the schema: a `number` is a double; an `integer` with a maximum (every count, at most 2^63 - 1) a 64-bit
integer, one without (a file system's sizes) a 128-bit one (DuckDB's HUGEINT, `decimal(38,0)` for Athena and Spark);
text is text; `v` (the constant 1) an integer; an object a struct of its properties in the declaration's order; an
array of them a list. Every column may be null: a section a line does not have is null.
"""

from __future__ import annotations

from typing import Any

import msgspec

from orca.sample.line_format import Sample

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
TITLE = "orca-sample line"
DUCKDB, HIVE = "duckdb", "hive"
"""DuckDB's type names; Hive's, as Athena and Spark take them in `CREATE EXTERNAL TABLE`."""
_TYPES = {
    DUCKDB: {"number": "DOUBLE", "integer": "BIGINT", "huge": "HUGEINT", "string": "VARCHAR"},
    HIVE: {"number": "double", "integer": "bigint", "huge": "decimal(38,0)", "string": "string"},
}


def line_schema() -> dict[str, Any]:
    """The line's JSON Schema (draft 2020-12): `Sample` and the records it is made of, under `$defs`."""
    schema: dict[str, Any] = msgspec.json.schema(Sample)
    return {"$schema": SCHEMA_DIALECT, "title": TITLE, **schema}


def schema_text() -> str:
    """The schema as `orca schema` prints it and `docs/line.schema.json` holds it: two-space indents, keys in the
    declaration's order."""
    import json

    return json.dumps(line_schema(), indent=2, ensure_ascii=False) + "\n"


def columns(dialect: str, schema: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """Each top-level key of a line and its column type in `dialect` (`DUCKDB` or `HIVE`), in the line's order.

    >>> columns(DUCKDB)[:4], columns(HIVE)[5]
    ([('v', 'BIGINT'), ('t', 'DOUBLE'), ('dt', 'DOUBLE'), ('host', 'VARCHAR')], ('cpu', 'struct<`user`:double,\
`system`:double,`iowait`:double,`steal`:double,`busiest`:double>'))
    """
    schema = schema or line_schema()
    definitions = schema["$defs"]
    top = definitions[schema["$ref"].rsplit("/", 1)[-1]]
    return [(name, _type(field, definitions, dialect)) for name, field in top["properties"].items()]


def _type(field: dict[str, Any], definitions: dict[str, Any], dialect: str) -> str:
    if "anyOf" in field:  # X or null: every column may be null
        (kind,) = [choice for choice in field["anyOf"] if choice.get("type") != "null"]
        return _type(kind, definitions, dialect)
    if "$ref" in field:
        properties = definitions[field["$ref"].rsplit("/", 1)[-1]]["properties"]
        members = [(name, _type(member, definitions, dialect)) for name, member in properties.items()]
        if dialect == DUCKDB:
            return "STRUCT(" + ", ".join(f'"{name}" {kind}' for name, kind in members) + ")"
        return "struct<" + ",".join(f"`{name}`:{kind}" for name, kind in members) + ">"
    if field.get("type") == "array":
        items = _type(field["items"], definitions, dialect)
        return f"{items}[]" if dialect == DUCKDB else f"array<{items}>"
    names = _TYPES[dialect]
    if "enum" in field:  # `v`
        return names["integer"]
    if field["type"] == "integer" and "maximum" not in field:
        return names["huge"]
    return names[field["type"]]


def duckdb_columns() -> str:
    """The `columns` argument of DuckDB's `read_ndjson` for lines: a struct literal of each key's type.

    >>> duckdb_columns()[:48]
    "{v: 'BIGINT', t: 'DOUBLE', dt: 'DOUBLE', host: '"
    """
    return "{" + ", ".join(f"{name}: '{kind}'" for name, kind in columns(DUCKDB)) + "}"


def hive_columns() -> str:
    """The column list of Athena's or Spark's `CREATE EXTERNAL TABLE` over lines, one column a line."""
    return ",\n".join(f"  `{name}` {kind}" for name, kind in columns(HIVE))


PARTITIONS = ("pipeline", "run_id")
"""The partition columns of a table over a fleet's lines (`$ORCA_LOGS/PIPELINE/RUN/metrics/`): named apart from every
key of a line, since Hive, and so Athena and Spark, refuse a partition column that is also a column (a line has a
`run`)."""
JSON_SERDE = "org.apache.hive.hcatalog.data.JsonSerDe"
"""Hive's JSON SerDe: built into Athena; in Spark, in Hive's hive-hcatalog-core jar."""


def hive_table(location: str = "s3://logs/", name: str = "orca_lines") -> str:
    r"""The `CREATE EXTERNAL TABLE` over the lines under `location` (`$ORCA_LOGS/`), in Hive DDL, as Athena and Spark
    with Hive support take it: the line's columns, a partition per pipeline and run, each line read by Hive's JSON
    SerDe, and Athena's partition projection, which finds a partition's lines from the query.

    >>> print(hive_table().split("\n)\n")[1])
    PARTITIONED BY (`pipeline` string, `run_id` string)
    ROW FORMAT SERDE 'org.apache.hive.hcatalog.data.JsonSerDe'
    LOCATION 's3://logs/'
    TBLPROPERTIES ('projection.enabled' = 'true',
                   'projection.pipeline.type' = 'injected', 'projection.run_id.type' = 'injected',
                   'storage.location.template' = 's3://logs/${pipeline}/${run_id}/metrics/')
    """
    partitions = ", ".join(f"`{partition}` string" for partition in PARTITIONS)
    injected = ", ".join(f"'projection.{partition}.type' = 'injected'" for partition in PARTITIONS)
    template = location + "".join(f"${{{partition}}}/" for partition in PARTITIONS) + "metrics/"
    return (f"CREATE EXTERNAL TABLE {name} (\n{hive_columns()}\n)\n"
            f"PARTITIONED BY ({partitions})\n"
            f"ROW FORMAT SERDE '{JSON_SERDE}'\n"
            f"LOCATION '{location}'\n"
            f"TBLPROPERTIES ('projection.enabled' = 'true',\n"
            f"               {injected},\n"
            f"               'storage.location.template' = '{template}')")
