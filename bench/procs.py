"""What the run's processes cost a line: `orca sample --pid` over a 400-process tree (its `run` with `cpu`, `io`
and `top`) beside the psutil baseline reading the same per-process figures.

    .venv/bin/python -m bench.procs [--children 400] [--seconds 5] [--window 30] [--repeats 3] [--against DIR]

The baseline is `bench/psutil_sampler.py --per-process`: each of the run's processes' `cpu_times()`,
`memory_info()` and `io_counters()`, and the run's CPU, I/O and top processes made from their differences, beside
the host's figures; and without `--per-process` (the run's resident memory alone), as before the run had a `top`.
Both ways are measured cold (`bench/cold.py`: all at once at `--seconds`, each one's CPU over the window divided by
its lines) and hot (`bench/run.py`'s CPU per line at `--seconds 0.02`, medians of interleaved runs). `--against DIR`
runs another checkout's `orca sample --pid` too. Then each one's peak resident memory (`ru_maxrss`) writing 20 lines
at `--seconds 0.05`, with `--pid` and, for orca, without.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

from bench.cold import BASELINE, ORCA, Sampler, cold_per_line, us
from bench.population import host_process_count, run_tree
from bench.run import cpu_per_line, interleaved


def samplers(root: int, against: Path | None) -> dict[str, Sampler]:
    pid = ("--pid", str(root))
    chosen = {
        "orca --pid": Sampler(ORCA, pid),
        "psutil --pid --per-process": Sampler(BASELINE, (*pid, "--per-process")),
        "psutil --pid": Sampler(BASELINE, pid),
    }
    if against is not None:
        chosen["other --pid"] = Sampler(ORCA, pid, against / "src")
    return chosen


def hot(chosen: dict[str, Sampler], repeats: int, lines: int) -> dict[str, float]:
    """name -> median CPU seconds per line at --seconds 0.02."""

    def measure(sampler: Sampler) -> float:
        env = None if sampler.src is None else dict(os.environ, PYTHONPATH=str(sampler.src))
        return cpu_per_line(sampler.command, lines, sampler.extra, env)

    return interleaved(repeats, {name: partial(measure, sampler) for name, sampler in chosen.items()})


def peak_mib(sampler: Sampler) -> float:
    """The sampler's peak resident memory, in MiB, writing 20 lines to a file at --seconds 0.05."""
    env = None if sampler.src is None else dict(os.environ, PYTHONPATH=str(sampler.src))
    with tempfile.TemporaryDirectory() as tmp:
        process = subprocess.Popen([*sampler.command, "--out", str(Path(tmp) / "lines.jsonl"), "--count", "20",
                                    "--seconds", "0.05", *sampler.extra], env=env)
        _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_maxrss / 1024


def peaks(chosen: dict[str, Sampler], repeats: int) -> dict[str, float]:
    """name -> median peak resident memory in MiB: each of `chosen`, and orca's (and the other's) plain line."""
    every = dict(chosen)
    every["orca, no --pid"] = Sampler(ORCA)
    if "other --pid" in chosen:
        every["other, no --pid"] = Sampler(ORCA, (), chosen["other --pid"].src)
    return interleaved(repeats, {name: partial(peak_mib, sampler) for name, sampler in every.items()})


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--children", type=int, default=400, help="the run's tree: a shell and this many sleeps")
    parser.add_argument("--seconds", type=float, default=5.0, help="the cold samplers' interval")
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured per cold repeat")
    parser.add_argument("--repeats", type=int, default=3, help="cold windows and hot runs; medians are printed")
    parser.add_argument("--lines", type=int, default=100, help="lines per hot measurement")
    parser.add_argument("--against", type=Path, help="another checkout's root, run beside this one")
    args = parser.parse_args(argv)
    against = None if args.against is None else args.against.resolve()
    with run_tree(args.children) as root:
        chosen = samplers(root, against)
        processes = host_process_count()
        cold = cold_per_line(chosen, args.seconds, args.window, args.repeats)
        warm = hot(chosen, args.repeats, args.lines)
        memory = peaks(chosen, args.repeats)
    load = os.getloadavg()
    print(f"a tree of {args.children + 1} processes, {processes} on the host; load {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}; medians of {args.repeats}\n")
    print(f"| CPU per line, --pid | cold, at --seconds {args.seconds:g} | hot, at --seconds 0.02 |")
    print("|---|---|---|")
    for name in chosen:
        print(f"| {name} | {us(cold[name])} | {us(warm[name])} |")
    print("\n| ratio | cold | hot | budget |")
    print("|---|---|---|---|")
    rows = [("orca / psutil reading cpu_times, memory_info, io_counters", "psutil --pid --per-process", "<= 0.3"),
            ("orca / psutil reading memory_info only", "psutil --pid", "")]
    if against is not None:
        rows.append(("this checkout / the other", "other --pid", ""))
    for label, name, budget in rows:
        print(f"| {label} | {cold['orca --pid'] / cold[name]:.2f} | {warm['orca --pid'] / warm[name]:.2f} | {budget} |")
    print("\n| peak resident memory, 20 lines at --seconds 0.05 | MiB |")
    print("|---|---|")
    for name, mib in memory.items():
        print(f"| {name} | {mib:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
