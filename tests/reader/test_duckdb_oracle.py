"""DuckDB as the oracle (docs/metrics.md, "Anything more: DuckDB or pandas"): lines drawn from the line's declaration
(`orca.sample.line_format`'s records, values within a run's bounds), written as samplers write them (one to three
runs in one file, their lines interleaved), read back by `orca metrics --json`, and read by DuckDB with the columns
`orca schema --duckdb` prints. Every figure of `--json` (each run's summary, each fleet row, the fleet's totals) is
held to the same figure in SQL over the same lines, written from what docs/metrics.md and docs/behaviour.md §11 say
each figure is: the docs said a second way, by a second engine.

What is not held here, and why:
- `label`, `name`, `start_utc`, `first_start_utc`, `last_end_utc`, `sorted_by`, and each flag's `why`: words, not
  aggregates (a path's shortest telling suffix, a date written out, a sentence); the golden outputs hold them.
- `containers_omitted` and `containers_omitted_estimated` are held only below 1,000 containers (0 and false): past
  4,096 names the count is an estimate by design, which no SQL count equals.
- The totals are held with each run on a host of its own. A host that several runs share counts its cores and
  memory once over the time any of its runs ran (docs/metrics.md, "What each run had"): a union of the runs' times,
  which the docs do not say line by line (what it had where its runs' lines say different `cores`).
- Of the flags, `idle`, `failed` and `gaps` are held (each row's `flag`s). `saturated` hangs on whether the host
  was itself at its capacity apart from its runs (a run starved by its host's other work is not called saturated),
  and `straggler` on the fleet's median end and span: judgements, not a figure of the lines; the lists of who stands
  out (`idle`, `saturated`, `stragglers`, `gaps`, `no_lines`, `failed`, `hosts_saturated`) are of labels.
- Where the docs leave a choice open the test takes either: which of equal figures a list shows (the 5 + 5 process
  names, the largest process's pid), the order of the containers shown.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orca.sample import line_format
from orca.sample.line_format import Sample
from orca.sample.line_schema import DUCKDB, columns
from orca.sample.readback.shell.cli.metrics import metrics_main
from tests.examples import costly
from tests.lines import line, text_of

duckdb = pytest.importorskip("duckdb")

# A run's values: percentages with one decimal, times with three, counts and sizes as large as a long run's sums
# stay exact in a double (DuckDB's arithmetic), `cores` and `cpu_max` sometimes 0 (no capacity). Few names (of
# containers, of processes) so that names come back across lines, and more process names than the 5 + 5 shown.
tenths = st.integers(0, 2000).map(lambda n: n / 10)
counts = st.integers(0, 2**40)
small = st.integers(0, 600)
dts = st.integers(0, 100_000).map(lambda n: n / 1000)
cpus = st.builds(line_format.CpuShare, tenths, tenths, tenths, tenths, tenths)
mems = st.builds(line_format.Mem, *[counts] * 7)
disks = st.builds(line_format.Disk, st.sampled_from(["/", "/data", "/tmp"]), counts, counts, counts)
cgroups = st.builds(
    line_format.CgroupSample, mem=st.none() | counts, mem_max=st.none() | counts, cpu=st.none() | tenths,
    cpu_max=st.none() | st.integers(0, 64_000).map(lambda n: n / 1000),
    throttled=st.none() | st.integers(0, 1000).map(lambda n: n / 10), oom_kill=st.none() | small,
    pids=st.none() | counts, pids_max=st.none() | counts,
)
pressures = st.builds(
    line_format.PressureShare, cpu=st.none() | tenths, memory=st.none() | tenths, io=st.none() | tenths,
)
containers = st.lists(st.builds(
    line_format.ContainerSample, name=st.sampled_from(["db", "web", "cache"]), mem=counts, cpu=st.none() | tenths,
    mem_nocache=st.none() | counts, oom_kill=st.none() | small, throttled=st.none() | tenths,
    mem_max=st.none() | counts, pids=st.none() | small,
), max_size=3, unique_by=lambda each: each.name).map(tuple)
NAMES = ("java", "py", "sh", "make", "cc", "ld", "dd", "git")
tops = st.builds(
    line_format.TopProcess, pid=st.integers(1, 12), name=st.sampled_from(NAMES), cpu=tenths, rss=st.none() | counts,
    read=st.none() | counts, write=st.none() | counts,
)
exits = st.one_of(
    st.builds(line_format.CommandExit, code=st.integers(0, 3), wall=dts,
              user=st.integers(0, 10**4).map(lambda n: n / 100), system=st.integers(0, 10**4).map(lambda n: n / 100),
              max_rss=counts),
    st.builds(line_format.CommandExit, signal=st.sampled_from([9, 15]), wall=dts, user=st.just(0.5),
              system=st.just(0.25), max_rss=counts),
    st.builds(line_format.CommandExit, code=st.just(127), error=st.just("No such file or directory")),
)
START = 1796016000.0
HOSTS = ("a", "b", "c")


@st.composite
def run_section(draw: st.DrawFn, first: bool, last: bool) -> line_format.RunSample:
    """A line's `run`: `command` only in a run's first line (`argc` only with it), `exit` only in its last; `io` and
    `top` null where `cpu` is, as the sampler writes them."""
    cpu = draw(st.none() | tenths)
    command = draw(st.none() | st.lists(st.sampled_from(["make", "-j4", "a b"]), max_size=3).map(tuple)) \
        if first else None
    return line_format.RunSample(
        cpu=cpu, procs=draw(st.none() | small), command=command,
        argc=None if command is None else draw(st.none() | st.integers(33, 40)),
        exit=draw(st.none() | exits) if last else None,
        io=None if cpu is None else draw(st.none() | st.builds(line_format.IoRate, counts, counts)),
        top=None if cpu is None else draw(st.lists(tops, max_size=4, unique_by=lambda each: each.pid).map(tuple)),
    )


@st.composite
def one_run(draw: st.DrawFn, host: str, start: float) -> list[Sample]:
    """The lines of one run (one host, one start), in the order written, each section present or not; `t` as the
    wall clock gave it (it may step back); `run` in every line or none, `containers` likewise (with `--cgroup`)."""
    count = draw(st.integers(1, 12))
    has_run, has_containers = draw(st.booleans()), draw(st.booleans())
    lines = []
    for at in range(count):
        lines.append(line(
            t=start + draw(st.integers(0, 10**6)) / 1000, dt=draw(dts), host=host,
            cores=draw(st.none() | st.integers(0, 128)), cpu=draw(st.none() | cpus), mem=draw(st.none() | mems),
            disk=draw(st.none() | st.lists(disks, max_size=3).map(tuple)),
            io=draw(st.none() | st.builds(line_format.IoRate, counts, counts)),
            net=draw(st.none() | st.builds(line_format.NetRate, counts, counts)), containers_enabled=has_containers,
            containers=draw(st.none() | containers) if has_containers else None,
            self_cpu=draw(st.none() | st.integers(0, 10**6).map(lambda n: n / 100)),
            pressure=draw(st.none() | pressures), cgroup=draw(st.none() | cgroups),
            run=draw(run_section(at == 0, at == count - 1)) if has_run else None, start=start,
        ))
    return lines


@st.composite
def a_file(draw: st.DrawFn) -> list[Sample]:
    """One to three runs, each of its own host and start, their lines interleaved as in a log several hosts wrote."""
    runs = [draw(one_run(host, START + 1000 * at)) for at, host in enumerate(HOSTS[:draw(st.integers(1, 3))])]
    turns = draw(st.permutations([at for at, lines in enumerate(runs) for _ in lines]))
    taken = [iter(lines) for lines in runs]
    return [next(taken[at]) for at in turns]


@pytest.fixture(scope="module")
def connection() -> Any:
    """One DuckDB for the module (opening one costs more than an example's queries)."""
    connection = duckdb.connect()
    connection.execute("SET threads = 1")  # the rows in the file's order, for row_number() OVER ()
    return connection


def table(connection: Any, tmp: Path, lines: list[Sample]) -> Path:
    """The lines written as a file, and in DuckDB: table `lines`, one row each with `n`, its place in the file."""
    path = tmp / "runs.jsonl"
    path.write_text("".join(text_of(sample) + "\n" for sample in lines))
    spelt = ", ".join(f"'{name}': '{kind}'" for name, kind in columns(DUCKDB))
    connection.execute(f"""CREATE OR REPLACE TABLE lines AS SELECT row_number() OVER () AS n, *
                           FROM read_ndjson('{path}', columns = {{{spelt}}})""")
    return path


def one(connection: Any, sql: str) -> Any:
    return connection.execute(sql).fetchone()


def every(connection: Any, sql: str) -> list[Any]:
    return list(connection.execute(sql).fetchall())


class Near:
    """A figure `--json` prints at `places` decimals: equal to the exact one within half its last decimal, and a
    billionth of its size (an exact sum against DuckDB's float sum); `slack` more for a sum of figures each rounded."""

    def __init__(self, value: float | None, places: int, slack: float = 0.0) -> None:
        self.value, self.places, self.slack = value, places, slack

    def holds(self, got: Any) -> bool:
        if got is None or self.value is None:
            return got is None and self.value is None
        allowed = 0.5 * 10**-self.places + self.slack + 1e-9 * max(1.0, abs(self.value))
        return bool(abs(got - self.value) <= allowed)

    def __repr__(self) -> str:
        return f"Near({self.value!r}, {self.places})"


class OneOf:
    """A figure the docs leave open between equals (the pid of the largest of several processes that held as much)."""

    def __init__(self, values: list[Any] | None) -> None:
        self.values = values

    def holds(self, got: Any) -> bool:
        return got in self.values if self.values else got is None

    def __repr__(self) -> str:
        return f"OneOf({self.values!r})"


def check(got: Any, want: Any, where: str = "") -> None:
    """`got` (what `--json` printed) holds `want` (the oracle's): every key `want` names, at any depth."""
    if isinstance(want, Near | OneOf | Flags):
        assert want.holds(got), (where, got, want)
    elif isinstance(want, dict):
        assert isinstance(got, dict), (where, got)
        for key, item in want.items():
            assert key in got, (where, key)
            check(got[key], item, f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (where, got, want)
        for at, (a, b) in enumerate(zip(got, want, strict=True)):
            check(a, b, f"{where}[{at}]")
    else:
        assert got == want, (where, got, want)


PERCENT, BYTES, TIME, CPUS, CPU_SECONDS = 1, 0, 3, 3, 2
"""The decimals `--json` keeps (docs/metrics.md, "`--json`"): percentages one, bytes whole, times to the millisecond,
CPUs to the thousandth, CPU seconds (and the sampler's percent) two."""

NEAREST_RANK = "list_sort(list({x}))[greatest(1, ceil(count({x}) * {p} / 100))::BIGINT]"
"""The nearest-rank percentile of `x`: the smallest value at least p % of them are at or below."""


def rank(x: str, p: int) -> str:
    return NEAREST_RANK.format(x=x, p=p)


def near(value: float | None, places: int) -> Near:
    return Near(value, places)


def rose(value: str, over: str) -> str:
    """How much a counter `value` rose over the rows of `over` (with `n` and `dt`), in the order written: each rise;
    a value below the one before is the counter started again (a sampler, a cgroup made anew), counted from 0."""
    return f"""(SELECT coalesce(sum(CASE WHEN before IS NULL THEN 0 WHEN v >= before THEN v - before ELSE v END), 0)
                FROM (SELECT v, lag(v) OVER (ORDER BY n) AS before
                      FROM (SELECT n, {value} AS v FROM {over}) WHERE v IS NOT NULL))"""


def summary_oracle(connection: Any) -> dict[str, Any]:
    """Every figure of one run's `--json` (the lines of table `l`), in SQL."""
    want: dict[str, Any] = {}
    (want["host"], want["start"], want["cores"], want["first_t"], want["last_t"], duration, want["lines"],
     median_dt) = one(connection, f"""
        SELECT any_value(host), any_value(start), arg_max(cores, n) FILTER (WHERE cores IS NOT NULL),
               first(t ORDER BY n), last(t ORDER BY n), sum(dt), count(*), {rank('dt', 50)}
        FROM l""")
    want["duration"], want["median_dt"] = near(duration, TIME), near(median_dt, TIME)
    want["gaps"] = one(connection, f"""
        SELECT count(*) FILTER (WHERE n > (SELECT min(n) FROM l)
                                AND round(dt, 3) > 2 * (SELECT round({rank('dt', 50)}, 3) FROM l))
        FROM l""")[0]
    want["run"] = run_oracle(connection)
    want["cgroup"] = cgroup_oracle(connection)
    busy = "(cpu.user + cpu.system + cpu.steal)"
    cpu = one(connection, f"""
        SELECT avg({busy}), {rank(busy, 95)}, max({busy}), {rank('cpu.busiest', 95)}
        FROM l WHERE cpu IS NOT NULL HAVING count(*) > 0""")
    want["cpu"] = None if cpu is None else dict(zip(
        ("mean_all_cores_percent", "p95_all_cores_percent", "max_all_cores_percent", "busiest_core_p95_percent"),
        (near(figure, PERCENT) for figure in cpu), strict=True))
    memory = one(connection, """
        SELECT arg_min(mem.total, n) FILTER (WHERE mem.used = (SELECT max(mem.used) FROM l)), max(mem.used),
               coalesce(max(100 * mem.used / mem.total) FILTER (WHERE mem.total > 0), 0.0), max(mem.swap_used),
               max(mem.rss)
        FROM l WHERE mem IS NOT NULL HAVING count(*) > 0""")
    want["memory"] = None if memory is None else {
        "total": memory[0], "used_peak": memory[1], "used_peak_percent": near(memory[2], PERCENT),
        "swap_peak": memory[3], "rss_peak": memory[4]}
    disk = one(connection, """
        SELECT d.path, 100 * d.used / (d.used + d.free) AS percent
        FROM (SELECT n, unnest(disk) AS d, generate_subscripts(disk, 1) AS i FROM l WHERE disk IS NOT NULL)
        WHERE d.used + d.free > 0 ORDER BY percent DESC, n, i LIMIT 1""")
    want["disk"] = None if disk is None else {"path": disk[0], "peak_percent": near(disk[1], PERCENT)}
    for key, a, b, names in (("io", "read", "write", ("read", "write", "read_peak", "write_peak")),
                             ("net", "in", "out", ("in", "out", "in_peak", "out_peak"))):
        moved = one(connection, f"""
            SELECT sum({key}.{a} * dt), sum({key}.{b} * dt), max({key}.{a}), max({key}.{b})
            FROM l WHERE {key} IS NOT NULL HAVING count(*) > 0""")
        want[key] = None if moved is None else dict(zip(names, (near(figure, BYTES) for figure in moved),
                                                        strict=True))
    pressure = one(connection, """
        SELECT avg(pressure.cpu), avg(pressure.memory), avg(pressure.io) FROM l
        HAVING count(pressure.cpu) + count(pressure.memory) + count(pressure.io) > 0""")
    want["pressure"] = None if pressure is None else dict(zip(
        ("cpu", "memory", "io"), (near(figure, PERCENT) for figure in pressure), strict=True))
    want["containers"] = containers_oracle(connection)
    want["containers_omitted"], want["containers_omitted_estimated"] = 0, False
    # The sampler's CPU: its first `self_cpu`, then each rise; a value below the one before is a sampler started
    # again, whose own count starts from 0.
    self_cpu, covered = one(connection, f"""
        SELECT coalesce((SELECT first(self_cpu ORDER BY n) FROM l WHERE self_cpu IS NOT NULL), 0.0)
                   + {rose('self_cpu', 'l')},
               (SELECT sum(dt) FROM l)""")
    want["self_cpu_seconds"] = near(self_cpu, CPU_SECONDS)
    want["overhead_percent"] = near(100 * self_cpu / covered if covered >= 1.0 else None, CPU_SECONDS)
    return want


def run_oracle(connection: Any) -> dict[str, Any] | None:
    """The `run` object: the first line's command, the last's exit, the run's CPU in percent of one core (`run.cpu`
    × `cores`: its mean weighted by `dt`, its highest in a line of 0.1 s or more), its processes and its own io."""
    both = "run.cpu IS NOT NULL AND cores IS NOT NULL"
    found = one(connection, f"""
        SELECT first(run.command ORDER BY n), first(run.argc ORDER BY n), last(run.exit ORDER BY n),
               sum(run.cpu * cores * dt) FILTER (WHERE {both}) / nullif(sum(dt) FILTER (WHERE {both}), 0),
               coalesce(max(run.cpu * cores) FILTER (WHERE {both} AND dt >= 0.1),
                        max(run.cpu * cores) FILTER (WHERE {both})),
               max(run.procs),
               sum(run.io.read * dt), sum(run.io.write * dt), max(run.io.read), max(run.io.write), count(run.io),
               count(run.cpu), count(*) FILTER (WHERE run.cpu IS NOT NULL AND run.io IS NULL)
        FROM l WHERE run IS NOT NULL HAVING count(*) > 0""")
    if found is None:
        return None
    command, argc, ended, mean, peak, procs, read, write, read_peak, write_peak, with_io, io_lines, unknown = found
    return {
        "command": None if command is None else list(command), "argc": argc, "exit": ended,
        "cpu_mean_core_percent": near(mean, PERCENT), "cpu_peak_core_percent": near(peak, PERCENT),
        "procs_peak": procs,
        "io": None if with_io == 0 else {"read": near(read, BYTES), "write": near(write, BYTES),
                                         "read_peak": read_peak, "write_peak": write_peak},
        "io_lines": io_lines, "io_unknown_lines": unknown,
    }


def cgroup_oracle(connection: Any) -> dict[str, Any] | None:
    """The `cgroup` object: the most `mem` of the newest `mem_max`, the CPUs used on average (`cpu` % of `cpu_max`,
    weighted by `dt`) of the newest `cpu_max`, `throttled`'s mean weighted by `dt`, how much `oom_kill` rose, the most
    `pids` of the newest `pids_max`. Null for lines under no memory or CPU limit (docs/line.md: the sampler writes
    no `cgroup` then)."""
    both = "cgroup.cpu IS NOT NULL AND cgroup.cpu_max IS NOT NULL"
    found = one(connection, f"""
        SELECT max(cgroup.mem), last(cgroup.mem_max ORDER BY n) FILTER (WHERE cgroup.mem_max IS NOT NULL),
               sum(cgroup.cpu / 100 * cgroup.cpu_max * dt) FILTER (WHERE {both})
                   / nullif(sum(dt) FILTER (WHERE {both}), 0),
               last(cgroup.cpu_max ORDER BY n) FILTER (WHERE cgroup.cpu_max IS NOT NULL),
               sum(cgroup.throttled * dt) / nullif(sum(dt) FILTER (WHERE cgroup.throttled IS NOT NULL), 0),
               {rose('cgroup.oom_kill', 'l')},
               max(cgroup.pids), last(cgroup.pids_max ORDER BY n) FILTER (WHERE cgroup.pids_max IS NOT NULL)
        FROM l WHERE cgroup IS NOT NULL HAVING count(cgroup.mem_max) + count(cgroup.cpu_max) > 0""")
    if found is None:
        return None
    mem_peak, mem_max, cores, cpu_max, throttled, oom_kills, pids_peak, pids_max = found
    return {"mem_peak": mem_peak, "mem_max": mem_max, "cpu_cores": near(cores, CPUS), "cpu_max": cpu_max,
            "throttled": near(throttled, PERCENT), "oom_kills": oom_kills, "pids_peak": pids_peak,
            "pids_max": pids_max}


def containers_oracle(connection: Any) -> list[dict[str, Any]]:
    """Each container's highest `mem`, how much its `oom_kill` rose, its newest `mem_max`, its most `pids`, its mean
    `throttled`, by name (docs/metrics.md says which are shown, the 1,000 of the highest peak, not in what order: the
    test holds them by name)."""
    found = every(connection, """
        WITH c AS (SELECT n, dt, unnest(containers) AS c FROM l WHERE containers IS NOT NULL),
             kills AS (SELECT c.name AS name, c.oom_kill AS v,
                              lag(c.oom_kill) OVER (PARTITION BY c.name ORDER BY n) AS before
                       FROM c WHERE c.oom_kill IS NOT NULL)
        SELECT c.name, max(c.mem),
               coalesce((SELECT sum(CASE WHEN before IS NULL THEN 0 WHEN v >= before THEN v - before ELSE v END)
                         FROM kills WHERE kills.name = c.name), 0),
               last(c.mem_max ORDER BY n) FILTER (WHERE c.mem_max IS NOT NULL), max(c.pids), avg(c.throttled)
        FROM c GROUP BY c.name ORDER BY c.name""")
    return [{"name": name, "mem_peak": mem_peak, "oom_kills": oom_kills, "mem_max": mem_max, "pids_peak": pids_peak,
             "throttled_mean": near(throttled, PERCENT)}
            for name, mem_peak, oom_kills, mem_max, pids_peak, throttled in found]


def top_oracle(connection: Any) -> dict[str, dict[str, Any]] | None:
    """The `process` rows: per name of `run.top`'s processes, how many pids, the most resident bytes they held
    together at one reading, their CPU seconds (`cpu` × `cores` × `dt` / 100), bytes read and written (rate × `dt`),
    the largest one's pid and resident bytes, the most CPU one used in a line (percent of one core)."""
    if one(connection, "SELECT count(*) FROM l WHERE run.top IS NOT NULL")[0] == 0:
        return None
    found = every(connection, """
        WITH each AS (SELECT n, dt, cores, unnest(run.top) AS p FROM l WHERE run.top IS NOT NULL),
             p AS (SELECT *, max(p.rss) OVER (PARTITION BY p.name) AS largest FROM each),
             together AS (SELECT p.name AS name, sum(p.rss) AS rss FROM each GROUP BY n, p.name)
        SELECT p.name, count(DISTINCT p.pid),
               (SELECT max(rss) FROM together WHERE together.name = p.name),
               coalesce(sum(p.cpu * cores * dt / 100), 0.0), coalesce(sum(p.read * dt), 0.0),
               coalesce(sum(p.write * dt), 0.0), max(p.rss), list(p.pid) FILTER (WHERE p.rss = largest),
               max(p.cpu * cores)
        FROM p GROUP BY p.name""")
    return {name: {"name": name, "count": count, "mem_peak": peak, "cpu_seconds": near(cpu, CPU_SECONDS),
                   "read": near(read, BYTES), "write": near(write, BYTES), "largest_pid": OneOf(pids),
                   "largest_rss": largest, "busiest_core_percent": near(busiest, PERCENT)}
            for name, count, peak, cpu, read, write, largest, pids, busiest in found}


def check_top(got: list[dict[str, Any]] | None, want: dict[str, dict[str, Any]] | None) -> None:
    """The `process` rows shown: the 5 names of the highest memory peak (the highest first), then those of the 5 of
    the most CPU seconds not among them (the most first), each name's figures the oracle's. Names of equal figures may
    be taken either way (the docs leave it open): what is held is that no name left out beats one shown."""
    if want is None:
        assert got is None
        return
    assert got is not None
    for each in got:
        check(each, want[each["name"]], f"top.{each['name']}")

    def peak(name: str) -> int:
        return want[name]["mem_peak"] if want[name]["mem_peak"] is not None else -1

    def cpu(name: str) -> float:
        return float(want[name]["cpu_seconds"].value)

    shown = [each["name"] for each in got]
    assert len(set(shown)) == len(shown)
    first, then = [peak(name) for name in shown[:5]], [cpu(name) for name in shown[5:]]
    assert first == sorted(first, reverse=True) and then == sorted(then, reverse=True), shown
    by_peak = set(shown[:5])
    assert len(by_peak) == min(5, len(want))
    assert all(peak(name) <= min(map(peak, by_peak)) for name in want if name not in by_peak), shown
    by_cpu = set(shown[5:])
    if len(want) > 5:
        fifth = sorted(map(cpu, want), reverse=True)[4]
        assert {name for name in want if cpu(name) > fifth} - by_peak <= by_cpu, shown
        assert all(cpu(name) >= fifth for name in by_cpu), shown
        above, at = (sum(1 for name in by_peak if test(cpu(name))) for test in (fifth.__lt__, fifth.__le__))
        assert len(by_cpu) + above <= 5 <= len(by_cpu) + at, shown
    else:
        assert not by_cpu


HOURS = 6
"""A fleet's hours, to the millionth (docs/metrics.md, "A fleet's `--json`")."""


def usage_oracle(connection: Any) -> None:
    """Table `shares`: each line of `l` as docs/metrics.md ("What each run had, and what it used") counts it. Its CPU
    share is `cgroup.cpu` of `cgroup.cpu_max` when it has both; else, with a `run`, `run.cpu` of `cores`; else the
    host's busy share of `cores`. Its memory `cgroup.mem` of `cgroup.mem_max`; else, with a `run`, `mem.rss` of
    `mem.total`; else `mem.used` of `mem.total`. Each counted for its `dt`."""
    connection.execute("""
        CREATE OR REPLACE TABLE shares AS SELECT n, dt,
            CASE WHEN cgroup.cpu IS NOT NULL AND cgroup.cpu_max > 0 THEN 'cgroup'
                 WHEN run IS NOT NULL THEN 'run' ELSE 'host' END AS cpu_of,
            CASE WHEN cgroup.cpu IS NOT NULL AND cgroup.cpu_max > 0 THEN cgroup.cpu
                 WHEN run IS NOT NULL THEN CASE WHEN cores > 0 THEN run.cpu END
                 WHEN cores > 0 THEN cpu.user + cpu.system + cpu.steal END AS cpu_share,
            CASE WHEN cgroup.cpu IS NOT NULL AND cgroup.cpu_max > 0 THEN cgroup.cpu_max
                 WHEN cores > 0 THEN cores END AS cpus,
            CASE WHEN cgroup.mem IS NOT NULL AND cgroup.mem_max > 0 THEN 'cgroup'
                 WHEN run IS NOT NULL THEN 'run' ELSE 'host' END AS memory_of,
            CASE WHEN cgroup.mem IS NOT NULL AND cgroup.mem_max > 0 THEN cgroup.mem
                 WHEN mem.total > 0 THEN CASE WHEN run IS NOT NULL THEN mem.rss ELSE mem.used END END AS used,
            CASE WHEN cgroup.mem IS NOT NULL AND cgroup.mem_max > 0 THEN cgroup.mem_max
                 WHEN mem.total > 0 THEN mem.total END AS had
        FROM l""")


def row_oracle(connection: Any, summary: dict[str, Any]) -> dict[str, Any]:
    """Every figure of a fleet row (of the run in table `l`, its summary's oracle `summary`), in SQL: what it had and
    used (`shares`), its span, its own io else the host's, how it ended."""
    usage_oracle(connection)
    row: dict[str, Any] = {"host": summary["host"], "lines": summary["lines"], "duration": summary["duration"]}
    # A run starts its duration (the sum of its `dt`) before its last line: the sampler's start, by its monotonic
    # clock, whatever the wall clock did (docs/metrics.md, the `time` row). Its span is from its first line's `t` to
    # its last's, none when the clock stepped back between them.
    start, end, span = one(connection, """
        SELECT last(t ORDER BY n) - sum(dt), last(t ORDER BY n), greatest(0, last(t ORDER BY n) - first(t ORDER BY n))
        FROM l""")
    row["start"], row["end"], row["span"] = near(start, TIME), end, near(span, TIME)
    # Whose a row's figures are (`cpu_of`, `memory_of`; `*_limited` when its cgroup's) is its newest line's with a
    # figure: the docs say whose a line's figure is, and a row's lines are of one kind but where the sampler was
    # moved into a cgroup or out of one.
    (cpu_percent, cpu_p95, cpus, cpu_of, used, had) = one(connection, f"""
        SELECT CASE WHEN sum(cpus * dt) > 0 THEN sum(cpu_share * cpus * dt) / sum(cpus * dt) END,
               CASE WHEN count(*) > 0 THEN {rank('cpu_share', 95)} END,
               CASE WHEN sum(dt) > 0 THEN sum(cpus * dt) / sum(dt) END,
               coalesce(last(cpu_of ORDER BY n), 'host'), sum(cpu_share / 100 * cpus * dt), sum(cpus * dt)
        FROM shares WHERE cpu_share IS NOT NULL""")
    row.update(cpu_percent=near(cpu_percent, PERCENT), cpu_p95_percent=near(cpu_p95, PERCENT),
               cpus=near(cpus, CPUS), cpus_limited=cpu_of == "cgroup", cpu_of=cpu_of)
    (memory_percent, memory_peak, memory_bytes, memory_of, bytes_used, bytes_had) = one(
        connection, """
        SELECT CASE WHEN sum(had * dt) > 0 THEN 100 * sum(used * dt) / sum(had * dt) END,
               max(100 * used / had), CASE WHEN sum(dt) > 0 THEN sum(had * dt) / sum(dt) END,
               coalesce(last(memory_of ORDER BY n), 'host'), sum(used * dt), sum(had * dt)
        FROM shares WHERE used IS NOT NULL""")
    row.update(memory_percent=near(memory_percent, PERCENT), memory_peak_percent=near(memory_peak, PERCENT),
               memory_bytes=near(memory_bytes, BYTES), memory_limited=memory_of == "cgroup",
               memory_of=memory_of)
    own = summary["run"] is not None
    row["rss_peak"] = summary["memory"]["rss_peak"] if own and summary["memory"] is not None else None
    row["disk_peak_percent"] = None if summary["disk"] is None else summary["disk"]["peak_percent"]
    moved = summary["run"]["io"] if own and summary["run"]["io"] is not None else summary["io"]
    row["io_of"] = "run" if moved is not summary["io"] else "host"
    row["io_bytes"] = None if moved is None else Near(moved["read"].value + moved["write"].value, BYTES, 1)
    net = summary["net"]
    row["net_bytes"] = None if net is None else Near(net["in"].value + net["out"].value, BYTES, 1)
    ended = summary["run"] and summary["run"]["exit"]
    row["exit"] = None if ended is None else {key: ended[key] for key in ("code", "signal", "error")}
    row["used"], row["had"], row["bytes_used"], row["bytes_had"] = used, had, bytes_used, bytes_had
    row["flags"] = Flags(flags_oracle(connection, summary))
    return row


class Flags:
    """The flags a row holds of those the oracle judges (`flag` of each; its `why` is words)."""

    JUDGED = frozenset({"idle", "failed", "gaps"})

    def __init__(self, flags: set[str]) -> None:
        self.flags = flags

    def holds(self, got: Any) -> bool:
        return {each["flag"] for each in got} & self.JUDGED == self.flags

    def __repr__(self) -> str:
        return f"Flags({sorted(self.flags)!r})"


def flags_oracle(connection: Any, summary: dict[str, Any]) -> set[str]:
    """Who stands out (docs/metrics.md, "Who stands out"): `idle`, its CPU over 10 % of what it had (of one core, for
    a run's own processes) for at most 5 % of the time its lines' shares cover, its memory never over 20 %; `failed`,
    its COMMAND ended by a signal, non-zero or could not start, or its cgroup had an OOM kill; `gaps`, any gap."""
    flags = set()
    above, covered, memory_peak = one(connection, """
        SELECT sum(dt) FILTER (WHERE CASE WHEN cpu_of = 'run' THEN cpu_share * cpus ELSE cpu_share END > 10),
               sum(dt), (SELECT max(100 * used / had) FROM shares WHERE used IS NOT NULL)
        FROM shares WHERE cpu_share IS NOT NULL""")
    # Idle is said of what is known: a run whose lines say nothing of its CPU, or of its memory, is not called idle.
    if covered and 100 * (above or 0) / covered <= 5 and memory_peak is not None and memory_peak <= 20:
        flags.add("idle")
    ended = summary["run"] and summary["run"]["exit"]
    cgroup = summary["cgroup"]
    if (ended is not None and (ended["signal"] is not None or ended["code"] or ended["error"] is not None)) \
            or (cgroup is not None and cgroup["oom_kills"]):
        flags.add("failed")
    if summary["gaps"]:
        flags.add("gaps")
    return flags


def totals_oracle(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The totals, each run on a host of its own: instance-hours, CPU-hours and GiB-hours used and had, added up."""
    def total(key: str) -> float:
        return sum(row[key] or 0.0 for row in rows)

    cpu_used, cpu_had, memory_used, memory_had = (total(key) for key in ("used", "had", "bytes_used", "bytes_had"))
    return {
        "runs": len(rows), "instance_hours": near(sum(row["duration"].value for row in rows) / 3600, HOURS),
        "cpu_hours_used": near(cpu_used / 3600, HOURS), "cpu_hours_available": near(cpu_had / 3600, HOURS),
        "cpu_percent": near(100 * cpu_used / cpu_had if cpu_had > 0 else None, PERCENT),
        "memory_gib_hours_used": near(memory_used / 2**30 / 3600, HOURS),
        "memory_gib_hours_available": near(memory_had / 2**30 / 3600, HOURS),
        "memory_percent": near(100 * memory_used / memory_had if memory_had > 0 else None, PERCENT),
        "first_start": near(min(row["start"].value for row in rows), TIME), "last_end": max(row["end"] for row in rows),
    }


def by_name(summary: dict[str, Any]) -> dict[str, Any]:
    """A run's `--json` with its containers by name."""
    return {**summary, "containers": sorted(summary["containers"], key=lambda each: each["name"])}


def printed(path: Path) -> Any:
    """What `orca metrics --json PATH` prints, read as JSON."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = metrics_main([str(path), "--json"])
    assert status == 0 and err.getvalue() == "", (status, err.getvalue())
    return json.loads(out.getvalue())


@given(a_file())
@costly(0.1)
def test_every_figure_of_json_is_duckdbs(tmp_path_factory: pytest.TempPathFactory, connection: Any,
                                        lines: list[Sample]) -> None:
    path = table(connection, tmp_path_factory.mktemp("oracle"), lines)
    document = printed(path)
    runs = every(connection, "SELECT host, start FROM lines GROUP BY host, start ORDER BY host")
    wanted_rows = []
    for host, start in runs:
        connection.execute(f"CREATE OR REPLACE TABLE l AS FROM lines WHERE host = '{host}' AND start = {start}")
        summary, top = summary_oracle(connection), top_oracle(connection)
        if len(runs) == 1:
            check(by_name(document), summary)
            check_top(document["top"], top)
            return
        [got] = [row for row in document["rows"] if row["host"] == host]
        check(by_name(got["summary"]), summary, host)
        check_top(got["summary"]["top"], top)
        wanted = row_oracle(connection, summary)
        check(got, {key: value for key, value in wanted.items()
                    if key not in ("used", "had", "bytes_used", "bytes_had")}, host)
        wanted_rows.append(wanted)
    check(document["totals"], totals_oracle(wanted_rows), "totals")
