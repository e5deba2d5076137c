"""The reader's benchmarks: `orca metrics` against what a user would write with pandas, its memory on a long file,
and how much of a big file `read_newest_minute` reads.

    .venv/bin/python -m bench.metrics [--lines N] [--repeats N]      (also run at the end of `python3 dev.py bench`)
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
from bench.runs import write_run
from orca.sample.compute.report.parts import part_count
from orca.sample.shell.readback.parts import usable_cores

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


@dataclass(frozen=True)
class Run:
    wall: float
    """Seconds from start to exit."""
    cpu: float
    """User + system seconds of the command and every process it started and waited for (`wait4` counts them)."""


def measured(command: list[str]) -> Run:
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
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


def peaks(path: Path) -> tuple[float, float]:
    """The peak resident MiB of `orca metrics path` and of its worker (0 when it forked none)."""
    done = python_with_its_own_peak(PEAKS, str(path))
    parent, worker = done.stderr.split()[-2:]
    return float(parent), float(worker)


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
    from orca.sample.compute.minute import newest_window
    from orca.sample.shell.readback.newest import samples_backwards

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


def report(row: Callable[[str, str, str, str, str, bool | None], None], repeats: int, lines: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        run = write_run(base / "run.jsonl", lines)
        processes = part_count(run.stat().st_size, usable_cores())
        commands = {"orca": [PYTHON, "-m", "orca.sample", "metrics", str(run)],
                    "pandas": [PYTHON, "-c", PANDAS_SUMMARY, str(run)]}
        runs: dict[str, list[Run]] = {name: [] for name in commands}
        for _ in range(repeats):  # taking turns, so the machine's noise falls on both alike
            for name, command in commands.items():
                runs[name].append(measured(command))
        wall = {name: statistics.median(run.wall for run in got) for name, got in runs.items()}
        cpu = {name: statistics.median(run.cpu for run in got) for name, got in runs.items()}
        rate, baseline = lines / wall["orca"], lines / wall["pandas"]
        size = f"{lines:,} lines of {run.stat().st_size / lines:.0f} bytes, {processes} process(es)"
        row(f"orca metrics, lines per second of wall-clock time ({size})", f"{rate:,.0f}",
            f"{baseline:,.0f} (pandas)", f"{rate / baseline:.2f}", ">= 150,000 and >= 2x baseline",
            rate >= 150_000 and rate >= 2 * baseline)
        row(f"orca metrics, CPU per line, every process ({lines:,} lines)", f"{cpu['orca'] / lines * 1e6:.2f} us",
            f"{cpu['pandas'] / lines * 1e6:.2f} us (pandas)", f"{cpu['orca'] / cpu['pandas']:.2f}", "", None)

        small = write_run(base / "small.jsonl", 10_000)
        big = repeated(small, base / "big.jsonl", 100)
        got_big = [measured([PYTHON, "-m", "orca.sample", "metrics", str(big)]) for _ in range(repeats)]
        wall_big = statistics.median(run.wall for run in got_big)
        cpu_big = statistics.median(run.cpu for run in got_big)
        big_processes = part_count(big.stat().st_size, usable_cores())
        row(f"orca metrics, lines per second of wall-clock time (1,000,000 lines, {big_processes} process(es), "
            f"start-up {_start_up():.2f} s of it)", f"{1_000_000 / wall_big:,.0f}", "", "", ">= 150,000",
            1_000_000 / wall_big >= 150_000)
        row("orca metrics, CPU per line, every process (1,000,000 lines)", f"{cpu_big / 1_000_000 * 1e6:.2f} us",
            "", "", "", None)
        parent_small, worker_small = peaks(small)
        parent_big, worker_big = peaks(big)
        peak_small, peak_big = max(parent_small, worker_small), max(parent_big, worker_big)
        row("orca metrics peak memory, 1,000,000 lines against 10,000 (the larger of the process and its worker)",
            f"{peak_big:.1f} MiB", f"{peak_small:.1f} MiB", f"+{peak_big - peak_small:.1f} MiB", "within 10 MiB",
            peak_big - peak_small <= 10)
        row("orca metrics peak memory of the process and of its worker, 1,000,000 lines",
            f"{parent_big:.1f} MiB, {worker_big:.1f} MiB", "", "", "", None)
        big.unlink()

        hundred = repeated(small, base / "hundred.jsonl", 100 * 2**20 // small.stat().st_size + 1)
        read = bytes_read_for_newest_minute(hundred)
        row(f"read_newest_minute, bytes read of a {hundred.stat().st_size / 2**20:.0f} MiB file",
            f"{read / 1024:.0f} KiB", "", "", "< 1 MB", read < 1_000_000)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lines", type=int, default=200_000, help="lines of the file summarised")
    args = parser.parse_args(argv)

    def row(figure: str, orca: str, baseline: str, ratio: str, budget: str, ok: bool | None) -> None:
        verdict = "" if ok is None else ("ok" if ok else "OVER")
        print(f"| {figure} | {orca} | {baseline} | {ratio} | {budget} | {verdict} |", flush=True)

    print("| figure | orca | baseline | orca/baseline | budget | |")
    print("|---|---|---|---|---|---|")
    report(row, args.repeats, args.lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
