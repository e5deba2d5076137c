"""One local Spark session with Hive support for a test module: one core, no web UI, the driver on 127.0.0.1, its
Derby metastore in memory, its warehouse and Derby's log under a directory of the test's, and its JVM ended by its id
when the module is done."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def java_found() -> bool:
    """pyspark starts the JVM from `$JAVA_HOME/bin/java`, else `java` on PATH."""
    home = os.environ.get("JAVA_HOME", "")
    return bool(home and (Path(home) / "bin" / "java").exists()) or shutil.which("java") is not None


@contextlib.contextmanager
def local_spark(directory: Path) -> Iterator[Any]:
    """A SparkSession (local[1], Hive support) whose files are all under `directory`; skips where pyspark or Java is
    missing."""
    pyspark_sql = pytest.importorskip("pyspark.sql")
    if not java_found():
        pytest.skip("Spark needs Java (17 or newer): neither $JAVA_HOME/bin/java nor java on PATH")
    from pyspark import SparkContext

    derby = directory / "derby"
    derby.mkdir(parents=True, exist_ok=True)
    builder = (
        pyspark_sql.SparkSession.builder.master("local[1]")
        .appName("orca-sample tests")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.warehouse.dir", str(directory / "warehouse"))
        .config("javax.jdo.option.ConnectionURL", "jdbc:derby:memory:metastore;create=true")
        # Derby's log under `directory`, not in the working directory; and for a JVM that lives for a few small
        # Spark jobs, the JIT's quick tier alone and the serial collector: less CPU spent compiling and collecting.
        .config("spark.driver.extraJavaOptions",
                f"-Dderby.system.home={derby} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .enableHiveSupport()
    )
    session = builder.getOrCreate()
    process: subprocess.Popen[bytes] | None = getattr(SparkContext._gateway, "proc", None)
    try:
        session.sparkContext.setLogLevel("ERROR")
        yield session
    finally:
        try:
            session.stop()
        finally:
            _end(process)
            SparkContext._gateway = None  # a later session starts a JVM of its own


def _end(process: subprocess.Popen[bytes] | None) -> None:
    """The JVM ends when its standard input closes (pyspark's gateway watches it); killed by its id if it has not."""
    if process is None:
        return
    with contextlib.suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
