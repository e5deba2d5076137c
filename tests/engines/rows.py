"""What a table with the line's declared columns should hold of lines, from the standard library's `json`: every key
of the schema in each row, None where a line left it out. The engines' tests (DuckDB's, Spark's) compare with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orca.sample.line_schema import line_schema


def _filled(value: Any, field: dict[str, Any], definitions: dict[str, Any]) -> Any:
    if value is None:
        return None
    if "anyOf" in field:
        (field,) = [choice for choice in field["anyOf"] if choice.get("type") != "null"]
    if "$ref" in field:
        properties = definitions[field["$ref"].rsplit("/", 1)[-1]]["properties"]
        return {name: _filled(value.get(name), member, definitions) for name, member in properties.items()}
    if field.get("type") == "array":
        return [_filled(item, field["items"], definitions) for item in value]
    return value


def expected(paths: list[Path]) -> list[dict[str, Any]]:
    """The lines of `paths` as `json` reads them, filled out to the declared columns, in file order."""
    schema = line_schema()
    top = {"$ref": schema["$ref"]}
    return [_filled(json.loads(text), top, schema["$defs"]) for path in paths
            for text in path.read_text().split("\n") if text]  # not splitlines: a name may hold U+0085
