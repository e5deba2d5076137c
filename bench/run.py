"""The benchmarks (bench/README.md): `orca sample` against a psutil sampler, interleaved in one run, medians of
repeats.

    python3 dev.py bench [--repeats N] [--quick]      (that is: .venv/bin/python -m bench.run ...)

Every figure is printed beside its budget and its baseline. CPU is the sampler's own `self_cpu` (user + system
seconds, from its lines), so the cost of starting Python is left out of the per-line figures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import orjson
import psutil

from bench.population import WORKER_ARGV0, filler, host_process_count, python_with_its_own_peak, run_tree

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
ORCA = [PYTHON, "-m", "orca.sample"]
BASELINE = [PYTHON, str(HERE / "psutil_sampler.py")]
FLOOR = [PYTHON, str(HERE / "floor_sampler.py")]


def _lines(path: Path) -> list[dict[str, object]]:
    text = path.read_bytes().splitlines()
    return [orjson.loads(line) for line in text if line.strip()]


def cpu_per_line(
    command: Sequence[str], lines: int, extra: Sequence[str] = (), env: dict[str, str] | None = None
) -> float:
    """Seconds of the sampler's own CPU per line: the `self_cpu` difference between its first and last line."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lines.jsonl"
        subprocess.run(
            [*command, "--out", str(out), "--seconds", "0.02", "--count", str(lines + 1), *extra],
            check=True,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        got = _lines(out)
    first, last = float(str(got[0]["self_cpu"])), float(str(got[-1]["self_cpu"]))
    return (last - first) / (len(got) - 1)


def interleaved(repeats: int, runs: dict[str, Callable[[], float]]) -> dict[str, float]:
    """The median of each run's figure, the runs taking turns so the machine's noise falls on all alike."""
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            samples[name].append(run())
    return {name: statistics.median(values) for name, values in samples.items()}


def time_to_first_line(command: Sequence[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen([*command, "--out", "-", "--count", "1"], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.readline()
    elapsed = time.perf_counter() - started
    proc.wait()
    return elapsed


# The wait between the baseline readings and the first line (the first line's rates need two readings).
SCHEDULE = 0.2


def time_to_exit(command: Sequence[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - started


def tree_floor_rows(repeats: int) -> None:
    """tree_rss and tree_usage against the better of the two raw floors (bench/tree_floors.py), on a narrow tree
    (20 of 500 processes) and a wide one (400 of 500), and against psutil on the narrow one."""
    from bench import tree_floors

    for children in (20, 400):
        with run_tree(children) as root, filler(500) as reached:
            time.sleep(0.5)  # the sleeps page themselves in first
            got = tree_functions(root, repeats, {
                "walk tree_rss": lambda: tree_floors.walk_rss(root),
                "scan tree_rss": lambda: tree_floors.scan_rss(root),
                "walk tree_usage": lambda: tree_floors.walk_usage(root),
                "scan tree_usage": lambda: tree_floors.scan_usage(root),
            })
            for name in ("tree_rss", "tree_usage"):
                o, walk, scan = got[f"orca {name}"], got[f"walk {name}"], got[f"scan {name}"]
                floor = min(walk, scan)
                row(f"{name}, a {children + 1}-process tree of {reached}, against the raw floors (walk {us(walk)}, "
                    f"scan {us(scan)})", us(o), us(floor), f"{o / floor:.2f}", "<= 1.2 x floor", o <= 1.2 * floor)
                if children == 20:
                    p = got[f"psutil {name}"]
                    row(f"  {name}, the same tree, against psutil", us(o), us(p), f"{o / p:.2f} ({p / o:.1f}x faster)",
                        ">= 6x faster", p / o >= 6)


def peak_rss_and_boto3() -> tuple[float, bool]:
    """Peak resident MiB of a sampler writing 20 lines to a file, and whether it loaded boto3."""
    probe = (
        "import resource, sys; from orca.sample import sample_main;"
        "status = sample_main(['orca', 'sample', '--out', sys.argv[1], '--count', '20', '--seconds', '0.05']);"
        "print('boto3' in sys.modules or 'botocore' in sys.modules, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        done = python_with_its_own_peak(probe, str(Path(tmp) / "lines.jsonl"))
    loaded, peak_kib = done.stdout.split()[-2:]
    return int(peak_kib) / 1024, loaded == "True"


def tree_functions(
    root: int, repeats: int, others: dict[str, Callable[[], object]] | None = None
) -> dict[str, float]:
    """Seconds per call of orca's tree_rss/tree_usage and of their psutil equivalents, medians."""
    from orca.sample import tree_rss, tree_usage

    def psutil_tree_rss() -> int:
        proc = psutil.Process(root)
        total = proc.memory_info().rss
        for child in proc.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                total += child.memory_info().rss
        return total

    def psutil_tree_usage() -> dict[int, tuple[int, float]]:
        proc = psutil.Process(root)
        members = [proc, *proc.children(recursive=True)]
        rss, cpu = 0, 0.0
        for member in members:
            try:
                rss += member.memory_info().rss
                t = member.cpu_times()
                cpu += t.user + t.system + t.children_user + t.children_system
            except psutil.Error:
                pass
        return {root: (rss, cpu)}

    def timed(fn: Callable[[], object]) -> float:
        started = time.perf_counter()
        fn()
        return time.perf_counter() - started

    runs: dict[str, Callable[[], float]] = {
        "orca tree_rss": lambda: timed(lambda: tree_rss(root)),
        "psutil tree_rss": lambda: timed(psutil_tree_rss),
        "orca tree_usage": lambda: timed(lambda: tree_usage([root])),
        "psutil tree_usage": lambda: timed(psutil_tree_usage),
        **{name: partial(timed, fn) for name, fn in (others or {}).items()},
    }
    return interleaved(repeats, runs)


def cpu_seconds_of(pid: int) -> float:
    """A process's CPU time so far, in ns precision (`/proc/<pid>/schedstat`: time on a CPU)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def hour_at_default_interval(window: float, root: int) -> dict[str, float]:
    """CPU seconds an hour costs each sampler at `--seconds 5 --pid ROOT`, measured over `window` seconds of both
    running side by side (so they share the machine's noise), after their first line; extrapolated × 3600/window."""
    with tempfile.TemporaryDirectory() as tmp:
        procs = {
            name: subprocess.Popen([*command, "--out", str(Path(tmp) / f"{name}.jsonl"), "--seconds", "5",
                                    "--pid", str(root)])
            for name, command in (("orca", ORCA), ("psutil", BASELINE))
        }
        try:
            time.sleep(1.0)  # both past start-up and their first line
            before = {name: cpu_seconds_of(proc.pid) for name, proc in procs.items()}
            time.sleep(window)
            after = {name: cpu_seconds_of(proc.pid) for name, proc in procs.items()}
        finally:
            for proc in procs.values():
                proc.terminate()
                proc.wait()
    return {name: (after[name] - before[name]) * 3600 / window for name in procs}


def row(figure: str, orca: str, baseline: str, ratio: str, budget: str, ok: bool | None) -> None:
    verdict = "" if ok is None else ("ok" if ok else "OVER")
    print(f"| {figure} | {orca} | {baseline} | {ratio} | {budget} | {verdict} |", flush=True)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def readers(repeats: int, lines: int) -> None:
    """CPU per line of `orca sample` on each reader (ORCA_SAMPLE_READER=proc, =psutil) beside the psutil baseline:
    the psutil reader is what macOS runs, and reads through the same library as the baseline."""
    forced = {name: {**os.environ, "ORCA_SAMPLE_READER": name} for name in ("proc", "psutil")}
    with run_tree() as root:
        for label, extra in (("no --pid", []), ("--pid (a 21-process tree)", ["--pid", str(root)])):
            got = interleaved(repeats, {
                "proc": partial(cpu_per_line, ORCA, lines, extra, forced["proc"]),
                "psutil": partial(cpu_per_line, ORCA, lines, extra, forced["psutil"]),
                "baseline": partial(cpu_per_line, BASELINE, lines, extra),
            })
            row(f"CPU per line, {label}, /proc reader", us(got["proc"]), us(got["baseline"]),
                f"{got['proc'] / got['baseline']:.2f}", "", None)
            row(f"CPU per line, {label}, psutil reader", us(got["psutil"]), us(got["baseline"]),
                f"{got['psutil'] / got['baseline']:.2f}", "close to baseline", None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="runs of each measurement; medians are printed")
    parser.add_argument("--lines", type=int, default=200, help="lines per CPU measurement")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and smaller populations")
    parser.add_argument("--readers", action="store_true", help="only the /proc and psutil readers' CPU per line")
    parser.add_argument("--s3", action="store_true", help="then bench/s3.py: S3 upload costs over 1-48 h (minutes)")
    args = parser.parse_args(argv)
    repeats = 2 if args.quick else args.repeats
    populations = (400,) if args.quick else (400, 4000)
    lines = args.lines
    if args.readers:
        print(f"psutil {psutil.__version__}, medians of {repeats} interleaved runs\n")
        print("| figure | orca sample | psutil baseline | orca/baseline | budget | |")
        print("|---|---|---|---|---|---|")
        readers(repeats, lines)
        return 0

    print(f"host: {os.cpu_count()} cores, python {sys.version.split()[0]}, psutil {psutil.__version__}, "
          f"{host_process_count()} processes before the benchmark; medians of {repeats} interleaved runs\n")
    print("| figure | orca sample | psutil baseline | orca/baseline | budget | |")
    print("|---|---|---|---|---|---|")

    plain = interleaved(repeats, {
        "orca": lambda: cpu_per_line(ORCA, lines),
        "psutil": lambda: cpu_per_line(BASELINE, lines),
        "floor": lambda: cpu_per_line(FLOOR, lines),
    })
    row("CPU per line, no --pid", us(plain["orca"]), us(plain["psutil"]), f"{plain['orca'] / plain['psutil']:.2f}",
        "<= 0.5 x baseline", plain["orca"] <= 0.5 * plain["psutil"])
    row("  against the floor (bench/floor_sampler.py: the same line, the least Python)", us(plain["orca"]),
        us(plain["floor"]), f"{plain['orca'] / plain['floor']:.2f}", "<= 1.5 x floor",
        plain["orca"] <= 1.5 * plain["floor"])

    per_line_at_400 = plain["orca"]
    with run_tree() as root:
        for population in populations:
            with filler(population) as reached:
                for label, extra in (("--pid", ["--pid", str(root)]),
                                     ("--pid --match", ["--pid", str(root), "--match", WORKER_ARGV0])):
                    got = interleaved(repeats, {
                        "orca": partial(cpu_per_line, ORCA, lines, extra),
                        "psutil": partial(cpu_per_line, BASELINE, lines, extra),
                    })
                    extra_per_process = (got["orca"] - plain["orca"]) / reached
                    ratio = got["orca"] / got["psutil"]
                    most = 0.25 if population == 400 and label == "--pid" else 0.5
                    row(f"CPU per line, {label}, {reached} host processes", us(got["orca"]), us(got["psutil"]),
                        f"{ratio:.2f}", f"<= {most} x baseline", ratio <= most)
                    row(f"  on top of the plain line, per host process ({label}, {reached})",
                        f"{extra_per_process * 1e6:.2f} µs", "", "", "<= 10 µs", extra_per_process <= 10e-6)
                    if population == 400 and label == "--pid":
                        per_line_at_400 = got["orca"]

        smallest: dict[str, tuple[int, float]] = {}
        for population in (100, 1000, 4000) if not args.quick else (100, 1000):
            with filler(population) as reached:
                got = tree_functions(root, max(repeats, 5))
                for name in ("tree_rss", "tree_usage"):
                    o, p = got[f"orca {name}"], got[f"psutil {name}"]
                    row(f"{name}, {reached} host processes (a 21-process tree)", us(o), us(p),
                        f"{o / p:.2f} ({p / o:.1f}x faster)", ">= 4x faster", p / o >= 4)
                    first_n, first_o = smallest.setdefault(name, (reached, o))
                    if reached != first_n:
                        growth, linear = o / first_o, reached / first_n
                        row(f"  {name} growth from {first_n} to {reached} host processes", f"x{growth:.2f}", "",
                            "", f"at most linear (x{linear:.1f})", growth <= linear)

    tree_floor_rows(max(repeats, 5))

    first = interleaved(max(repeats, 5), {
        "orca": lambda: time_to_first_line(ORCA),
        "psutil": lambda: time_to_first_line(BASELINE),
        "import orjson": lambda: time_to_exit([PYTHON, "-c", "import orjson"]),
    })
    row("exec to first line on stdout", f"{first['orca']:.3f} s", f"{first['psutil']:.3f} s",
        f"{first['orca'] / first['psutil']:.2f}", "<= 0.35 s", first["orca"] <= 0.35)
    started = first["orca"] - SCHEDULE
    row(f"  less the {SCHEDULE} s schedule, against `python -c \"import orjson\"` exiting", f"{started:.3f} s",
        f"{first['import orjson']:.3f} s", f"{started / first['import orjson']:.2f}", "<= 1.5 x",
        started <= 1.5 * first["import orjson"])

    peaks = [peak_rss_and_boto3() for _ in range(3)]
    peak = statistics.median(p for p, _ in peaks)
    loaded = any(b for _, b in peaks)
    row("peak resident memory, --out FILE", f"{peak:.1f} MiB", "", "", "<= 25 MiB", peak <= 25)
    row("boto3 loaded for --out FILE", str(loaded), "", "", "False", not loaded)
    from bench.s3 import S3_BUDGET_MIB, s3_sampler_peak

    s3_peak = statistics.median(s3_sampler_peak() for _ in range(3))
    row("peak resident memory, --out s3:// (a boto3 client, uploads every 0.5 s)", f"{s3_peak:.1f} MiB", "", "",
        f"<= {S3_BUDGET_MIB} MiB", s3_peak <= S3_BUDGET_MIB)

    hour = per_line_at_400 * 720
    row("CPU for an hour at 5 s, from the per-line figure (720 x CPU per line with --pid, ~400 processes)",
        f"{hour:.3f} s", "", "", "", None)  # the budget is on the hour measured below
    with run_tree() as root, filler(400) as reached:
        window = 30.0 if args.quick else 60.0
        hours = [hour_at_default_interval(window, root) for _ in range(1 if args.quick else 3)]
        o = statistics.median(h["orca"] for h in hours)
        p = statistics.median(h["psutil"] for h in hours)
        row(f"CPU for an hour at 5 s, measured over {window:.0f} s with --pid ({reached} processes)",
            f"{o:.3f} s", f"{p:.3f} s", f"{o / p:.2f}", "<= 0.6 s", o <= 0.6)
        # Where that hour goes: a cold line without and with --pid (bench/cold.py), the samplers started apart.
        from bench.cold import cold_per_line, standard_samplers
        from bench.cold import rows as cold_rows

        cold = cold_per_line(standard_samplers(root), 5.0, 30.0, 1 if args.quick else 2)
        for figure, orca_cold, baseline_cold, cold_ratio in cold_rows(cold, 5.0, reached):
            row(figure, orca_cold, baseline_cold, cold_ratio, "", None)

    from bench.containers import container_figures  # it imports this module's helpers

    container_figures(repeats, lines)
    readers(repeats, lines)

    from bench.metrics import report

    report(row, 1 if args.quick else 3, 50_000 if args.quick else 300_000)

    from bench.chart import CHART_LINES
    from bench.chart import report as chart_report

    chart_report(row, 1 if args.quick else 3, list(CHART_LINES))

    if args.s3:
        from bench.s3 import main as s3_figures

        s3_figures([])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
