"""CPU per *cold* line: samplers left running at a real interval, side by side, measured over a real window.

    .venv/bin/python -m bench.cold [--seconds 5] [--window 30] [--repeats 3] [--against DIR]

At the default 5 s interval a line starts with the CPU caches and the interpreter's specialised bytecode gone cold,
so it costs several times the same line in a tight loop (what `bench/run.py`'s CPU per line at `--seconds 0.02`
measures). Here `orca sample` without and with `--pid` (a 21-process tree among about 400 host processes) and the
psutil baseline the same two ways run at once, with the floor sampler (`bench/floor_sampler.py`: the same line with
the least Python) and both writing a constant line (the floor's `--constant`, and `orca sample` with its line
replaced: the wake-up, loop and write alone, with no reading), so they share the machine's noise, started a fraction
of the interval apart, so their lines do not coincide. Each one's CPU over the window (`/proc/<pid>/schedstat`:
everything it ran, the lines and the wake-ups between them) is divided by the lines it wrote in the window; the hour
figure is that × 3600 / `--seconds`. `--against DIR` runs another checkout's sampler too (with this environment's
interpreter and its own `src/` first on the path), for a before/after in one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.population import filler, run_tree

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
ORCA = (PYTHON, "-m", "orca.sample")
BASELINE = (PYTHON, str(HERE / "psutil_sampler.py"))
FLOOR = (PYTHON, str(HERE / "floor_sampler.py"))
# `orca sample` whose every line is the same short text: its loop, wait and file output alone, nothing read.
ORCA_CONSTANT = (
    PYTHON,
    "-c",
    "import sys; from orca.sample.shell import sampler; from orca.sample.shell.cli import sample as cli;"
    "sampler.Sampler.line_bytes = lambda self: b'{\"v\":1}';"
    "cli.process_main(['orca', 'sample', *sys.argv[1:]])",
)


@dataclass(frozen=True)
class Sampler:
    """A sampler to run: its command and, for another checkout, the `src/` put first on the path."""

    command: tuple[str, ...]
    extra: tuple[str, ...] = ()
    src: Path | None = None


def cpu_seconds_of(pid: int) -> float:
    """A process's CPU time so far, in ns precision (`/proc/<pid>/schedstat`: time on a CPU)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def _lines_in(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def cold_lines(samplers: dict[str, Sampler], seconds: float, window: float) -> dict[str, tuple[float, int]]:
    """name -> (CPU seconds over `window`, lines written in it), every sampler running at once at `seconds`, from
    one second after the last one started (past start-up and its first line)."""
    with tempfile.TemporaryDirectory() as tmp:
        outs = {name: Path(tmp) / f"{name}.jsonl" for name in samplers}
        procs: dict[str, subprocess.Popen[bytes]] = {}
        try:
            for name, sampler in samplers.items():
                env = None if sampler.src is None else dict(os.environ, PYTHONPATH=str(sampler.src))
                procs[name] = subprocess.Popen(
                    [*sampler.command, "--out", str(outs[name]), "--seconds", str(seconds), *sampler.extra], env=env
                )
                # Started apart, so their lines do not all come at one moment, each evicting the others' caches.
                time.sleep(seconds / len(samplers))
            time.sleep(1.0)
            before = {name: (cpu_seconds_of(proc.pid), _lines_in(outs[name])) for name, proc in procs.items()}
            time.sleep(window)
            after = {name: (cpu_seconds_of(proc.pid), _lines_in(outs[name])) for name, proc in procs.items()}
        finally:
            for proc in procs.values():
                proc.terminate()
            for proc in procs.values():
                proc.wait()
    return {name: (after[name][0] - before[name][0], after[name][1] - before[name][1]) for name in samplers}


def cold_per_line(samplers: dict[str, Sampler], seconds: float, window: float, repeats: int) -> dict[str, float]:
    """name -> median over `repeats` windows of CPU seconds per line (wake-ups between lines included)."""
    runs = [cold_lines(samplers, seconds, window) for _ in range(repeats)]
    return {name: statistics.median(cpu / max(lines, 1) for cpu, lines in (run[name] for run in runs))
            for name in samplers}


def standard_samplers(root: int, against: Path | None = None) -> dict[str, Sampler]:
    """orca and the psutil baseline, each without and with `--pid root`; the floor sampler, and its constant line
    (the wake-up, loop and write alone); another checkout's orca too if given."""
    pid = ("--pid", str(root))
    samplers = {
        "orca": Sampler(ORCA),
        "orca --pid": Sampler(ORCA, pid),
        "psutil": Sampler(BASELINE),
        "psutil --pid": Sampler(BASELINE, pid),
        "floor": Sampler(FLOOR),
        "constant": Sampler(FLOOR, ("--constant",)),
        "orca constant": Sampler(ORCA_CONSTANT),
    }
    if against is not None:
        samplers["other"] = Sampler(ORCA, (), against / "src")
        samplers["other --pid"] = Sampler(ORCA, pid, against / "src")
    return samplers


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def rows(got: dict[str, float], seconds: float, reached: int) -> list[tuple[str, str, str, str]]:
    """(figure, orca, psutil baseline, orca/baseline) rows of the cold figures."""
    part, base_part = got["orca --pid"] - got["orca"], got["psutil --pid"] - got["psutil"]
    per_hour = 3600 / seconds
    table = [
        (f"cold CPU per line at --seconds {seconds:g}, no --pid", got["orca"], got["psutil"]),
        (f"cold CPU per line at --seconds {seconds:g}, --pid (21-process tree, {reached} processes)",
         got["orca --pid"], got["psutil --pid"]),
        ("  of which the --pid part (the difference)", part, base_part),
    ]
    printed = [(figure, us(o), us(p), f"{o / p:.2f}") for figure, o, p in table]
    hour_o, hour_p = got["orca --pid"] * per_hour, got["psutil --pid"] * per_hour
    printed.append((f"  an hour at --seconds {seconds:g} --pid, from the cold line", f"{hour_o:.3f} s",
                    f"{hour_p:.3f} s", f"{hour_o / hour_p:.2f}"))
    if "floor" in got:
        floor, constant = got["floor"], got["constant"]
        printed += [
            ("  no --pid, against the floor sampler's cold line (orca / floor)", us(got["orca"]), us(floor),
             f"{got['orca'] / floor:.2f}"),
            ("  a constant line, nothing read: orca's loop and output, against the floor's wake-up, loop and write",
             us(got["orca constant"]), us(constant), f"{got['orca constant'] / constant:.2f}"),
        ]
    return printed


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="the samplers' interval")
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured per repeat")
    parser.add_argument("--repeats", type=int, default=3, help="windows; medians are printed")
    parser.add_argument("--against", type=Path, help="another checkout's root, run beside this one")
    args = parser.parse_args(argv)
    against = None if args.against is None else args.against.resolve()
    with run_tree() as root, filler(400) as reached:
        got = cold_per_line(standard_samplers(root, against), args.seconds, args.window, args.repeats)
    print(f"medians of {args.repeats} windows of {args.window:g} s, all samplers running at once\n")
    print("| figure | orca sample | psutil baseline | orca/baseline |")
    print("|---|---|---|---|")
    for figure, orca, baseline, ratio in rows(got, args.seconds, reached):
        print(f"| {figure} | {orca} | {baseline} | {ratio} |")
    if against is not None:
        print(f"\n| {against} | this | other | this/other |")
        print("|---|---|---|---|")
        for label, name in (("no --pid", "orca"), ("--pid", "orca --pid")):
            this, other = got[name], got[f"other{name.removeprefix('orca')}"]
            print(f"| cold CPU per line, {label} | {us(this)} | {us(other)} | {this / other:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
