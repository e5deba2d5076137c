"""What charging a reaped child's CPU to its own name costs a line (docs/behaviour.md §3.12), and what reading the
run's shared pages (PSS) would cost beside the resident size the line reads now.

    .venv/bin/python -m bench.exits [--processes 50] [--reaped 10] [--repeats 2000]

1. `run_section` over two readings of a `make -j`-like tree of `--processes`: a steady pair (no process ended: the
   plain line) and a pair in which `--reaped` compilers were reaped by their parent, whose children's time jumped
   (the split to the compilers' names runs). Medians of interleaved timings, and their ratio.
2. One process's `/proc/<pid>/statm` (what the line reads for its resident size) against its `smaps_rollup` (its
   `Pss`, which counts a page shared by N processes as 1/N in each), for a child holding `--mib` MiB touched, read
   through a kept descriptor as the line does: medians, and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from orca.sample.compute.run import run_section
from orca.sample.compute.run_reading import ProcessCounters, RunReading


def readings(processes: int, reaped: int) -> tuple[RunReading, RunReading]:
    """`make` (pid 100) and `processes - 1` compilers under it; in the later reading the first `reaped` are gone and
    `make`'s children's ticks took them in."""
    before: dict[int, ProcessCounters] = {100: (1, 1, 50, 0, (0, 0))}
    names = {100: "make"}
    for pid in range(101, 100 + processes):
        before[pid] = (10 + pid, 100, 30 + pid % 7, 0, (4096, 0))
        names[pid] = "cc1"
    after = {pid: (start, parent, own + 5, children, io) for pid, (start, parent, own, children, io) in before.items()}
    gone = range(101, 101 + reaped)
    jump = sum(before[pid][2] + 5 for pid in gone)
    start, parent, own, _, _ = after[100]
    after[100] = (start, parent, own, jump, (4096 * reaped, 0))
    for pid in gone:
        del after[pid]
    return (RunReading(0, 100, 100, before, processes, names=names),
            RunReading(10**9, 200, 100, after, len(after), names=names))


def median_us(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        begun = time.perf_counter_ns()
        work()
        times.append(time.perf_counter_ns() - begun)
    return statistics.median(times) / 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=50)
    parser.add_argument("--reaped", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--mib", type=int, default=200)
    options = parser.parse_args()

    steady = readings(options.processes, 0)
    ended = readings(options.processes, options.reaped)
    plain: list[float] = []
    split: list[float] = []
    for _ in range(5):  # interleaved, so the machine's load falls on both alike
        plain.append(median_us(lambda: run_section(*steady, 2), options.repeats // 5))
        split.append(median_us(lambda: run_section(*ended, 2), options.repeats // 5))
    a, b = statistics.median(plain), statistics.median(split)
    print(f"run_section, {options.processes} processes: steady {a:.1f} us, {options.reaped} reaped and split "
          f"{b:.1f} us, ratio {b / a:.2f}")

    holder = subprocess.Popen([sys.executable, "-c", f"x = b'\\1' * ({options.mib} << 20); print(1, flush=True); "
                               "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None
        holder.stdout.readline()
        statm = os.open(f"/proc/{holder.pid}/statm", os.O_RDONLY)
        rollup = os.open(f"/proc/{holder.pid}/smaps_rollup", os.O_RDONLY)
        try:
            cheap: list[float] = []
            dear: list[float] = []
            for _ in range(5):
                cheap.append(median_us(lambda: os.pread(statm, 4096, 0), options.repeats // 5))
                dear.append(median_us(lambda: os.pread(rollup, 4096, 0), options.repeats // 50))
        finally:
            os.close(statm)
            os.close(rollup)
    finally:
        holder.kill()
        holder.wait()
    c, d = statistics.median(cheap), statistics.median(dear)
    print(f"one process of {options.mib} MiB: statm {c:.1f} us, smaps_rollup {d:.1f} us, ratio {d / c:.0f}")


if __name__ == "__main__":
    main()
