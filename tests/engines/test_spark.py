"""Spark over lines (docs/line.md, "The line's schema"), in pyspark's local mode on this machine's Java: the column list
of `orca schema --athena` as the schema Spark reads real lines with, FAILFAST, every value as `json` reads it; and
the README's `CREATE EXTERNAL TABLE` run with Hive support as far as Spark can without Hive's JSON SerDe, whose jar
(hive-hcatalog-core) pyspark does not ship: parsed and analysed into the declared columns, partitions, SerDe and
properties, refused by the metastore only for that class; then a Spark JSON table of the columns and partitions Spark
read from it, a partition added as docs/line.md says, and that partition queried."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orca.sample.line_schema import HIVE, JSON_SERDE, PARTITIONS, columns, hive_columns, hive_table
from tests.engines.rows import expected
from tests.engines.spark import local_spark
from tests.examples import costly
from tests.fleet.fleets import CAPTURES
from tests.lines import samples, text_of

pytestmark = pytest.mark.slow  # a JVM started once for the module, a few Spark jobs
CONTROL_CAPTURE = Path(__file__).resolve().parents[1] / "control" / "samples"
DECIMAL_38 = 10**38
"""decimal(38,0), a file system's sizes in Spark and Athena, holds integers below 10^38."""


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with local_spark(tmp_path_factory.mktemp("spark")) as session:
        yield session


def _path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def by_file(rows: list[Any]) -> dict[Path, list[dict[str, Any]]]:
    """Spark's rows, each a dict of its columns, by the file they came from (in that file's order: one core reads one
    small file as one split, in order), without the `file` column."""
    files: dict[Path, list[dict[str, Any]]] = {}
    for row in rows:
        values = row.asDict(recursive=True)
        files.setdefault(_path(values.pop("file")), []).append(values)
    return files


def read(spark: Any, paths: list[Path]) -> dict[Path, list[dict[str, Any]]]:
    """The lines of `paths` read by Spark with the declared column list as its schema, FAILFAST."""
    from pyspark.sql.functions import input_file_name

    frame = spark.read.schema(hive_columns()).option("mode", "FAILFAST").json([str(path) for path in paths])
    return by_file(frame.withColumn("file", input_file_name()).collect())


def test_spark_reads_real_lines_with_the_declared_columns(spark: Any, tmp_path: Path) -> None:
    """The fleet's captures (a run, its cgroup, pressure) and the control capture (a plain host's line): every value
    of every line, as json reads it; and FAILFAST refuses a line whose value is not of its column's type."""
    paths = [*sorted(CAPTURES.glob("*.jsonl")), next(CONTROL_CAPTURE.glob("capture.*.jsonl"))]
    files = read(spark, paths)
    assert files == {path: expected([path]) for path in paths}
    assert [field.name for field in spark.read.schema(hive_columns()).json(str(paths[0])).schema.fields] == [
        name for name, _ in columns(HIVE)
    ]
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(paths[0].read_text().split("\n")[0].replace('"cores":2,', '"cores":"two",', 1) + "\n")
    assert '"cores":"two"' in wrong.read_text()
    with pytest.raises(Exception, match="FAILFAST"):
        read(spark, [wrong])


@costly(0.05)  # a Spark job each
@given(st.lists(samples, min_size=1, max_size=20))
def test_spark_reads_any_line_with_the_declared_columns(spark: Any, tmp_path_factory: pytest.TempPathFactory,
                                                         lines: list[Any]) -> None:
    """Lines of every field (a file system's sizes within decimal(38,0): no file system holds 10^38 bytes)."""
    lines = [line for line in lines if not line.disk or all(max(disk.total, disk.used, disk.free) < DECIMAL_38
                                                             for disk in line.disk)]
    if not lines:
        return
    path = tmp_path_factory.mktemp("lines") / "lines.jsonl"
    path.write_text("".join(text_of(line) + "\n" for line in lines))
    assert read(spark, [path]) == {path: expected([path])}


def test_the_tables_statement_runs_in_spark_with_hive_support(spark: Any, tmp_path: Path) -> None:
    """`hive_table()` over a fleet's folder: Spark (Hive support) parses and analyses it into an external table of
    the line's columns, partitioned by `pipeline` and `run_id`, read by Hive's JSON SerDe, with Athena's projection
    properties as written; running it stops at the metastore only for that SerDe's class, which pyspark does not
    ship. A Spark JSON table of the columns and partitions Spark read from the statement then takes the partitions
    `ALTER TABLE ... ADD PARTITION` adds, and a query of one returns that partition's lines, value for value."""
    from pyspark.errors import AnalysisException

    logs = tmp_path / "logs"
    runs = {("nightly", "42"): ["busy", "idle"], ("nightly", "43"): ["oom"]}
    for (pipeline, run), kinds in runs.items():
        (logs / pipeline / run / "metrics").mkdir(parents=True)
        for kind in kinds:
            (capture,) = CAPTURES.glob(f"{kind}.*.jsonl")
            shutil.copy(capture, logs / pipeline / run / "metrics" / f"{kind}.jsonl")
    location = logs.as_uri() + "/"
    statement = hive_table(location)
    spark.conf.set("spark.sql.variable.substitute", "false")  # `${pipeline}` in the statement is Athena's, as docs say
    try:
        state = spark._jsparkSession.sessionState()
        analyzed = state.analyzer().execute(state.sqlParser().parsePlan(statement))
        state.analyzer().checkAnalysis(analyzed)
        table = analyzed.table()
        assert table.tableType().name() == "EXTERNAL"
        assert table.storage().serde().get() == JSON_SERDE
        assert table.location().toString() == location.rstrip("/")  # Spark keeps a folder without its slash
        declared = spark.createDataFrame([], hive_columns()).schema  # the column list as Spark's schema
        assert json.loads(table.dataSchema().json()) == json.loads(declared.json())
        assert list(table.partitionColumnNames().mkString("\n").split("\n")) == list(PARTITIONS)
        template = table.properties().get("storage.location.template").get()
        assert template == f"{location}${{pipeline}}/${{run_id}}/metrics/"
        with pytest.raises(AnalysisException, match=f"ClassNotFoundException Class {JSON_SERDE} not found"):
            spark.sql(statement)
    finally:
        spark.conf.unset("spark.sql.variable.substitute")

    spark.sql(f"CREATE TABLE orca_lines_json ({table.schema().toDDL()}) USING json OPTIONS (mode 'FAILFAST') "
              f"PARTITIONED BY ({', '.join(PARTITIONS)}) LOCATION '{location}'")
    for pipeline, run in runs:
        spark.sql(f"ALTER TABLE orca_lines_json ADD PARTITION (pipeline = '{pipeline}', run_id = '{run}') "
                  f"LOCATION '{location}{pipeline}/{run}/metrics/'")
    shown = [row[0] for row in spark.sql("SHOW PARTITIONS orca_lines_json").collect()]
    assert shown == ["pipeline=nightly/run_id=42", "pipeline=nightly/run_id=43"]
    rows = spark.sql("SELECT *, input_file_name() AS file FROM orca_lines_json "
                     "WHERE pipeline = 'nightly' AND run_id = '42'").collect()
    paths = [logs / "nightly" / "42" / "metrics" / f"{kind}.jsonl" for kind in runs["nightly", "42"]]
    partition = {"pipeline": "nightly", "run_id": "42"}
    assert by_file(rows) == {path: [{**line, **partition} for line in expected([path])] for path in paths}
