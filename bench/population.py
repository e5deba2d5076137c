"""Processes for the benchmarks: a run's tree, idle filler processes to give the host N processes in all, and a
Python process whose peak memory is its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

# Tree members run with this argv[0] (bash's `exec -a`), so `--match` finds them and nothing else.
WORKER_ARGV0 = "orca-bench-worker"


def python_with_its_own_peak(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -c code args...`, its output captured as text, in a process whose peak memory is its own: started by a
    shell that forks it. Linux keeps a process's peak across `exec`, so a child started from the benchmark directly
    (or the shell's own figure) would count the benchmark's memory; `code` reads its peak itself
    (`resource.getrusage`) and prints it."""
    return subprocess.run(
        ["/bin/sh", "-c", '"$@"; exit $?', "sh", sys.executable, "-c", code, *args],
        check=True,
        capture_output=True,
        text=True,
    )


def host_process_count() -> int:
    return sum(1 for name in os.listdir("/proc") if name.isdigit())


@contextmanager
def run_tree(children: int = 20) -> Iterator[int]:
    """A shell whose `children` background sleeps are the run's tree; yields the shell's pid."""
    script = " ".join(f"(exec -a {WORKER_ARGV0} sleep 3600) &" for _ in range(children)) + " wait"
    root = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while len(_children_of(root.pid)) < children and time.monotonic() < deadline:
            time.sleep(0.02)
        yield root.pid
    finally:
        os.killpg(root.pid, signal.SIGKILL)
        root.wait()


def _children_of(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


@contextmanager
def filler(total: int) -> Iterator[int]:
    """Idle `sleep` processes until the host has about `total` processes; yields the count reached."""
    needed = max(0, total - host_process_count())
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(needed):
            procs.append(subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL))
        yield host_process_count()
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()
