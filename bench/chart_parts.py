"""Where the CPU of `orca metrics --plot` goes on one run's lines, each part timed alone in this one process: the lines
decoded and checked (the chart's floor decodes them too), then folded batch by batch as `RunFold.add` folds them, with
each section's `add` (the summary's figures), each section's `rows` (the chart's values per point) and the points'
cutting and taking timed apart; then the summary and the series. The collector is off, as `orca metrics` reads.

    .venv/bin/python -m bench.chart_parts [--lines N]      (a `-- COMMAND` run of `bench/chart.py`, 1,000,000 lines)
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.chart import BOTH_LINES, write_command_run
from orca.sample.readback.fleet.usage import UsageSection
from orca.sample.readback.gather.fold import SECTIONS, RunFold
from orca.sample.readback.shell.sources import Tally, decoded, sources


def parts(path: Path) -> tuple[float, dict[str, float]]:
    """The CPU seconds of decoding the lines of `path`, and of each part of their fold, by name."""
    gc.disable()
    [source] = sources(str(path))
    tally = Tally()
    clock = time.process_time
    started = clock()
    batches = list(decoded(source.batches(), tally))
    decoding = clock() - started
    fold = RunFold(drawn=True, sections=(*SECTIONS, UsageSection))  # the sections `orca metrics` folds
    points = fold.points
    assert points is not None
    spent: dict[str, float] = defaultdict(float)
    for lines in batches:
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=BOTH_LINES)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        decoding, spent = parts(write_command_run(Path(tmp) / "run.jsonl", args.lines))
    print(f"| part ({args.lines:,} lines) | CPU seconds |\n|---|---|\n| decoding and checking | {decoding:.3f} |")
    for name, seconds in sorted(spent.items(), key=lambda each: -each[1]):
        print(f"| {name} | {seconds:.3f} |")
    print(f"| the fold, in all | {sum(spent.values()):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
