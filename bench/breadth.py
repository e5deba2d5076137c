"""What touching many small functions costs a line that runs cold, against the same arithmetic written inline.

    .venv/bin/python -m bench.breadth [--functions 50] [--sleep 1] [--rounds 20]

A sampler's line comes after seconds asleep, when the CPU caches no longer hold the interpreter's code objects,
functions, records and module dictionaries; each one a line touches is fetched again. So a line made of many small
functions, each in its own module and making its own frozen record (as a pipeline of parsers, diffs and an encoder
is), costs more cold than the work it does would suggest. Here `--functions` generated modules, each with one
function making one frozen slotted dataclass, are called in turn ("spread"), the same with a frozen msgspec Struct
for the record ("spread, Structs": built in C, where a dataclass runs its generated `__init__`), against one loop
doing the same arithmetic ("inline"); each is timed (thread CPU time) after `--sleep` seconds asleep ("cold") and
right after ("back to back"), taking turns. Printed: medians, in microseconds.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MODULE = """
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Record{n}:
    a: int
    b: int


def step(x: int, y: int) -> Record{n} | None:
    if x > 1_000_000_000:
        return None
    return Record{n}(x * 3 + y, x)
"""
STRUCT_MODULE = MODULE.replace("from dataclasses import dataclass\n", "import msgspec\n").replace(
    "@dataclass(frozen=True, slots=True)\nclass Record{n}:", "class Record{n}(msgspec.Struct, frozen=True, gc=False):"
)


def spread_line(steps: list[Callable[[int, int], object]]) -> Callable[[], int]:
    def line() -> int:
        total = 0
        for step in steps:
            record = step(total & 1023, 5)
            total += record.a  # type: ignore[attr-defined]
        return total

    return line


def inline_line(count: int) -> Callable[[], int]:
    def line() -> int:
        total = 0
        for _ in range(count):
            total += (total & 1023) * 3 + 5
        return total

    return line


def timed(line: Callable[[], int]) -> int:
    started = time.thread_time_ns()
    line()
    return time.thread_time_ns() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--functions", type=int, default=50)
    parser.add_argument("--sleep", type=float, default=1.0, help="seconds asleep before each cold call")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.functions):
            (Path(tmp) / f"breadth_step_{n}.py").write_text(MODULE.format(n=n))
            (Path(tmp) / f"breadth_struct_{n}.py").write_text(STRUCT_MODULE.format(n=n))
        sys.path.insert(0, tmp)
        try:
            steps = [importlib.import_module(f"breadth_step_{n}").step for n in range(args.functions)]
            structs = [importlib.import_module(f"breadth_struct_{n}").step for n in range(args.functions)]
        finally:
            sys.path.remove(tmp)
    lines = {
        "spread": spread_line(steps),
        "spread, Structs": spread_line(structs),
        "inline": inline_line(args.functions),
    }
    assert lines["spread"]() == lines["inline"](), "the two lines must do the same arithmetic"
    cold: dict[str, list[int]] = {name: [] for name in lines}
    warm: dict[str, list[int]] = {name: [] for name in lines}
    for _ in range(args.rounds):
        for name, line in lines.items():
            time.sleep(args.sleep)
            cold[name].append(timed(line))
            warm[name].append(timed(line))
    print(f"{args.functions} functions, {args.rounds} rounds, {args.sleep:g} s asleep before each cold call; "
          "medians\n")
    print("| line | cold | back to back |")
    print("|---|---|---|")
    for name in lines:
        print(f"| {name} | {statistics.median(cold[name]) / 1000:,.1f} µs | "
              f"{statistics.median(warm[name]) / 1000:,.1f} µs |")
    for name in ("spread", "spread, Structs"):
        extra = (statistics.median(cold[name]) - statistics.median(cold["inline"])) / args.functions / 1000
        print(f"\ncold, per function and record ({name}): {extra:,.2f} µs more than inline")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
