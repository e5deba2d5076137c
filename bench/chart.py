"""The chart's benchmark: `orca metrics FILE --plot FILE.png` against what a user would write with DuckDB and matplotlib
to draw the same panels (the run's CPU and memory, then the host's CPU, memory, disk, io, net, pressure and containers,
each thinned to about 1,000 points of time, as `orca metrics` draws at most), side by side in the same run, taking
turns. The budgets: at 300,000 lines `orca metrics --plot` takes at most as long as DuckDB + matplotlib drawing the
chart; at 1,000,000, as long as DuckDB computing the summary's figures and the chart from one load, and matplotlib
drawing it (`orca metrics --plot` prints the summary too); and at 1,000,000, at most 1.2 times its own floor (`FLOOR`:
the lines decoded and the same points drawn, in one process), taking turns with it. Beside them, the CPU of orca's
reading alone (every line decoded and checked, nothing folded or drawn): the part of the budget no fold can win back.
Then files of 1,000 and 5,000 runs of one line each: how long their chart takes, and its size.

    .venv/bin/python -m bench.chart [--lines N,N] [--repeats N]      (also run by `python3 dev.py bench`)

Needs the `bench` extra (duckdb) and matplotlib.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec

from bench.metrics import interleaved, medians
from bench.runs import line_at, write_one_line_runs
from orca.sample.compute.encode import encode_line
from orca.sample.line_format import RunSample
from orca.sample.readback.shell.parts import part_count, usable_cores

PYTHON = sys.executable
CHART_LINES = (300_000, 1_000_000)
"""The runs' lengths measured by default: the chart alone against DuckDB's up to 300,000, with the summary past."""
BOTH_LINES = 1_000_000
"""From this many lines, DuckDB computes the summary's figures too, from the same load."""
MANY_RUNS = (1_000, 5_000)
BLOCK = 20_000
"""Distinct lines made; a longer run repeats them, each copy later by the block's length."""

# The baseline: the lines loaded into DuckDB, each panel's series averaged (memory: its peak) over 1,000 slots of
# time, and drawn with matplotlib as the figure of `orca metrics --plot` is: one panel under another, the run's
# memory on an axis of its own. The columns are named, as a user who knows the line would (and must: the last line's
# `run.exit` is not in the first lines DuckDB looks at to guess them), so DuckDB reads only what the chart needs.
DUCKDB_CHART = r"""
import sys
import duckdb
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

path, out = sys.argv[1], sys.argv[2]
db = duckdb.connect()
columns = {
    "t": "DOUBLE", "run": "STRUCT(cpu DOUBLE)", "mem": "STRUCT(used BIGINT, cache BIGINT, rss BIGINT)",
    "cpu": "STRUCT(user DOUBLE, system DOUBLE, iowait DOUBLE, busiest DOUBLE)",
    "disk": "STRUCT(used BIGINT, free BIGINT)[]", "io": "STRUCT(read BIGINT, write BIGINT)",
    "net": 'STRUCT("in" BIGINT, "out" BIGINT)', "pressure": "STRUCT(cpu DOUBLE, memory DOUBLE, io DOUBLE)",
    "containers": "STRUCT(name VARCHAR, mem BIGINT)[]",
}
SUMMARY = "summary" in sys.argv[3:]
if SUMMARY:  # the summary's figures too, from the same load: every column they need
    columns |= {
        "dt": "DOUBLE", "start": "DOUBLE", "self_cpu": "DOUBLE",
        "cpu": "STRUCT(user DOUBLE, system DOUBLE, iowait DOUBLE, steal DOUBLE, busiest DOUBLE)",
        "mem": "STRUCT(total BIGINT, used BIGINT, cache BIGINT, swap_used BIGINT, rss BIGINT)",
        "disk": "STRUCT(path VARCHAR, used BIGINT, free BIGINT)[]",
        "run": "STRUCT(cpu DOUBLE, procs BIGINT)",
    }
db.execute("CREATE TABLE lines AS SELECT * FROM read_json($path, format = 'newline_delimited', columns = $columns)",
           {"path": path, "columns": columns})
if SUMMARY:
    busy = "(cpu.user + cpu.system + cpu.steal)"
    print(db.execute(f'''
        SELECT count(*), min(t), max(t), avg({busy}), quantile_disc({busy}, 0.95), max({busy}),
               quantile_disc(cpu.busiest, 0.95), max(mem.used), max(100 * mem.used / mem.total), max(mem.swap_used),
               max(mem.rss), sum(io.read * dt), sum(io.write * dt), max(io.read), max(io.write),
               sum(net."in" * dt), sum(net."out" * dt), max(net."in"), max(net."out"),
               avg(pressure.cpu), avg(pressure.memory), avg(pressure.io), max(self_cpu),
               sum(run.cpu * dt) / sum(dt), max(run.cpu), max(run.procs)
        FROM lines''').fetchall())
    print(db.execute("SELECT max(100 * d.used / (d.used + d.free)) FROM (SELECT unnest(disk) AS d FROM lines)"
                     ).fetchall())
    print(db.execute("SELECT c.name, max(c.mem) FROM (SELECT unnest(containers) AS c FROM lines) GROUP BY 1"
                     ).fetchall())
low, high = db.execute("SELECT min(t), max(t) FROM lines").fetchone()
width = max((high - low) / 1000, 0.001)
slot = f"floor((t - {low}) / {width})"
rows = db.execute(f'''
    SELECT avg(t), avg(run.cpu), max(mem.rss),
           avg(cpu.user), avg(cpu.system), avg(cpu.iowait), avg(cpu.busiest), max(mem.used), max(mem.cache),
           max(list_max(list_transform(disk, lambda d: 100.0 * d.used / (d.used + d.free)))),
           avg(io.read), avg(io.write), avg(net."in"), avg(net."out"),
           avg(pressure.cpu), avg(pressure.memory), avg(pressure.io)
    FROM lines GROUP BY {slot} ORDER BY {slot}''').fetchall()
containers = db.execute(f'''
    SELECT entry.name, avg(t), max(entry.mem) FROM (SELECT t, unnest(containers) AS entry FROM lines)
    GROUP BY entry.name, {slot} ORDER BY entry.name, {slot}''').fetchall()
columns = list(zip(*rows))
elapsed = [t - low for t in columns[0]]
figure, axes = plt.subplots(8, 1, sharex=True, figsize=(11, 2.1 * 8 + 1.2))
axes[0].plot(elapsed, columns[1], label="run's CPU")
memory = axes[0].twinx()
memory.plot(elapsed, [value / 2**20 for value in columns[2]], color="C1", label="run's resident memory")
names = ["user", "system", "iowait", "busiest core", "used", "cache", "fullest file system", "read", "write", "in",
         "out", "cpu", "memory", "io"]
for axis, at, scale in ((axes[1], (3, 4, 5, 6), 1), (axes[2], (7, 8), 2**30), (axes[3], (9,), 1),
                        (axes[4], (10, 11), 2**20), (axes[5], (12, 13), 2**20), (axes[6], (14, 15, 16), 1)):
    for index in at:
        axis.plot(elapsed, [value / scale for value in columns[index]], linewidth=1.0, label=names[index - 3])
named = {}
for name, t, mem in containers:
    named.setdefault(name, ([], []))
    named[name][0].append(t - low)
    named[name][1].append(mem / 2**20)
for name, (x, y) in named.items():
    axes[7].plot(x, y, linewidth=1.0, label=name)
for axis in axes:
    axis.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize="small", frameon=False)
figure.tight_layout()
figure.savefig(out, dpi=90)
"""


# What no fold can go below: every line read, decoded and checked into its records as `orca metrics` does (the
# collector paused, as there), in one process, nothing folded and nothing drawn. Its CPU beside DuckDB's whole chart
# says how much of the chart's budget decoding alone takes.
READING_ALONE = r"""
import gc
import sys
from orca.sample.readback.shell.sources import Tally, decoded, sources

gc.disable()
tally = Tally()
for source in sources(sys.argv[1]):
    for _ in decoded(source.batches(), tally):
        pass
assert tally.samples > 0 and tally.skipped == 0, tally
"""


# The chart's own floor: every line decoded as `orca metrics` decodes it, then the same points drawn as it draws them,
# in one process. The points are orca's own series of the run, folded once before the measured runs (`SERIES`) and
# read back here from a pickle, so the floor's time is its process's whole time, measured as orca's is, taking turns
# with it.
FLOOR = r"""
import gc
import pickle
import sys
from orca.sample.readback.shell.plot import draw, load_plotting
from orca.sample.readback.shell.sources import Tally, decoded, sources

gc.disable()
[source] = sources(sys.argv[1])
tally = Tally()
for _ in decoded(source.batches(), tally):
    pass
with open(sys.argv[2], "rb") as kept:
    series, runs = pickle.load(kept)
load_plotting()
draw(series, sys.argv[3], runs)
"""
# What the floor draws: the run's series as `orca metrics` folds them, pickled.
SERIES = r"""
import pickle
import sys
from orca.sample.readback.shell.parts import show_runs
from orca.sample.readback.shell.shown import Shown
from orca.sample.readback.shell.sources import sources

[source] = sources(sys.argv[1])
shown = Shown(lambda summary: "", lambda text: None)
show_runs(source, shown, 6, parts=1)
series = [one for _, one in sorted(shown.series, key=lambda each: each[0])]
with open(sys.argv[2], "wb") as out:
    pickle.dump((series, shown.totals.runs), out)
"""
FLOOR_SHARE = 1.2
"""From `BOTH_LINES`, `orca metrics --plot` takes at most this many times its own floor."""


def write_command_run(path: Path, lines: int, seconds: float = 5.0, start: float = 1796000000.0) -> Path:
    """`lines` lines of one `-- COMMAND` run at `seconds` apart (the shapes of `bench/runs.py`'s day, with the run's
    CPU and memory): `BLOCK` distinct lines, repeated later and later."""
    rng = random.Random(1)
    block: list[bytes] = []
    for i in range(min(lines, BLOCK)):
        line = line_at(i, start + 0.2 + i * seconds, seconds, rng)
        assert line.mem is not None and line.cpu is not None
        run = RunSample(cpu=round(line.cpu.user * 0.8, 1), procs=3)
        block.append(encode_line(msgspec.structs.replace(line, run=run, start=start)))
    span = len(block) * seconds
    with path.open("wb") as out:
        for i in range(lines):
            raw = block[i % len(block)]
            copy = i // len(block)
            if copy:  # the same line `copy` blocks later: its `t` (after `{"v":1,"t":`) moved on
                comma = raw.index(b",", 11)
                raw = raw[:11] + repr(round(float(raw[11:comma]) + copy * span, 3)).encode() + raw[comma:]
            if i == 0:  # the first line names the command, the last says how it ended
                raw = raw.replace(b',"procs":3}', b',"procs":3,"command":["python3","etl.py"]}')
            if i == lines - 1:
                wall = repr(i * seconds).encode()
                raw = raw.replace(b',"procs":3}', b',"procs":3,"exit":{"code":0,"wall":%s}}' % wall)
            out.write(raw + b"\n")
    return path


def report(row: Callable[[str, str, str, str, str, bool | None], None], repeats: int, sizes: list[int]) -> None:
    """Rows of `| figure | orca | baseline | orca/baseline | budget | |` through `row`, as `bench/run.py` prints."""
    with tempfile.TemporaryDirectory() as tmp:
        quiet = ["sh", "-c", 'exec "$@" 2>/dev/null', "sh"]  # `drew FILE` and the like not shown
        for lines in sizes:
            path = write_command_run(Path(tmp) / "run.jsonl", lines)
            processes = part_count(path.stat().st_size, usable_cores())
            both = lines >= BOTH_LINES
            commands = {
                "orca": [*quiet, PYTHON, "-m", "orca.sample", "metrics", str(path), "--plot", f"{tmp}/orca.png"],
                "duckdb": [*quiet, PYTHON, "-c", DUCKDB_CHART, str(path), f"{tmp}/duckdb.png",
                           *(["summary"] if both else [])],
                "reading": [PYTHON, "-c", READING_ALONE, str(path)],
            }
            if both:
                subprocess.run([PYTHON, "-c", SERIES, str(path), f"{tmp}/series.pickle"], check=True)
                commands["floor"] = [PYTHON, "-c", FLOOR, str(path), f"{tmp}/series.pickle", f"{tmp}/floor.png"]
            load = os.getloadavg()[0]
            runs = interleaved(commands, repeats)
            wall, cpu = medians(runs, lambda got: got.wall), medians(runs, lambda got: got.cpu)
            size = f"{lines:,} lines of {path.stat().st_size / lines:.0f} bytes, {processes} process(es)"
            baseline = "DuckDB's summary and chart + matplotlib" if both else "DuckDB's chart + matplotlib"
            row(f"orca metrics --plot, wall-clock seconds ({size}; load {load:.1f} to {os.getloadavg()[0]:.1f})",
                f"{wall['orca']:.2f} s", f"{wall['duckdb']:.2f} s ({baseline})",
                f"{wall['orca'] / wall['duckdb']:.2f}", "measured", None)
            row(f"orca metrics --plot, CPU seconds of every process ({lines:,} lines)", f"{cpu['orca']:.2f} s",
                f"{cpu['duckdb']:.2f} s", f"{cpu['orca'] / cpu['duckdb']:.2f}", "", None)
            if both:
                floor = wall["floor"]
                row(f"orca metrics --plot against its floor: the lines decoded and the same points drawn, one process "
                    f"({lines:,} lines)", f"{wall['orca']:.2f} s", f"{floor:.2f} s (floor)",
                    f"{wall['orca'] / floor:.2f}", f"<= {FLOOR_SHARE}x", wall["orca"] <= FLOOR_SHARE * floor)
                row(f"the same, CPU seconds of every process ({lines:,} lines)", f"{cpu['orca']:.2f} s",
                    f"{cpu['floor']:.2f} s (floor)", f"{cpu['orca'] / cpu['floor']:.2f}", "", None)
            row(f"orca's reading alone: every line decoded and checked, nothing folded or drawn, one process, CPU "
                f"seconds ({lines:,} lines)", f"{cpu['reading']:.2f} s", f"{cpu['duckdb']:.2f} s ({baseline})",
                f"{cpu['reading'] / cpu['duckdb']:.2f}", "", None)
            path.unlink()
        for count in MANY_RUNS:
            many = write_one_line_runs(Path(tmp) / "cron.jsonl", count)
            chart = Path(tmp) / "many.png"
            runs = interleaved({"orca": [*quiet, PYTHON, "-m", "orca.sample", "metrics", str(many), "--plot",
                                         str(chart)]}, repeats)
            width, height = png_size(chart)
            seconds = medians(runs, lambda got: got.wall)["orca"]
            row(f"orca metrics --plot of {count:,} runs of one line each: wall-clock seconds, the image's size",
                f"{seconds:.2f} s, {width}x{height}", "", "", "<= 5 s", seconds <= 5)
            many.unlink()


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height, from its header."""
    header = path.read_bytes()[16:24]
    return int.from_bytes(header[:4], "big"), int.from_bytes(header[4:], "big")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lines", default=",".join(map(str, CHART_LINES)), help="the runs' lengths, comma-separated")
    args = parser.parse_args(argv)
    from bench.run import row  # its table's rows, as `python3 dev.py bench` prints them

    print("| figure | orca | baseline | orca/baseline | budget | |")
    print("|---|---|---|---|---|---|")
    report(row, args.repeats, [int(size) for size in args.lines.split(",")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
