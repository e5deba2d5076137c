"""`orca schema [--duckdb | --athena]`: the line's JSON Schema, or the columns of a table over lines for DuckDB, or
for Athena and Spark, all from the line's one declaration (`orca.sample.line_schema`; docs/line.md, "The line's
schema")."""

from __future__ import annotations

import argparse
import contextlib
import sys

from orca.sample.shared.parser import Help as _Help
from orca.sample.shared.parser import Malformed as _Malformed
from orca.sample.shared.parser import Parser as _Parser
from orca.sample.shared.printed import Unprinted, printed

USAGE = "orca schema [--duckdb | --athena]"
EXAMPLE = """\
examples:
  orca schema > line.schema.json     the JSON Schema of a line
  orca schema --duckdb               the columns argument of DuckDB's read_ndjson for lines
  orca schema --athena               the columns of CREATE EXTERNAL TABLE over lines (Athena, Spark)"""


def _parser() -> _Parser:
    parser = _Parser(prog="orca schema", usage=USAGE, epilog=EXAMPLE, allow_abbrev=False,
                     description="The line of `orca sample`, from its one declaration: its JSON Schema, or the "
                     "columns and types of a table over lines.", formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--duckdb", action="store_true", help="the columns argument of DuckDB's read_ndjson")
    which.add_argument("--athena", action="store_true",
                       help="the column list of an Athena or Spark CREATE EXTERNAL TABLE (Hive's types)")
    return parser


def schema_main(args: list[str]) -> int:
    """`orca schema ARGS`: the exit status (0; 1 when standard output cannot be written; 2 for a malformed command
    line)."""
    from orca.sample import line_schema

    try:
        options = _parser().parsed(args)
    except _Help:
        return 0
    except _Malformed as malformed:
        with contextlib.suppress(OSError, ValueError):
            print(f"orca schema: {malformed}\nusage: {USAGE}", file=sys.stderr)
        return 2
    if options.duckdb:
        text = line_schema.duckdb_columns() + "\n"
    elif options.athena:
        text = line_schema.hive_columns() + "\n"
    else:
        text = line_schema.schema_text()
    try:
        printed(text, flush=True)
    except Unprinted as error:
        with contextlib.suppress(OSError, ValueError):
            print(f"orca schema: cannot write to standard output: {error}", file=sys.stderr)
        return 1
    return 0
