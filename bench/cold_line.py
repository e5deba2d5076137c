"""CPU of one line after a sleep, this checkout's `Sampler` against another checkout's, interleaved in one run.

    .venv/bin/python -m bench.cold_line --against DIR [--sleep S] [--lines N] [--repeats R]

At the default interval a line comes after seconds of sleep: the CPU caches and the interpreter's specialised
bytecode are cold, and the line costs several times what it costs in a tight loop. Each run is a process of its
own making a `Sampler` (no --pid) and timing `line_bytes()` with the process CPU clock, `--lines` times after
`--sleep` seconds each (cold) and as many times back to back (hot). Printed: the medians of the runs' medians,
in microseconds, and this checkout's figure over the other's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

_RUN = """
import statistics, sys, tempfile, time
from orca.sample.shell.sampler import Sampler
lines, sleep = int(sys.argv[1]), float(sys.argv[2])
with Sampler(0, "", [tempfile.gettempdir()]) as sampler:
    for _ in range(3):
        sampler.line_bytes()
    cold, hot = [], []
    for _ in range(lines):
        time.sleep(sleep)
        started = time.process_time_ns()
        sampler.line_bytes()
        cold.append(time.process_time_ns() - started)
    for _ in range(lines):
        started = time.process_time_ns()
        sampler.line_bytes()
        hot.append(time.process_time_ns() - started)
print(statistics.median(cold) / 1000, statistics.median(hot) / 1000)
"""


def one_run(checkout: Path, lines: int, sleep: float) -> tuple[float, float]:
    """(cold, hot) µs per line: the medians of one process's lines."""
    env = dict(os.environ, PYTHONPATH=str(checkout / "src"))
    out = subprocess.run(
        [sys.executable, "-c", _RUN, str(lines), str(sleep)], env=env, check=True, capture_output=True, text=True
    ).stdout.split()
    return float(out[0]), float(out[1])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", required=True, type=Path, help="the root of the other checkout")
    parser.add_argument("--sleep", type=float, default=1.0, help="seconds before each cold line (default 1)")
    parser.add_argument("--lines", type=int, default=20, help="lines per run (default 20)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per checkout, taking turns (default 3)")
    args = parser.parse_args(argv)
    checkouts = {"this": HERE, "other": args.against.resolve()}
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
    for _ in range(args.repeats):
        for name, checkout in checkouts.items():
            runs[name].append(one_run(checkout, args.lines, args.sleep))
    cold = {name: statistics.median(cold for cold, _ in got) for name, got in runs.items()}
    hot = {name: statistics.median(hot for _, hot in got) for name, got in runs.items()}
    print(f"this: {checkouts['this']}  other: {checkouts['other']}  medians of {args.repeats} interleaved runs "
          f"of {args.lines} lines\n")
    print("| CPU per line, no --pid | this | other | this/other |")
    print("|---|---|---|---|")
    print(f"| after {args.sleep:g} s of sleep | {cold['this']:,.0f} µs | {cold['other']:,.0f} µs | "
          f"{cold['this'] / cold['other']:.2f} |")
    print(f"| back to back | {hot['this']:,.0f} µs | {hot['other']:,.0f} µs | {hot['this'] / hot['other']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
