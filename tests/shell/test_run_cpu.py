"""The run's CPU in the line (docs/behaviour.md §3.12) against psutil's `cpu_times` of the same tree over the same
window, on real spinning trees, with either reader.

psutil's figure is taken just before and just after each of the sampler's readings (their mean stands for the
moment of the reading): the time of the tree's processes present then, each one's own and its waited-for
children's (`user + system + children_user + children_system`). Between two such figures a child that was reaped
moved its whole time into its parent's children's times, so their difference is what the tree used, which is what
the line must show, as a percent of all cores' time.

What the comparison can promise: both read the kernel's counters in clock ticks (10 ms), so each line may differ by
a few ticks of each process (2 points of both cores over a window); and the reading happened somewhere between
psutil's before and after, so the tree's CPU in that bracket (wide on a loaded machine, where the reading itself
waits for a core) is added to the bound, half of it at each end of the line's window.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from orca.sample.shell.sampler import Sampler

psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.requires_proc

WINDOW = 1.5
"""Seconds between two lines: a tick (10 ms) of each process's counters is well under a point of both cores."""
LINES = 4
SPIN = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end:\n    pass\n"
# A parent that spins a little itself and keeps one or two children spinning, each for 0.4 to 0.9 s, waiting for
# each as it ends: children come and go within a line and across lines.
PARENT = f"""
import subprocess, sys, time
spin = {SPIN!r}
end = time.monotonic() + float(sys.argv[1])
n = 0
while time.monotonic() < end:
    n += 1
    children = [subprocess.Popen([sys.executable, '-c', spin, str(0.4 + (n * 0.13) % 0.5)])
                for _ in range(1 + n % 2)]
    t = time.monotonic() + 0.05
    while time.monotonic() < t:
        pass
    for child in children:
        child.wait()
"""


# A process whose main thread sleeps while another thread spins: its main thread's own time does not move.
THREADED = f"""
import sys, threading, time
threading.Thread(target=exec, args=({SPIN!r}, {{'sys': sys}}), daemon=True).start()
time.sleep(float(sys.argv[1]))
"""


def tree_seconds(root: int) -> float:
    """psutil's CPU seconds of `root`'s tree: each present process's own and its waited-for children's."""
    top = psutil.Process(root)
    total = 0.0
    # Descendants first, the root last: a child reaped meanwhile is then in the root's children's times.
    for process in [*top.children(recursive=True), top]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


@contextmanager
def started(code: str, seconds: float) -> Iterator[int]:
    process = subprocess.Popen([sys.executable, "-c", code, str(seconds)])
    try:
        time.sleep(0.3)  # past the interpreter's start
        yield process.pid
    finally:
        process.kill()
        process.wait()


TICKS_POINTS = 2.0
"""The clock ticks' share of the bound, in points of all cores (see the module's docstring)."""


@dataclass(frozen=True)
class Compared:
    """One line's `run.cpu` and `run.procs` beside psutil's figure for the same window, and the bound on their
    difference that the measurement can promise."""

    cpu: float
    expected: float
    bound: float
    procs: int


def lines_beside_psutil(root: int, reader: str) -> list[Compared]:
    cores = psutil.cpu_count()

    def bracket(read: Callable[[], object]) -> tuple[float, float, float, object]:
        """psutil's CPU seconds and the time at the middle of `read`, the CPU the tree used while it ran, and what
        it returned."""
        before = tree_seconds(root), time.monotonic()
        got = read()
        after = tree_seconds(root), time.monotonic()
        return (before[0] + after[0]) / 2, (before[1] + after[1]) / 2, after[0] - before[0], got

    with Sampler(root, "", [], reader=reader) as sampler:
        last_cpu, last_time, last_spread, _ = bracket(lambda: None)
        found = []
        for _ in range(LINES):
            time.sleep(WINDOW)
            cpu, now, spread, line = bracket(sampler.line)
            share = 100 / ((now - last_time) * cores)
            figures = json.loads(cast(bytes, line))["run"]
            bound = TICKS_POINTS + share * (last_spread + spread) / 2
            found.append(Compared(figures["cpu"], share * (cpu - last_cpu), bound, figures["procs"]))
            last_cpu, last_time, last_spread = cpu, now, spread
    return found


@pytest.mark.parametrize("reader", ["proc", "psutil"])
@pytest.mark.parametrize(
    ("code", "most"), [(SPIN, 1), (PARENT, 3), (THREADED, 1)], ids=["one-process", "children-come-and-go", "threads"]
)
def test_the_runs_cpu_is_psutils(reader: str, code: str, most: int) -> None:
    """One spinning process; a parent whose children come and go; a process whose other thread spins."""
    with started(code, 30) as root:
        found = lines_beside_psutil(root, reader)
    for line in found:
        assert abs(line.cpu - line.expected) <= line.bound, found
        assert 1 <= line.procs <= most
    # It did spin, whatever share of the cores a loaded machine gave it: over the lines, psutil saw the tree use
    # more than twice one line's ticks' bound, so that the comparisons tell spinning from idle. Summed, not the
    # busiest line's: a machine loaded many times over its cores gives each line a few points only.
    assert sum(line.expected for line in found) > 2 * TICKS_POINTS, found


def test_the_first_line_covers_the_time_from_the_baseline() -> None:
    """The baseline reads the run's processes too: a process that spun long before the sampler started shows in the
    first line only what it used since (not its whole life, not nothing)."""
    with started(SPIN, 30) as root:
        time.sleep(1.0)
        cores = psutil.cpu_count()
        before = tree_seconds(root), time.monotonic()
        with Sampler(root, "", []) as sampler:
            time.sleep(WINDOW)
            line = json.loads(sampler.line())
        after = tree_seconds(root), time.monotonic()
    ceiling = 100 * (after[0] - before[0]) / ((after[1] - before[1]) * cores)
    assert 0 < line["run"]["cpu"] <= ceiling + 2.0, (line["run"], ceiling)


MIDDLE = f"""
import pathlib, signal, subprocess, sys, time
spinner = subprocess.Popen([sys.executable, '-c', {SPIN!r}, '30'])
pathlib.Path(sys.argv[1]).write_text(str(spinner.pid))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
time.sleep(30)
"""
# The root waits for a middle process that started a spinner and then exits without waiting for it: the spinner
# is orphaned (given to init), out of the root's tree, still running.
ORPHANING = f"""
import subprocess, sys, time
subprocess.Popen([sys.executable, '-c', {MIDDLE!r}, sys.argv[2]]).wait()
time.sleep(30)
"""


def test_a_process_that_leaves_the_run_alive_counts_up_to_the_line_that_finds_it_gone(tmp_path: Path) -> None:
    pid_file = tmp_path / "spinner"
    root = subprocess.Popen([sys.executable, "-c", ORPHANING, "30", str(pid_file)])
    try:
        while not pid_file.exists() or not pid_file.read_text():
            time.sleep(0.05)
        spinner = psutil.Process(int(pid_file.read_text()))
        middle = psutil.Process(root.pid).children()[0]
        cores = psutil.cpu_count()
        with Sampler(root.pid, "", []) as sampler:
            time.sleep(WINDOW)
            before = spinner.cpu_times(), time.monotonic()
            assert json.loads(sampler.line())["run"]["procs"] == 3
            time.sleep(WINDOW)
            middle.terminate()
            middle.wait(10)
            after = spinner.cpu_times(), time.monotonic()
            orphaned = json.loads(sampler.line())["run"]
            time.sleep(WINDOW)
            later = json.loads(sampler.line())["run"]
        spinner.kill()
    finally:
        root.kill()
        root.wait()
    used = (after[0].user + after[0].system) - (before[0].user + before[0].system)
    expected = 100 * used / ((after[1] - before[1]) * cores)
    assert orphaned["procs"] == 1
    assert abs(orphaned["cpu"] - expected) <= 5.0, (orphaned, expected)  # its time up to now, the middle's too
    assert later["cpu"] < 2.0, later  # then no more


def test_no_run_no_section() -> None:
    with Sampler(0, "", []) as sampler:
        assert "run" not in json.loads(sampler.line())


def test_a_match_only_run() -> None:
    """`--match` alone: the spinning process whose argv[0] is the name, its CPU as psutil sees it."""
    name = f"orca-test-run-{os.getpid()}"
    spinner = subprocess.Popen([name, "-c", SPIN, "30"], executable=sys.executable)
    try:
        time.sleep(0.3)
        cores = psutil.cpu_count()
        first = tree_seconds(spinner.pid), time.monotonic()
        with Sampler(0, name, []) as sampler:
            made = tree_seconds(spinner.pid), time.monotonic()
            start = (first[0] + made[0]) / 2, (first[1] + made[1]) / 2
            time.sleep(WINDOW)
            before = tree_seconds(spinner.pid), time.monotonic()
            run = json.loads(sampler.line())["run"]
            after = tree_seconds(spinner.pid), time.monotonic()
    finally:
        spinner.kill()
        spinner.wait()
    expected = 100 * ((before[0] + after[0]) / 2 - start[0]) / (((before[1] + after[1]) / 2 - start[1]) * cores)
    assert run["procs"] == 1
    assert abs(run["cpu"] - expected) <= 2.0, (run, expected)
