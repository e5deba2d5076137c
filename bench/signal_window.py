"""The window at start in which a signal still kills the sampler: from the moment its process is started to the moment
it holds or catches SIGTERM (docs/behaviour.md §2.4).

    .venv/bin/python -m bench.signal_window [--runs 40] [--against DIR]

Each run starts the sampler and reads `/proc/<pid>/status` in a tight loop until SIGTERM's bit is in `SigBlk` (held)
or `SigCgt` (caught); the time from just before the start to that read is the window (a read takes some tens of µs,
its resolution). Then SIGTERM ends the run. Measured for `python -m orca.sample`, the `orca` console script and
each with `-- COMMAND`, beside the baseline: the whole of `python -c pass` and `python -I -c pass`, an interpreter
that starts and exits doing nothing (-I: without the site-packages' `.pth` files and the environment). The project's
code starts with the first statement of `orca.sample`, so the window is the interpreter's own start-up (the site's
`.pth` files included) and the first steps of importing `orca.sample`. `--against DIR` measures another checkout's
sampler too (this interpreter, its `src/` first on the path), for a before/after in one run.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable
ORCA = str(Path(PYTHON).with_name("orca"))
TERM_BIT = 1 << (signal.SIGTERM - 1)
BOUND_SECONDS = 10
"""A run whose window has not closed by then is given up (counted, not measured)."""


def _taken(pid: int) -> bool | None:
    """Whether SIGTERM is held or caught; None once the process is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    masks = {line.split(":")[0]: int(line.split()[1], 16) for line in status.splitlines()
             if line.startswith(("SigBlk:", "SigCgt:"))}
    return bool((masks.get("SigBlk", 0) | masks.get("SigCgt", 0)) & TERM_BIT)


def window(argv: list[str], env: dict[str, str]) -> float | None:
    """Seconds from the start to SIGTERM held or caught; None when it never was."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                               start_new_session=True)
    try:
        while time.perf_counter() - started < BOUND_SECONDS:
            taken = _taken(process.pid)
            if taken:
                return time.perf_counter() - started
            if taken is None or process.poll() is not None:
                return None
        return None
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=BOUND_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def whole(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True)
    return time.perf_counter() - started


def _env(src: Path | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "ORCA_SAMPLE_SECONDS"}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--against", type=Path, help="another checkout, measured too")
    options = parser.parse_args(argv)
    out = ["--out", os.devnull, "--seconds", "5"]
    command = ["--", "sleep", "30"]
    cases: list[tuple[str, list[str], dict[str, str], bool]] = [
        ("python -c pass (whole run)", [PYTHON, "-c", "pass"], _env(None), False),
        ("python -I -c pass (whole run)", [PYTHON, "-I", "-c", "pass"], _env(None), False),
    ]
    checkouts: list[tuple[str, Path | None]] = [("", None)]
    if options.against is not None:
        checkouts.append((f" [{options.against}]", (options.against / "src").resolve()))
    for label, src in checkouts:
        cases.append((f"python -m orca.sample{label}", [PYTHON, "-m", "orca.sample", *out], _env(src), True))
        cases.append((f"python -m orca.sample -- COMMAND{label}", [PYTHON, "-m", "orca.sample", *out, *command],
                      _env(src), True))
        if os.access(ORCA, os.X_OK):
            cases.append((f"orca sample -- COMMAND{label}", [ORCA, "sample", *out, *command], _env(src), True))
    results: dict[str, list[float]] = {name: [] for name, *_ in cases}
    missed = dict.fromkeys(results, 0)
    for _ in range(options.runs):  # interleaved, so that the machine's noise falls on every case alike
        for name, case_argv, env, is_window in cases:
            seconds = window(case_argv, env) if is_window else whole(case_argv, env)
            if seconds is None:
                missed[name] += 1
            else:
                results[name].append(seconds)
    baseline = statistics.median(results[cases[0][0]])
    print(f"{'':44} {'median ms':>9} {'p90 ms':>8} {'vs python -c pass':>18}  runs")
    for name, values in results.items():
        if not values:
            print(f"{name:44} {'-':>9} {'-':>8} {'-':>18}  0 ({missed[name]} never taken)")
            continue
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) >= 2 else values[0]
        median = statistics.median(values)
        note = f" ({missed[name]} never taken)" if missed[name] else ""
        print(f"{name:44} {median * 1e3:9.1f} {p90 * 1e3:8.1f} {median / baseline:17.2f}x  {len(values)}{note}")


if __name__ == "__main__":
    main()
