"""A fleet read back: `orca metrics --json` over a directory of instances' files beside DuckDB computing the same
per-instance figures from the same files (`read_ndjson` over the glob, grouped by file, host and start), taking
turns, medians of wall-clock time and the peak memory of each; then a fleet of 1,000 instances of a day at 5 s (17 M
lines) read once, its time and peak memory, and the same with `--plot`.

    .venv/bin/python -m bench.fleet [--instances 100] [--lines 5000] [--repeats 3] [--big 1000] [--big-lines 17280]

Each instance's lines are the reader benchmark's day of pipeline work (`bench/runs.py`), with a host and a `start`
of its own. The big fleet's files are one instance's lines with the host and start changed (written in seconds, not
minutes), so its 17 M lines take about 11 GiB of the temporary directory while it runs. Needs the `bench` extra
(duckdb) and, for `--plot`, the `plot` extra.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from bench.metrics import PEAKS, PYTHON, interleaved, medians
from bench.population import python_with_its_own_peak
from bench.runs import line_at
from orca.sample.compute.encode import encode_line

START = 1796000000.0
BUDGET_MIB = 64

# DuckDB computing the fleet's per-instance figures: the summary's (as bench/metrics.py's DUCKDB_SUMMARY), each
# instance's use of its CPUs and memory, and its disk and containers, grouped by file, host and start.
DUCKDB_FLEET = r"""
import sys
import duckdb
con = duckdb.connect()
pattern = sys.argv[1].replace("'", "''")
con.execute(f"CREATE VIEW lines AS SELECT * FROM read_ndjson('{pattern}', filename = true)")
busy = "(cpu.user + cpu.system + cpu.steal)"
run = "filename, host, start"
figures = f'''
    SELECT {run}, count(*), min(t), max(t), avg({busy}), quantile_disc({busy}, 0.95), max({busy}),
           quantile_disc(cpu.busiest, 0.95), max(mem.used), max(100 * mem.used / mem.total), max(mem.swap_used),
           max(mem.rss), sum(io.read * dt), sum(io.write * dt), max(io.read), max(io.write),
           sum(net."in" * dt), sum(net."out" * dt), max(net."in"), max(net."out"),
           avg(pressure.cpu), avg(pressure.memory), avg(pressure.io), max(self_cpu),
           sum({busy} * cores * dt) / 100, sum(cores * dt), sum(mem.used * dt), sum(mem.total * dt),
           sum(dt) FILTER (WHERE {busy} >= 90), sum(dt) FILTER (WHERE {busy} > 10)
    FROM lines GROUP BY ALL'''
gaps = f'''
    SELECT {run}, count(*) FILTER (WHERE step > 2 * usual) FROM (
        SELECT {run}, t - lag(t) OVER (PARTITION BY {run} ORDER BY t) AS step,
               median(dt) OVER (PARTITION BY {run}) AS usual FROM lines)
    GROUP BY ALL'''
disk = f'''SELECT {run}, max(100 * d.used / (d.used + d.free))
    FROM (SELECT {run}, unnest(disk) AS d FROM lines) GROUP BY ALL'''
containers = f"SELECT {run}, c.name, max(c.mem) FROM (SELECT {run}, unnest(containers) AS c FROM lines) GROUP BY ALL"
found = {name: con.execute(query).fetchall() for name, query in
         (("figures", figures), ("gaps", gaps), ("disk", disk), ("containers", containers))}
print(len(found["figures"]), "instances")
"""


def instance_lines(index: int, lines: int) -> bytes:
    """An instance's day of lines (`bench/runs.py`), its host and start its own."""
    rng = random.Random(index)
    host = f"ip-10-1-{index // 256}-{index % 256}"
    start = START + index * 0.137
    return b"".join(encode_line(msgspec.structs.replace(line_at(i, start + 0.2 + 5 * i, 5.0, rng, host), start=start))
                    + b"\n" for i in range(lines))


def write_fleet(directory: Path, instances: int, lines: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for index in range(instances):
        (directory / f"worker-{index:04d}.jsonl").write_bytes(instance_lines(index, lines))
    return directory


def write_big_fleet(directory: Path, instances: int, lines: int) -> Path:
    """`instances` files of one instance's lines, each with a host and start of its own (the same length of text)."""
    directory.mkdir(parents=True, exist_ok=True)
    template = instance_lines(0, lines)
    host, start = b'"host":"ip-10-1-0-0"', b'"start":1796000000.0'
    assert template.count(host) == template.count(start) == lines
    for index in range(instances):
        text = template.replace(host, f'"host":"i-{index:013d}"'.encode())
        (directory / f"worker-{index:04d}.jsonl").write_bytes(
            text.replace(start, f'"start":{START + index / 1000:.3f}'.encode()))
    return directory


def peaks(*arguments: str) -> tuple[float, float]:
    """The peak resident MiB of `orca metrics ARGUMENTS` and of its largest worker (0 when it forked none)."""
    parent, worker = python_with_its_own_peak(PEAKS, *arguments).stderr.split()[-2:]
    return float(parent), float(worker)


def duckdb_peak(pattern: str) -> float:
    code = DUCKDB_FLEET + (
        "import resource\n"
        "print(f'{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f}', file=sys.stderr)\n")
    return float(python_with_its_own_peak(code, pattern).stderr.split()[-1])


def row(*cells: str) -> None:
    print("| " + " | ".join(cells) + " |", flush=True)


def against_duckdb(base: Path, instances: int, lines: int, repeats: int) -> None:
    fleet = write_fleet(base / "fleet", instances, lines)
    pattern = str(fleet / "*.jsonl")
    runs = interleaved({"orca": [PYTHON, "-m", "orca.sample", "metrics", "--json", str(fleet)],
                        "duckdb": [PYTHON, "-c", DUCKDB_FLEET, pattern]}, repeats)
    wall, cpu = medians(runs, lambda got: got.wall), medians(runs, lambda got: got.cpu)
    parent, worker = peaks("--json", str(fleet))
    duck = duckdb_peak(pattern)
    size = sum(path.stat().st_size for path in fleet.iterdir())
    what = f"{instances} instances x {lines:,} lines ({size / 2**20:.0f} MiB)"
    row(f"orca metrics --json, {what}, wall (median of {repeats})", f"{wall['orca']:.2f} s",
        f"{wall['duckdb']:.2f} s (DuckDB)", f"{wall['orca'] / wall['duckdb']:.2f}", "<= 1x DuckDB",
        "ok" if wall["orca"] <= wall["duckdb"] else "OVER")
    row("  CPU, every process", f"{cpu['orca']:.2f} s", f"{cpu['duckdb']:.2f} s (DuckDB)",
        f"{cpu['orca'] / cpu['duckdb']:.2f}", "", "")
    row("  peak memory: the process, its largest worker", f"{parent:.1f} MiB, {worker:.1f} MiB",
        f"{duck:.1f} MiB (DuckDB)", f"{max(parent, worker) / duck:.2f}", f"<= {BUDGET_MIB} MiB",
        "ok" if max(parent, worker) <= BUDGET_MIB else "OVER")


def big_fleet(base: Path, instances: int, lines: int) -> None:
    started = time.perf_counter()
    fleet = write_big_fleet(base / "big", instances, lines)
    written = time.perf_counter() - started
    size = sum(path.stat().st_size for path in fleet.iterdir())
    what = f"{instances:,} instances x {lines:,} lines ({instances * lines / 1e6:.1f} M lines, {size / 2**30:.1f} GiB)"
    for arguments, label in ((["--json"], "--json"), (["--plot", str(base / "big.png")], "--plot")):
        started = time.perf_counter()
        parent, worker = peaks(*arguments, str(fleet))
        wall = time.perf_counter() - started
        row(f"orca metrics {label}, {what}, written in {written:.0f} s", f"{wall:.1f} s",
            f"{instances * lines / wall:,.0f} lines/s", "", f"peak {parent:.1f} MiB, worker {worker:.1f} MiB", "")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=100)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big", type=int, default=1000, help="the big fleet's instances (0: skip it)")
    parser.add_argument("--big-lines", type=int, default=17_280, help="each big instance's lines (a day at 5 s)")
    args = parser.parse_args(argv)
    row("figure", "orca", "baseline", "orca/baseline", "budget", "")
    row("---", "---", "---", "---", "---", "---")
    with tempfile.TemporaryDirectory() as tmp:
        against_duckdb(Path(tmp), args.instances, args.lines, max(1, args.repeats))
        if args.big:
            big_fleet(Path(tmp), args.big, args.big_lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
