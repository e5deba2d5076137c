"""A freeze by signals and its release (docs/control.md, what a run is and how it is killed): every process the
reading stopped is continued, a process the run had stopped itself before the reading stays stopped, whether or not
the freeze settled within its passes."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from orca.control import procs
from orca.control.members import Members
from tests.control.processes import end_sessions, stat_fields

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and stops processes")

# The root (a session and process group of its own) stops a child of its own, says both pids, and sleeps.
RUN = textwrap.dedent("""
    import os, signal, time
    child = os.fork()
    if child == 0:
        time.sleep(300)
        os._exit(0)
    os.kill(child, signal.SIGSTOP)
    print(os.getpid(), child, flush=True)
    time.sleep(300)
""")


def _state(pid: int) -> str:
    return stat_fields(pid)[0]


@pytest.mark.parametrize("passes", [1, procs.FREEZE_PASSES], ids=["unsettled", "settled"])
def test_a_release_continues_what_the_freeze_stopped_and_not_what_the_run_stopped_itself(
    monkeypatch: pytest.MonkeyPatch, passes: int
) -> None:
    """One pass never settles a freeze (the run's group was not stopped before it was read): its release must still
    leave the run's own stopped child stopped."""
    run = subprocess.Popen([sys.executable, "-c", RUN], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert run.stdout is not None
        root, child = (int(word) for word in run.stdout.readline().split())
        deadline = time.monotonic() + 30
        while _state(child) != "T":
            assert time.monotonic() < deadline, "the run never stopped its child"
            time.sleep(0.01)
        monkeypatch.setattr(procs, "FREEZE_PASSES", passes)
        frozen = procs.Frozen()
        frozen.stop(lambda table: Members(frozenset({root, child}) & table.keys(), frozenset({root})))
        assert _state(root) in "TR"  # stopped, or about to take the stop: the run was frozen
        assert frozen.release(signal.SIGCONT) == 2
        assert _state(child) == "T", "what the run had stopped itself was continued"
        assert _state(root) != "T", "what the freeze stopped was left stopped"
    finally:
        end_sessions({run.pid})
        run.wait()
