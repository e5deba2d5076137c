"""A scheduler killed while a reading has a run stopped (docs/behaviour.md §12.4): the next scheduler's first reading
continues what the old one stopped, and leaves stopped what the run had stopped itself.

The old scheduler is a child of the scenario that dies (SIGKILL, by its own hand) at the moment its reading would
continue the run: with the run stopped by signals, or its cgroup frozen (`cgroup.freeze`, where this machine lets a
cgroup v2 directory be made). Each scenario runs in a pid namespace of its own, under an init that reaps and one that
does not (`namespace`)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.control.namespace import needs_pid_namespace, run_in_pid_namespace
from tests.control.test_cgroups import LIVE, MOUNT, live  # noqa: F401 (a fixture)

pytestmark = needs_pid_namespace

INITS = pytest.mark.parametrize("reaps", [True, False], ids=["reaping-init", "non-reaping-init"])

# The root stops a child of its own, then forks a chain (a generation a millisecond, so that every reading finds the
# run changed and freezes it) and sleeps.
RUN = textwrap.dedent("""
    import os, signal, sys, time
    pids = sys.argv[1]
    stopped = os.fork()
    if stopped == 0:
        time.sleep(300)
        os._exit(0)
    os.kill(stopped, signal.SIGSTOP)
    if os.fork() == 0:
        while True:
            time.sleep(0.001)
            if os.fork() != 0:
                os._exit(0)
    with open(pids, "a") as f:
        f.write(f"stopped {stopped}\\nroot {os.getpid()}\\n")
    time.sleep(300)
""")

# argv: the work directory, then `signals` or `cgroup`, then the delegated cgroup directory (or "").
SCENARIO = textwrap.dedent(f"""
    import os, signal, sys, time
    from pathlib import Path
    from orca.control import ControlLimits, cgroups, over_cap, procs, start_run
    from tests.control.inside import forking, report, status
    from tests.control.processes import stat_fields, wait_for_lines

    work, how, directory = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    limits = ControlLimits(memory_mb=4096, cgroup=directory)
    process = start_run([sys.executable, "-c", {RUN!r}, str(work / "run.pids")], [], limits, str(work / "run.log"))
    found = wait_for_lines(work / "run.pids", 2, work / "run.log")
    while stat_fields(found["stopped"])[0] != "T":
        time.sleep(0.01)
    old = os.fork()
    if old == 0:
        def die(*_):
            os.kill(os.getpid(), signal.SIGKILL)
        if how == "cgroup":
            cgroups.thaw = die
        else:
            procs.Frozen.release = die
        # A reading that found the run unchanged over its two passes (a loaded machine may not run the chain between
        # them) freezes nothing: read again until one freezes, and dies.
        for _ in range(50):
            over_cap({{1: process.pid}}, limits)
        os._exit(3)
    facts = {{"old": os.waitstatus_to_exitcode(os.waitpid(old, 0)[1])}}
    facts["forking_after_old"] = forking(timeout=2)
    facts["new"] = over_cap({{1: process.pid}}, limits)
    facts["forking"] = forking()
    facts["stopped"] = stat_fields(found["stopped"])[0]
    ledger = os.path.join(os.environ["ORCA_LOG_STAGE"], ".control-frozen")
    facts["ledger"] = os.listdir(ledger) if os.path.isdir(ledger) else []
    process.kill()
    if directory:
        cgroups.kill(os.path.join(directory, f"run-{{process.pid}}"))
    status(process)
    report(facts)
""")


def _check(facts: dict[str, object]) -> None:
    assert facts["old"] == -9, "the old scheduler was not killed mid-reading"
    assert not facts["forking_after_old"], "the old scheduler's death did not leave the run stopped"
    assert facts["new"] == {}
    assert facts["forking"], "the new scheduler's reading left the run stopped"
    assert facts["stopped"] == "T", "what the run had stopped itself was continued"
    assert facts["ledger"] == []


@INITS
def test_a_run_stopped_by_a_scheduler_killed_mid_reading_is_continued_by_the_next(tmp_path: Path, reaps: bool) -> None:
    _check(run_in_pid_namespace(SCENARIO, str(tmp_path), "signals", "", reaps=reaps))


@pytest.fixture
def delegated(live: Path) -> Iterator[Path]:  # noqa: F811 (the fixture imported above)
    yield live


@pytest.mark.skipif(not LIVE, reason=f"needs root and a cgroup v2 hierarchy to make a cgroup in ({MOUNT})")
@INITS
def test_a_cgroup_frozen_by_a_scheduler_killed_mid_reading_is_thawed_by_the_next(
    delegated: Path, tmp_path: Path, reaps: bool
) -> None:
    _check(run_in_pid_namespace(SCENARIO, str(tmp_path), "cgroup", str(delegated), reaps=reaps))
