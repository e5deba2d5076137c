"""The local executor (`shell/pool.py`) leaves no process behind, whatever its `submit` met."""

from __future__ import annotations

import subprocess
import sys

import pytest

SECOND_FORK_REFUSED = """
import os

from orca.sample.readback.shell.pool import local_executor

fork = os.fork
forked = []


def second_refused():
    if len(forked) == 1:
        raise BlockingIOError(11, "Resource temporarily unavailable")
    pid = fork()
    if pid:
        forked.append(pid)
    return pid


os.fork = second_refused
with local_executor(2) as pool:
    try:
        pool.submit(print, "the work ran")
    except BlockingIOError as error:
        print("refused:", error.strerror)
try:
    os.kill(forked[0], 0)
    print("forked:", forked[0], "left")
except ProcessLookupError:
    print("forked:", forked[0], "ended")
"""


def test_a_process_forked_before_a_later_fork_failed_is_ended_with_the_pool() -> None:
    """A `submit` forks every worker at once; when the second fork fails, the first is already waiting for work that
    no manager thread will send. It is ended when the block ends: the caller goes on, and its exit is not held up
    by multiprocessing waiting for that process."""
    if sys.platform != "linux":
        pytest.skip("forking pool")
    try:
        done = subprocess.run([sys.executable, "-c", SECOND_FORK_REFUSED], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"the process did not exit: it printed {expired.stdout!r}")
    assert done.returncode == 0, done.stderr
    refused, forked = done.stdout.splitlines()
    assert refused == "refused: Resource temporarily unavailable"
    assert forked.startswith("forked: ") and forked.endswith(" ended")
