"""Where the CPU of `orca metrics --plot` goes on one run's lines, each part timed in this one process as `orca metrics`
reads: each batch decoded and checked (the chart's floor decodes them too), then folded at once, as `RunFold.add` folds
it, with each section's `add` (the summary's figures), each section's `rows` (the chart's values per point) and the
points' cutting and taking timed apart; then the summary and the series. The collector is off, as `orca metrics` reads.

With `--only decode|summary|drawn`, nothing timed: the lines decoded, and folded as a run's summary or as a drawn run
(`RunFold.add`, with the usage unless `--no-usage`), for counting instructions, which the machine's load does not move
(`valgrind --tool=cachegrind --cache-sim=no`: each mode's count less the decoding's is its fold's). `--points` draws
the run from at most twice that many points: at 100,000 lines, 50 cuts a point as 1,000,000 lines are cut.

With `--halves`, what reading in two processes costs: the file cut in two as `orca metrics` cuts it, each half read
(decoded and folded, as a part is) alone here, then the second by a forked worker while this process waits, then both
at once (the first here, the second by the worker, as `orca metrics` reads them), taking turns; each half's CPU is
measured inside the process that reads it.

    .venv/bin/python -m bench.chart_parts [--lines N] [--halves] [--repeats N]
    valgrind --tool=cachegrind --cache-sim=no .venv/bin/python -m bench.chart_parts --lines 100000 --points 50 \
        --only drawn [--no-usage]
    (a `-- COMMAND` run of `bench/chart.py`, 1,000,000 lines)
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.chart import BOTH_LINES, write_command_run
from orca.sample.line_format import Sample
from orca.sample.readback.fleet.usage import UsageSection
from orca.sample.readback.gather.fold import SECTIONS, RunFold
from orca.sample.readback.gather.points import MAX_POINTS
from orca.sample.readback.runs import Runs
from orca.sample.readback.shell.parts import DRAWING_HEAD_START_BYTES
from orca.sample.readback.shell.pool import local_executor
from orca.sample.readback.shell.sources import Tally, decoded, descriptor_batches, part_starts, sources

DRAWN = 6
"""As `orca metrics --plot` draws."""


def parts(path: Path) -> tuple[float, dict[str, float]]:
    """The CPU seconds of decoding the lines of `path`, and of each part of their fold, by name."""
    gc.disable()
    [source] = sources(str(path))
    clock = time.process_time
    fold = RunFold(drawn=True, sections=(*SECTIONS, UsageSection))  # the sections `orca metrics` folds
    points = fold.points
    assert points is not None
    spent: dict[str, float] = defaultdict(float)
    batches: Iterator[list[Sample]] = decoded(source.batches(), Tally())
    decoding = 0.0
    while True:
        # Each batch folded as soon as it is decoded, as `orca metrics` reads: its records are still in the cache.
        started = clock()
        lines = next(batches, None)
        decoding += clock() - started
        if lines is None:
            break
        started = clock()
        fold.times.add(lines)
        spent["times.add"] += clock() - started
        for section in fold.sections:
            started = clock()
            section.add(lines)
            spent[f"{section.key}.add"] += clock() - started
        started = clock()
        times = [line.t for line in lines]
        bounds = points.cut(times)
        spent["points.cut"] += clock() - started
        rows: list[tuple[bool, list[Any]]] = []
        for section in fold.sections:
            started = clock()
            rows.append((section.keyed, section.rows(lines, bounds)))
            spent[f"{section.key}.rows"] += clock() - started
        started = clock()
        points.take(times, bounds, [row for keyed, row in rows if not keyed],
                    [list(column) for keyed, row in rows if keyed for column in zip(*row, strict=True)])
        spent["points.take"] += clock() - started
    started = clock()
    fold.summary(source.name)
    fold.series(source.name)
    spent["summary and series"] += clock() - started
    return decoding, spent


def only(path: Path, mode: str, usage: bool, points: int) -> None:
    """The lines of `path` decoded, and with `mode` "summary" or "drawn" folded as `orca metrics` folds one run."""
    gc.disable()
    [source] = sources(str(path))
    fold = RunFold(drawn=mode == "drawn", max_points=points, sections=(*SECTIONS, UsageSection) if usage else SECTIONS)
    for lines in decoded(source.batches(), Tally()):
        if mode != "decode":
            fold.add(lines)
    fold.summary(source.name)
    fold.series(source.name)


def read_half(descriptor: int, start: int, end: int | None) -> float:
    """The CPU seconds this process takes to read the part of the open file from `start` to `end` as a part is read
    (decoded, cut into runs and folded, the first `DRAWN` runs for the chart)."""
    gc.disable()
    started = time.process_time()
    runs = Runs(DRAWN, from_start=start == 0, sections=(*SECTIONS, UsageSection))
    for lines in decoded(descriptor_batches(descriptor, start, end), Tally()):
        runs.add(lines)
    for run in runs.close():
        run.fold.summary("")
        run.fold.series("")
    return time.process_time() - started


def halves(path: Path, repeats: int) -> dict[str, list[float]]:
    """The CPU seconds of each half of `path`, read alone here, the second by a forked worker, and both at once."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(descriptor).st_size
        _, middle = part_starts(lambda offset, length: os.pread(descriptor, length, offset), size, 2,
                                shorter_first=DRAWING_HEAD_START_BYTES)
        got: dict[str, list[float]] = defaultdict(list)
        for _ in range(repeats):
            got["first half, alone here"].append(read_half(descriptor, 0, middle))
            got["second half, alone here"].append(read_half(descriptor, middle, None))
            with local_executor(1) as executor:
                got["second half, alone in a forked worker"].append(
                    executor.submit(read_half, descriptor, middle, None).result())
            with local_executor(1) as executor:
                second = executor.submit(read_half, descriptor, middle, None)
                got["first half here, at once with the second"].append(read_half(descriptor, 0, middle))
                got["second half in the worker, at once with the first"].append(second.result())
        return got
    finally:
        os.close(descriptor)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=BOTH_LINES)
    parser.add_argument("--halves", action="store_true", help="what reading in two processes costs")
    parser.add_argument("--repeats", type=int, default=3, help="with --halves, how many turns")
    parser.add_argument("--only", choices=("decode", "summary", "drawn"), help="nothing timed: for cachegrind")
    parser.add_argument("--no-usage", action="store_true", help="with --only, the fold without the run's usage")
    parser.add_argument("--points", type=int, default=MAX_POINTS, help="with --only, the drawn run's MAX_POINTS")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_command_run(Path(tmp) / "run.jsonl", args.lines)
        if args.only is not None:
            only(path, args.only, not args.no_usage, args.points)
            return 0
        load = os.getloadavg()[0]
        if args.halves:
            got = halves(path, args.repeats)
            print(f"| half ({args.lines:,} lines; load {load:.1f} to {os.getloadavg()[0]:.1f}) | CPU seconds, "
                  f"median of {args.repeats} | each |\n|---|---|---|")
            for name, each in got.items():
                print(f"| {name} | {statistics.median(each):.2f} | {', '.join(f'{one:.2f}' for one in each)} |")
            return 0
        decoding, spent = parts(path)
    print(f"| part ({args.lines:,} lines; load {load:.1f} to {os.getloadavg()[0]:.1f}) | CPU seconds |\n|---|---|\n"
          f"| decoding and checking | {decoding:.3f} |")
    for name, seconds in sorted(spent.items(), key=lambda each: -each[1]):
        print(f"| {name} | {seconds:.3f} |")
    print(f"| the fold, in all | {sum(spent.values()):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
