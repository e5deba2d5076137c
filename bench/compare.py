"""This checkout's sampler against another checkout's (an earlier commit, say), interleaved in one run.

    .venv/bin/python -m bench.compare --against DIR [--repeats N] [--lines N]

`DIR` is the root of another checkout of this repository (e.g. `git worktree add /tmp/before HEAD~5`). Both run
with this virtual environment's interpreter and packages, each with its own `src/` first on the path, so the
figures differ only by the code. Printed: CPU per line (the `self_cpu` difference between the first and the last
line at `--seconds 0.02`) without and with `--pid`, exec to first line on standard output, and peak resident
memory writing to a file; medians of interleaved runs, and this checkout's figure over the other's.
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import orjson

from bench.population import run_tree
from bench.run import interleaved

HERE = Path(__file__).resolve().parent.parent


def _command(checkout: Path) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ, PYTHONPATH=str(checkout / "src"))
    return [sys.executable, "-m", "orca.sample"], env


def cpu_per_line(checkout: Path, lines: int, extra: Sequence[str] = ()) -> float:
    command, env = _command(checkout)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lines.jsonl"
        subprocess.run([*command, "--out", str(out), "--seconds", "0.02", "--count", str(lines + 1), *extra],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        got = [orjson.loads(raw) for raw in out.read_bytes().splitlines() if raw.strip()]
    return (float(got[-1]["self_cpu"]) - float(got[0]["self_cpu"])) / (len(got) - 1)


def first_line(checkout: Path) -> float:
    command, env = _command(checkout)
    started = time.perf_counter()
    proc = subprocess.Popen([*command, "--out", "-", "--count", "1"], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    proc.stdout.readline()
    elapsed = time.perf_counter() - started
    proc.wait()
    return elapsed


def peak_rss(checkout: Path) -> float:
    command, env = _command(checkout)
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([*command, "--out", str(Path(tmp) / "l.jsonl"), "--count", "20", "--seconds", "0.05"],
                                env=env)
        _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", required=True, type=Path, help="the root of the other checkout")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--lines", type=int, default=200)
    args = parser.parse_args(argv)
    checkouts = {"this": HERE, "other": args.against.resolve()}
    for checkout in checkouts.values():
        compileall.compile_dir(str(checkout / "src"), quiet=1)

    def side_by_side(label: str, unit: Callable[[float], str], run: Callable[[Path], float], repeats: int) -> None:
        got = interleaved(repeats, {name: partial(run, c) for name, c in checkouts.items()})
        print(f"| {label} | {unit(got['this'])} | {unit(got['other'])} | {got['this'] / got['other']:.2f} |",
              flush=True)

    def us(s: float) -> str:
        return f"{s * 1e6:,.0f} µs"

    print(f"this: {checkouts['this']}  other: {checkouts['other']}  medians of {args.repeats} interleaved runs\n")
    print("| figure | this | other | this/other |")
    print("|---|---|---|---|")
    side_by_side("CPU per line, no --pid", us, lambda c: cpu_per_line(c, args.lines), args.repeats)
    with run_tree() as root:
        side_by_side("CPU per line, --pid (21-process tree)", us,
                     lambda c: cpu_per_line(c, args.lines, ["--pid", str(root)]), args.repeats)
    side_by_side("exec to first line on stdout", lambda s: f"{s:.3f} s", first_line, max(args.repeats, 5))
    side_by_side("peak resident memory, --out FILE", lambda m: f"{m:.1f} MiB", peak_rss, 3)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
