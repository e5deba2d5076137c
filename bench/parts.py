"""Whether one large file is worth reading in parts: `orca metrics --json FILE` as it reads (the file cut into a part
per usable core, at most 4, each but the first read by another process), against the same command made to read it
in one process, taking turns, medians of wall-clock and CPU time of every process, at 300,000 and 1,000,000 lines.

    .venv/bin/python -m bench.parts [--lines 300000,1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench.metrics import PYTHON, interleaved, medians, repeated
from bench.runs import write_run
from orca.sample.readback.shell.parts import part_count, usable_cores

# `orca metrics ARGS` with at most one part: the single process's read.
ONE_PROCESS = r"""
import sys
from orca.sample.readback.shell import parts
parts.MAX_PARTS = 1
from orca.sample.readback.shell.cli.metrics import metrics_main
sys.exit(metrics_main(sys.argv[1:]))
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", default="300000,1000000", help="the files' lines, comma-separated (multiples of "
                        "10,000)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print("| figure | in parts | one process | parts / one | load |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        small = write_run(Path(tmp) / "small.jsonl", 10_000)
        for lines in (int(each) for each in args.lines.split(",")):
            path = repeated(small, Path(tmp) / "big.jsonl", lines // 10_000)
            count = part_count(path.stat().st_size, usable_cores())
            load = os.getloadavg()[0]
            runs = interleaved({"parts": [PYTHON, "-m", "orca.sample", "metrics", "--json", str(path)],
                                "one": [PYTHON, "-c", ONE_PROCESS, "--json", str(path)]}, args.repeats)
            wall, cpu = medians(runs, lambda got: got.wall), medians(runs, lambda got: got.cpu)
            span = f"{load:.1f} to {os.getloadavg()[0]:.1f}"
            print(f"| {lines:,} lines ({path.stat().st_size / 2**20:.0f} MiB), wall, {count} parts | "
                  f"{wall['parts']:.2f} s | {wall['one']:.2f} s | {wall['parts'] / wall['one']:.2f} | {span} |",
                  flush=True)
            print(f"| the same, CPU of every process | {cpu['parts']:.2f} s | {cpu['one']:.2f} s | "
                  f"{cpu['parts'] / cpu['one']:.2f} | |", flush=True)
            path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
