"""The reader's benchmarks: `orca metrics` against what a user would load into DuckDB (the same figures) at the given
number of lines and at 1,000,000, and against what a user would write with pandas at 100,000; its memory on a long
file; a file of 100,000 runs of one line each (a sampler started by cron); and how much of a big file
`read_newest_minute` reads.

    .venv/bin/python -m bench.metrics [--lines N] [--repeats N]      (also run at the end of `python3 dev.py bench`)
    .venv/bin/python -m bench.metrics --many-runs [--repeats N]      (the file of many runs alone)
    .venv/bin/python -m bench.metrics --before SRC [--lines N] [--runs N] [--repeats N]
        (orca metrics of this tree against the `src/` of another, such as `git archive COMMIT src | tar -x -C DIR`:
        a summary of N lines and the file of many runs, as text and --json, taking turns; needs no extra)

Needs the `bench` extra (pandas, duckdb).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.population import python_with_its_own_peak
from bench.runs import write_one_line_runs, write_run
from orca.sample.readback.shell.parts import part_count, usable_cores

PYTHON = sys.executable

# The baseline: the lines loaded with pandas, then the summary's figures for the same fields.
PANDAS_SUMMARY = r"""
import sys
import pandas as pd
frame = pd.read_json(sys.argv[1], lines=True)
cpu = pd.json_normalize(frame["cpu"].dropna().tolist())
busy = cpu["user"] + cpu["system"] + cpu["steal"]
mem = pd.json_normalize(frame["mem"].dropna().tolist())
disks = pd.json_normalize(frame["disk"].dropna().explode().dropna().tolist())
io = pd.json_normalize(frame["io"].dropna().tolist())
net = pd.json_normalize(frame["net"].dropna().tolist())
pressure = pd.json_normalize(frame["pressure"].dropna().tolist())
containers = pd.json_normalize(frame["containers"].dropna().explode().dropna().tolist())
steps = frame["t"].diff().dropna()
summary = {
    "lines": len(frame), "first": frame["t"].min(), "last": frame["t"].max(),
    "gaps": int((steps > 2 * frame["dt"].median()).sum()),
    "cpu": (busy.mean(), busy.quantile(0.95, interpolation="higher"), busy.max(),
            cpu["busiest"].quantile(0.95, interpolation="higher")),
    "mem": (mem["used"].max(), (100 * mem["used"] / mem["total"]).max(), mem["swap_used"].max(), mem["rss"].max()),
    "disk": (100 * disks["used"] / (disks["used"] + disks["free"])).max(),
    "io": ((io["read"] * frame["dt"]).sum(), (io["write"] * frame["dt"]).sum(), io["read"].max(), io["write"].max()),
    "net": ((net["in"] * frame["dt"]).sum(), (net["out"] * frame["dt"]).sum(), net["in"].max(), net["out"].max()),
    "pressure": pressure.mean().to_dict(),
    "containers": containers.groupby("name")["mem"].max().to_dict(),
    "self_cpu": frame["self_cpu"].max(),
}
print(summary)
"""

# The other baseline: the lines loaded into DuckDB (with all its threads) and the summary's figures taken by SQL, as
# the README shows a user doing for anything more than the summary.
DUCKDB_SUMMARY = r"""
import sys
import duckdb
con = duckdb.connect()
path = sys.argv[1].replace("'", "''")
con.execute(f"CREATE VIEW lines AS SELECT * FROM read_ndjson('{path}')")
busy = "(cpu.user + cpu.system + cpu.steal)"
figures = f'''
    SELECT count(*), min(t), max(t), avg({busy}), quantile_disc({busy}, 0.95), max({busy}),
           quantile_disc(cpu.busiest, 0.95), max(mem.used), max(100 * mem.used / mem.total), max(mem.swap_used),
           max(mem.rss), sum(io.read * dt), sum(io.write * dt), max(io.read), max(io.write),
           sum(net."in" * dt), sum(net."out" * dt), max(net."in"), max(net."out"),
           avg(pressure.cpu), avg(pressure.memory), avg(pressure.io), max(self_cpu)
    FROM lines'''
gaps = '''
    SELECT count(*) FROM (SELECT t - lag(t) OVER (ORDER BY t) AS step FROM lines)
    WHERE step > 2 * (SELECT median(dt) FROM lines)'''
disk = "SELECT max(100 * d.used / (d.used + d.free)) FROM (SELECT unnest(disk) AS d FROM lines)"
containers = "SELECT c.name, max(c.mem) FROM (SELECT unnest(containers) AS c FROM lines) GROUP BY 1"
print({name: con.execute(query).fetchall() for name, query in
       (("figures", figures), ("gaps", gaps), ("disk", disk), ("containers", containers))})
"""
BIG_LINES = 1_000_000
PANDAS_LINES = 100_000
"""pandas takes about a minute a million lines: it is measured on this many."""
RUNS = 100_000
"""Runs of one line each in the file of many runs."""


@dataclass(frozen=True)
class Run:
    wall: float
    """Seconds from start to exit."""
    cpu: float
    """User + system seconds of the command and every process it started and waited for (`wait4` counts them)."""


# The baseline of a file of many runs: DuckDB taking a fleet table's figures of each run (one row per host and
# start) by SQL, ordered as the table is, and printing them.
DUCKDB_RUNS = r"""
import sys
import duckdb
con = duckdb.connect()
path = sys.argv[1].replace("'", "''")
rows = con.execute(f'''
    SELECT host, start, min(t), max(t), sum(dt), count(*),
           sum((cpu.user + cpu.system + cpu.steal) * cores * dt) / sum(cores * dt),
           quantile_disc(cpu.user + cpu.system + cpu.steal, 0.95), max(100 * mem.used / mem.total),
           sum(mem.used * dt) / sum(mem.total * dt), max(mem.rss), sum((io.read + io.write) * dt),
           sum((net."in" + net."out") * dt)
    FROM read_ndjson('{path}') GROUP BY host, start ORDER BY host, start''').fetchall()
for row in rows:
    sys.stdout.write(" ".join(map(str, row)) + "\n")
"""


def measured(command: list[str], env: dict[str, str] | None = None) -> Run:
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{command} exited {child.returncode}")
    return Run(wall, usage.ru_utime + usage.ru_stime)


# `python -m orca.sample metrics FILE`, run as that command runs, then the peak resident MiB of this process and of
# the largest worker it forked.
PEAKS = r"""
import resource, runpy, sys
sys.argv = ["orca.sample", "metrics", *sys.argv[1:]]
try:
    runpy.run_module("orca.sample", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
peak = lambda who: resource.getrusage(who).ru_maxrss / 1024
print(f"{peak(resource.RUSAGE_SELF):.1f} {peak(resource.RUSAGE_CHILDREN):.1f}", file=sys.stderr)
"""


def peaks(path: Path, *options: str) -> tuple[float, float]:
    """The peak resident MiB of `orca metrics path` (with `options`) and of its worker (0 when it forked none)."""
    done = python_with_its_own_peak(PEAKS, *options, str(path))
    parent, worker = done.stderr.split()[-2:]
    return float(parent), float(worker)


def duckdb_peak(path: Path) -> float:
    """The peak resident MiB of the DuckDB baseline on `path`."""
    code = DUCKDB_SUMMARY + (
        "import resource\n"
        "print(f'{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f}', file=sys.stderr)\n")
    return float(python_with_its_own_peak(code, str(path)).stderr.split()[-1])


def _start_up() -> float:
    """Seconds of `orca metrics` on a file of one line: its start-up, which every figure above includes."""
    with tempfile.TemporaryDirectory() as tmp:
        one = write_run(Path(tmp) / "one.jsonl", 1)
        return statistics.median(measured([PYTHON, "-m", "orca.sample", "metrics", str(one)]).wall for _ in range(3))


def repeated(source: Path, path: Path, times: int) -> Path:
    """`source` written `times` over to `path`: a long file made fast (each copy's lines in time order)."""
    data = source.read_bytes()
    with path.open("wb") as out:
        for _ in range(times):
            out.write(data)
    return path


def bytes_read_for_newest_minute(path: Path) -> int:
    from orca.sample.readback.minute import newest_window
    from orca.sample.readback.shell.newest import samples_backwards

    read = 0
    with path.open("rb") as f:
        descriptor = f.fileno()

        def read_at(offset: int, length: int) -> bytes:
            nonlocal read
            read += length
            return os.pread(descriptor, length, offset)

        window = newest_window(samples_backwards(read_at, path.stat().st_size))
    assert window, "no newest minute"
    return read


def interleaved(commands: dict[str, list[str]], repeats: int) -> dict[str, list[Run]]:
    """Each command run `repeats` times, taking turns, so the machine's noise falls on all alike."""
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, command in commands.items():
            runs[name].append(measured(command))
    return runs


def medians(runs: dict[str, list[Run]], of: Callable[[Run], float]) -> dict[str, float]:
    return {name: statistics.median(map(of, got)) for name, got in runs.items()}


def report(row: Callable[[str, str, str, str, str, bool | None], None], repeats: int, lines: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        load = os.getloadavg()[0]
        run = write_run(base / "run.jsonl", PANDAS_LINES)
        runs = interleaved({"orca": [PYTHON, "-m", "orca.sample", "metrics", str(run)],
                            "pandas": [PYTHON, "-c", PANDAS_SUMMARY, str(run)]}, repeats)
        wall, cpu = medians(runs, lambda got: got.wall), medians(runs, lambda got: got.cpu)
        rate, baseline = PANDAS_LINES / wall["orca"], PANDAS_LINES / wall["pandas"]
        row(f"orca metrics, lines per second of wall-clock time ({PANDAS_LINES:,} lines of "
            f"{run.stat().st_size / PANDAS_LINES:.0f} bytes)", f"{rate:,.0f}", f"{baseline:,.0f} (pandas)",
            f"{rate / baseline:.2f}", ">= 2x pandas", rate >= 2 * baseline)
        run.unlink()

        small = write_run(base / "small.jsonl", 10_000)
        for size in (lines, BIG_LINES):
            path = repeated(small, base / "big.jsonl", size // 10_000)
            processes = part_count(path.stat().st_size, usable_cores())
            timed = interleaved({"orca": [PYTHON, "-m", "orca.sample", "metrics", str(path)],
                                 "duckdb": [PYTHON, "-c", DUCKDB_SUMMARY, str(path)]}, repeats)
            wall, cpu = medians(timed, lambda got: got.wall), medians(timed, lambda got: got.cpu)
            rate, duck = size / wall["orca"], size / wall["duckdb"]
            row(f"orca metrics, lines per second of wall-clock time ({size:,} lines, {processes} process(es), "
                f"start-up {_start_up():.2f} s of it; load {load:.1f} to {os.getloadavg()[0]:.1f})", f"{rate:,.0f}",
                f"{duck:,.0f} (DuckDB)", f"{rate / duck:.2f}", ">= 1x DuckDB", rate >= duck)
            row(f"orca metrics, CPU per line, every process ({size:,} lines)", f"{cpu['orca'] / size * 1e6:.2f} us",
                f"{cpu['duckdb'] / size * 1e6:.2f} us (DuckDB)", f"{cpu['orca'] / cpu['duckdb']:.2f}", "", None)
            if size == BIG_LINES:
                parent_small, worker_small = peaks(small)
                parent_big, worker_big = peaks(path)
                largest_small, largest_big = max(parent_small, worker_small), max(parent_big, worker_big)
                row(f"orca metrics peak memory, {BIG_LINES:,} lines against 10,000 (the larger of the process and its "
                    f"worker)", f"{largest_big:.1f} MiB", f"{largest_small:.1f} MiB",
                    f"+{largest_big - largest_small:.1f} MiB", "within 10 MiB", largest_big - largest_small <= 10)
                row(f"  DuckDB's peak memory, {BIG_LINES:,} lines against 10,000", f"{largest_big:.1f} MiB (orca)",
                    f"{duckdb_peak(path):.1f} MiB, {duckdb_peak(small):.1f} MiB (DuckDB)", "", "", None)
            path.unlink()

        many_runs(row, repeats, base, small)

        hundred = repeated(small, base / "hundred.jsonl", 100 * 2**20 // small.stat().st_size + 1)
        read = bytes_read_for_newest_minute(hundred)
        row(f"read_newest_minute, bytes read of a {hundred.stat().st_size / 2**20:.0f} MiB file",
            f"{read / 1024:.0f} KiB", "", "", "< 1 MB", read < 1_000_000)


def many_runs(row: Callable[[str, str, str, str, str, bool | None], None], repeats: int, base: Path,
              small: Path | None = None) -> None:
    """A file of `RUNS` runs of one line each: `orca metrics` (its table, as text and `--json`) against DuckDB taking
    each run's figures by SQL, in lines per second; and its peak memory."""
    many = write_one_line_runs(base / "cron.jsonl", RUNS)
    timed = interleaved({"orca": [PYTHON, "-m", "orca.sample", "metrics", str(many)],
                         "json": [PYTHON, "-m", "orca.sample", "metrics", "--json", str(many)],
                         "duckdb": [PYTHON, "-c", DUCKDB_RUNS, str(many)]}, repeats)
    wall, cpu = medians(timed, lambda got: got.wall), medians(timed, lambda got: got.cpu)
    rate = RUNS / wall["orca"]
    row(f"orca metrics, {RUNS:,} runs of one line each ({many.stat().st_size / 2**20:.0f} MiB; its table), lines per "
        f"second of wall-clock time", f"{rate:,.0f}", f"{RUNS / wall['duckdb']:,.0f} (DuckDB, by run)",
        f"{wall['duckdb'] / wall['orca']:.2f} (DuckDB's time over orca's)", ">= 100,000", rate >= 100_000)
    row("  CPU per run, every process", f"{cpu['orca'] / RUNS * 1e6:.1f} us",
        f"{cpu['duckdb'] / RUNS * 1e6:.1f} us (DuckDB)", f"{cpu['orca'] / cpu['duckdb']:.2f}", "", None)
    row("  the same with --json (each row with its run's summary), lines per second; CPU per run",
        f"{RUNS / wall['json']:,.0f}; {cpu['json'] / RUNS * 1e6:.1f} us", "", "", "", None)
    parent_many, worker_many = peaks(many)
    largest = max(parent_many, worker_many)
    row("  its peak memory (the larger of the process and its worker)", f"{largest:.1f} MiB",
        f"{duckdb_runs_peak(many):.1f} MiB (DuckDB)", "", "<= 64 MiB", largest <= 64)
    row("  the same with --json", f"{max(peaks(many, '--json')):.1f} MiB", "", "", "", None)
    if small is not None:
        parent_small, worker_small = peaks(small)
        row("  against 10,000 lines of one run", f"{largest:.1f} MiB", f"{max(parent_small, worker_small):.1f} MiB",
            "", "", None)
    many.unlink()


def duckdb_runs_peak(path: Path) -> float:
    code = DUCKDB_RUNS + (
        "import resource\n"
        "print(f'{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f}', file=sys.stderr)\n")
    return float(python_with_its_own_peak(code, str(path)).stderr.split()[-1])


def before_and_after(row: Callable[[str, str, str, str, str, bool | None], None], repeats: int, lines: int,
                     runs: int, before: Path) -> None:
    """`orca metrics` of this tree against the same command run from the `src/` at `before`, on the same files: a
    run of `lines` lines, and `runs` runs of one line each as text and as `--json`; in wall-clock time and in CPU
    time of every process (steadier on a loaded machine), each pair taken in turn first."""
    old = {**os.environ, "PYTHONPATH": str(before)}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        one = repeated(write_run(base / "small.jsonl", 10_000), base / "run.jsonl", max(1, lines // 10_000))
        many = write_one_line_runs(base / "cron.jsonl", runs)
        for what, args, count in ((f"a run of {lines:,} lines", [str(one)], lines),
                                  (f"{runs:,} runs of one line (the table)", [str(many)], runs),
                                  (f"{runs:,} runs of one line, --json", ["--json", str(many)], runs)):
            command = [PYTHON, "-m", "orca.sample", "metrics", *args]
            got: dict[str, list[Run]] = {"after": [], "before": []}
            for turn in range(repeats):
                for name in ("after", "before")[:: 1 if turn % 2 == 0 else -1]:
                    got[name].append(measured(command, None if name == "after" else old))
            for how, of in (("wall-clock", lambda run: run.wall), ("CPU", lambda run: run.cpu)):
                after, earlier = (statistics.median(map(of, got[name])) for name in ("after", "before"))
                row(f"orca metrics, {what}: lines per second of {how} time, median of {repeats}",
                    f"{count / after:,.0f}", f"{count / earlier:,.0f} (before)", f"{earlier / after:.2f}", "", None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lines", type=int, default=300_000,
                        help="lines of the file summarised beside DuckDB, before 1,000,000 (a multiple of 10,000)")
    parser.add_argument("--many-runs", action="store_true", help="only the file of 100,000 one-line runs")
    parser.add_argument("--before", type=Path, help="another tree's src/: orca metrics against it, taking turns")
    parser.add_argument("--runs", type=int, default=RUNS, help="runs of one line each, with --before")
    args = parser.parse_args(argv)

    def row(figure: str, orca: str, baseline: str, ratio: str, budget: str, ok: bool | None) -> None:
        verdict = "" if ok is None else ("ok" if ok else "OVER")
        print(f"| {figure} | {orca} | {baseline} | {ratio} | {budget} | {verdict} |", flush=True)

    print("| figure | orca | baseline | orca/baseline | budget | |")
    print("|---|---|---|---|---|---|")
    if args.before is not None:
        before_and_after(row, args.repeats, args.lines, args.runs, args.before)
        return 0
    if args.many_runs:
        with tempfile.TemporaryDirectory() as tmp:
            many_runs(row, args.repeats, Path(tmp))
        return 0
    report(row, args.repeats, args.lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
