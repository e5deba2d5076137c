"""DuckDB as the oracle (docs/metrics.md, "Anything more: DuckDB or pandas"): lines drawn from the line's declaration
(`orca.sample.line_format`'s records, values within a run's bounds), written as a sampler writes them, read by DuckDB
with the columns `orca schema --duckdb` prints, and every figure of the summary and of a fleet row held to the same
figure in SQL over the same lines: what the docs say each figure is, said a second way by a second engine."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orca.sample.line_format import CgroupSample, CpuShare, Disk, IoRate, Mem, NetRate, PressureShare, Sample
from orca.sample.line_schema import DUCKDB, columns
from orca.sample.readback.fleet.as_json import row_document
from orca.sample.readback.fleet.table import Run, fleet
from orca.sample.readback.fleet.usage import USAGE, UsageSection
from orca.sample.readback.gather.fold import SECTIONS, RunFold
from orca.sample.readback.gather.records import InstanceSummary
from tests.examples import costly
from tests.lines import line, text_of

duckdb = pytest.importorskip("duckdb")

# A run's values: percentages with one decimal, times with three, counts and sizes as large as a long run's sums
# stay exact in a double (DuckDB's arithmetic), `cores` and `cpu_max` sometimes 0 (no capacity).
tenths = st.integers(0, 2000).map(lambda n: n / 10)
counts = st.integers(0, 2**40)
dts = st.integers(0, 100_000).map(lambda n: n / 1000)
cpus = st.builds(CpuShare, tenths, tenths, tenths, tenths, tenths)
mems = st.builds(Mem, *[counts] * 7)
disks = st.builds(Disk, st.sampled_from(["/", "/data", "/tmp"]), counts, counts, counts)
cgroups = st.builds(
    CgroupSample, mem=st.none() | counts, mem_max=st.none() | counts, cpu=st.none() | tenths,
    cpu_max=st.none() | st.integers(0, 64_000).map(lambda n: n / 1000), throttled=st.none() | tenths,
    oom_kill=st.none() | counts, pids=st.none() | counts, pids_max=st.none() | counts,
)
pressures = st.builds(PressureShare, cpu=st.none() | tenths, memory=st.none() | tenths, io=st.none() | tenths)
START = 1796016000.0


@st.composite
def one_run(draw: st.DrawFn) -> list[Sample]:
    """The lines of one run (one host, one start), in the order written, each section present or not; `t` as the
    wall clock gave it (it may step back)."""
    count = draw(st.integers(1, 25))
    lines = []
    for _ in range(count):
        lines.append(line(
            t=START + draw(st.integers(0, 10**6)) / 1000, dt=draw(dts), host="h",
            cores=draw(st.none() | st.integers(0, 128)), cpu=draw(st.none() | cpus), mem=draw(st.none() | mems),
            disk=draw(st.none() | st.lists(disks, max_size=3).map(tuple)),
            io=draw(st.none() | st.builds(IoRate, counts, counts)),
            net=draw(st.none() | st.builds(NetRate, counts, counts)), containers_enabled=False, containers=None,
            self_cpu=draw(st.none() | st.integers(0, 10**6).map(lambda n: n / 100)),
            pressure=draw(st.none() | pressures), cgroup=draw(st.none() | cgroups), start=START,
        ))
    return lines


def table(tmp: Path, lines: list[Sample]) -> Any:
    """The lines in DuckDB, one row each with `n`, its place in the file."""
    path = tmp / "run.jsonl"
    path.write_text("".join(text_of(sample) + "\n" for sample in lines))
    connection = duckdb.connect()
    connection.execute("SET threads = 1")  # the rows in the file's order, for row_number() OVER ()
    spelt = ", ".join(f"'{name}': '{kind}'" for name, kind in columns(DUCKDB))
    connection.execute(f"CREATE TABLE raw AS SELECT * FROM read_ndjson('{path}', columns = {{{spelt}}})")
    connection.execute("CREATE TABLE l AS SELECT row_number() OVER () AS n, * FROM raw")
    return connection


def one(connection: Any, sql: str) -> Any:
    return connection.execute(sql).fetchone()


NEAREST_RANK = "list_sort(list({x}))[greatest(1, ceil(count({x}) * {p} / 100))::BIGINT]"
"""The nearest-rank percentile of `x`: the smallest value at least p % of them are at or below."""


def rank(x: str, p: int) -> str:
    return NEAREST_RANK.format(x=x, p=p)


def oracle(connection: Any) -> dict[str, Any]:
    """Every figure of the summary, in SQL."""
    figures: dict[str, Any] = {}
    (figures["lines"], figures["first_t"], figures["last_t"], figures["duration"], figures["median_dt"],
     figures["covered"], figures["cores"]) = one(connection, f"""
        SELECT count(*), arg_min(t, n), arg_max(t, n), round(sum(dt), 3), round({rank('dt', 50)}, 3), sum(dt),
               arg_max(cores, n) FILTER (WHERE cores IS NOT NULL)
        FROM l""")
    figures["gaps"] = one(connection, f"""
        SELECT count(*) FILTER (WHERE n > 1 AND round(dt, 3) > 2 * (SELECT round({rank('dt', 50)}, 3) FROM l))
        FROM l""")[0]
    busy = "(cpu.user + cpu.system + cpu.steal)"
    figures["cpu"] = one(connection, f"""
        SELECT avg({busy}), round({rank(busy, 95)}, 1), round(max({busy}), 1), round({rank('cpu.busiest', 95)}, 1)
        FROM l WHERE cpu IS NOT NULL HAVING count(*) > 0""")
    figures["memory"] = one(connection, """
        SELECT arg_min(mem.total, n) FILTER (WHERE mem.used = (SELECT max(mem.used) FROM l)), max(mem.used),
               coalesce(max(100 * mem.used / mem.total) FILTER (WHERE mem.total > 0), 0.0), max(mem.swap_used),
               max(mem.rss)
        FROM l WHERE mem IS NOT NULL HAVING count(*) > 0""")
    figures["disk"] = one(connection, """
        SELECT d.path, 100 * d.used / (d.used + d.free) AS percent
        FROM (SELECT n, unnest(disk) AS d, generate_subscripts(disk, 1) AS i FROM l WHERE disk IS NOT NULL)
        WHERE d.used + d.free > 0 ORDER BY percent DESC, n, i LIMIT 1""")
    figures["io"] = one(connection, """
        SELECT round(sum(io.read * dt)), round(sum(io.write * dt)), max(io.read), max(io.write)
        FROM l WHERE io IS NOT NULL HAVING count(*) > 0""")
    figures["net"] = one(connection, """
        SELECT round(sum(net.in * dt)), round(sum(net.out * dt)), max(net.in), max(net.out)
        FROM l WHERE net IS NOT NULL HAVING count(*) > 0""")
    figures["pressure"] = one(connection, """
        SELECT avg(pressure.cpu), avg(pressure.memory), avg(pressure.io) FROM l
        HAVING count(pressure.cpu) + count(pressure.memory) + count(pressure.io) > 0""")
    # The sampler's CPU: its first `self_cpu`, then each rise; a value below the one before is a sampler started
    # again, whose own count starts from 0.
    figures["self_cpu_seconds"] = one(connection, """
        SELECT coalesce(first(self_cpu ORDER BY n) + sum(CASE WHEN before IS NULL THEN 0
                                                              WHEN self_cpu >= before THEN self_cpu - before
                                                              ELSE self_cpu END), 0.0)
        FROM (SELECT n, self_cpu, lag(self_cpu) OVER (ORDER BY n) AS before FROM l WHERE self_cpu IS NOT NULL)""")[0]
    return figures


def fleet_oracle(connection: Any) -> dict[str, Any]:
    """Every figure of a fleet row, in SQL: each line's CPU share of its cgroup's `cpu_max` when it has both, else of
    its `cores` (a percentage either way); its memory of its cgroup's `mem_max` when it has both, else of `mem.total`;
    each counted for `dt`."""
    connection.execute("""
        CREATE TABLE shares AS SELECT n, dt,
            CASE WHEN cgroup.cpu IS NOT NULL AND cgroup.cpu_max > 0 THEN cgroup.cpu
                 WHEN cpu IS NOT NULL AND cores > 0 THEN cpu.user + cpu.system + cpu.steal END AS cpu_share,
            CASE WHEN cgroup.cpu IS NOT NULL AND cgroup.cpu_max > 0 THEN cgroup.cpu_max
                 WHEN cpu IS NOT NULL AND cores > 0 THEN cores END AS cpus,
            CASE WHEN cgroup.mem IS NOT NULL AND cgroup.mem_max > 0 THEN cgroup.mem
                 WHEN mem.total > 0 THEN mem.used END AS used,
            CASE WHEN cgroup.mem IS NOT NULL AND cgroup.mem_max > 0 THEN cgroup.mem_max
                 WHEN mem.total > 0 THEN mem.total END AS had
        FROM l""")
    row: dict[str, Any] = {}
    (row["cpu_percent"], row["cpu_p95_percent"], row["cpus"]) = one(connection, f"""
        SELECT CASE WHEN sum(dt) > 0 AND sum(cpus * dt) > 0 THEN sum(cpu_share * cpus * dt) / sum(cpus * dt) END,
               CASE WHEN count(*) > 0 THEN round({rank('cpu_share', 95)}, 1) END,
               CASE WHEN sum(dt) > 0 THEN sum(cpus * dt) / sum(dt) END
        FROM shares WHERE cpu_share IS NOT NULL""")
    (row["memory_percent"], row["memory_peak_percent"], row["memory_bytes"]) = one(connection, """
        SELECT CASE WHEN sum(dt) > 0 AND sum(had * dt) > 0 THEN 100 * sum(used * dt) / sum(had * dt) END,
               max(100 * used / had),
               CASE WHEN sum(dt) > 0 THEN round(sum(had * dt) / sum(dt)) END
        FROM shares WHERE used IS NOT NULL""")
    return row


def close(got: Any, expected: Any, places: int | None = None) -> bool:
    """Equal, floats to a billionth of their size (an exact sum against DuckDB's), or within half the last decimal
    `--json` keeps."""
    if got is None or expected is None:
        return got is None and expected is None
    if places is not None:
        return bool(abs(got - expected) <= 0.5 * 10**-places + 1e-9 * max(1.0, abs(expected)))
    return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)


def summary_of(lines: list[Sample]) -> tuple[InstanceSummary, dict[str, Any]]:
    fold = RunFold(sections=(*SECTIONS, UsageSection))
    fold.add(lines)
    summary = fold.summary("run.jsonl")
    assert summary is not None
    usage = fold.section(USAGE)
    assert isinstance(usage, UsageSection)
    [row] = fleet([Run(summary, usage.usage())]).rows
    return summary, row_document(row)


@given(one_run())
@costly(0.25)
def test_every_figure_of_the_summary_and_the_fleet_row_is_duckdbs(tmp_path_factory: pytest.TempPathFactory,
                                                                   lines: list[Sample]) -> None:
    connection = table(tmp_path_factory.mktemp("oracle"), lines)
    want = oracle(connection)
    summary, row = summary_of(lines)
    assert (summary.lines, summary.first_t, summary.last_t, summary.duration, summary.median_dt, summary.gaps,
            summary.cores) == (want["lines"], want["first_t"], want["last_t"], want["duration"], want["median_dt"],
                               want["gaps"], want["cores"])
    cpu = want["cpu"]
    assert (summary.cpu is None) == (cpu is None)
    if summary.cpu is not None:
        assert close(summary.cpu.mean_all_cores_percent, cpu[0])
        assert (summary.cpu.p95_all_cores_percent, summary.cpu.max_all_cores_percent,
                summary.cpu.busiest_core_p95_percent) == cpu[1:]
    memory = want["memory"]
    assert (summary.memory is None) == (memory is None)
    if summary.memory is not None:
        assert (summary.memory.total, summary.memory.used_peak, summary.memory.swap_peak,
                summary.memory.rss_peak) == (memory[0], memory[1], memory[3], memory[4])
        assert close(summary.memory.used_peak_percent, memory[2])
    disk = want["disk"]
    assert (summary.disk is None) == (disk is None)
    if summary.disk is not None:
        assert summary.disk.path == disk[0] and close(summary.disk.peak_percent, disk[1])
    io, net = summary.io, summary.net
    moved = (None if io is None else (io.read, io.write, io.read_peak, io.write_peak),
             None if net is None else (net.received, net.sent, net.received_peak, net.sent_peak))
    for figures, expected in zip(moved, (want["io"], want["net"]), strict=True):
        assert (figures is None) == (expected is None)
        if figures is not None:
            # Bytes moved are whole: a sum of rates times dt rounded once here and once by DuckDB, whose float sums
            # may fall either side of a half.
            assert all(abs(a - b) <= 1 for a, b in zip(figures, expected, strict=True)), (figures, expected)
    pressure = want["pressure"]
    assert (summary.pressure is None) == (pressure is None)
    if summary.pressure is not None:
        got_pressure = (summary.pressure.cpu, summary.pressure.memory, summary.pressure.io)
        assert all(close(a, b) for a, b in zip(got_pressure, pressure, strict=True)), (got_pressure, pressure)
    assert close(summary.self_cpu_seconds, want["self_cpu_seconds"])
    covered = want["covered"]
    assert close(summary.overhead_percent,
                 100 * want["self_cpu_seconds"] / covered if covered >= 1.0 else None)
    # A fleet row: what `--json` says of it, at its decimals.
    fleet_row = fleet_oracle(connection)
    assert (row["lines"], row["duration"]) == (want["lines"], want["duration"])
    for key, places in (("cpu_percent", 1), ("cpu_p95_percent", 1), ("cpus", 3), ("memory_percent", 1),
                        ("memory_peak_percent", 1), ("memory_bytes", 0)):
        assert close(row[key], fleet_row[key], places), (key, row[key], fleet_row[key])
    assert row["disk_peak_percent"] == (None if disk is None else round(disk[1], 1))
    assert row["io_bytes"] == (None if want["io"] is None else want["io"][0] + want["io"][1])
    assert row["net_bytes"] == (None if want["net"] is None else want["net"][0] + want["net"][1])
