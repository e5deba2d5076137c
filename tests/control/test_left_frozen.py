"""A scheduler killed while a reading has a run stopped (docs/behaviour.md §12.4): the next scheduler's first reading
continues what the old one stopped, and leaves stopped what the run had stopped itself.

The old scheduler is a child of the scenario that dies (SIGKILL, by its own hand) at the moment its reading would
continue the run: with the run stopped by signals, or its cgroup frozen (`cgroup.freeze`, where this machine lets a
cgroup v2 directory be made). Each scenario runs in a pid namespace of its own, under an init that reaps and one that
does not (`namespace`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orca.control import ledger, procs
from tests.control.namespace import needs_pid_namespace, run_in_pid_namespace
from tests.control.test_cgroups import LIVE, MOUNT, live  # noqa: F401 (a fixture)

pytestmark = needs_pid_namespace

INITS = pytest.mark.parametrize("reaps", [True, False], ids=["reaping-init", "non-reaping-init"])

# The root stops a child of its own, then forks a chain (a generation a millisecond: its forks tell whether the run runs
# or was left stopped) and sleeps.
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
    from orca.control import ControlLimits, cap, cgroups, over_cap, procs, start_run
    from tests.control.inside import forking, report, status, where
    from tests.control.processes import described, stat_fields, wait_for_lines

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
        # Its reading freezes the run whether or not the chain forked between its two passes: on a loaded machine
        # the run (at nice 10) can go without a fork through any number of readings, which then freeze nothing.
        cap.read_unstopped = lambda find, proc: (False, None)
        over_cap({{1: process.pid}}, limits)
        os._exit(3)
    def frozen():
        # For a failing check: what the run's cgroup says of its freezing, as the kernel has it.
        run = Path(directory, f"run-{{process.pid}}")
        return [(run / name).read_text().strip() for name in ("cgroup.freeze", "cgroup.events")] if directory else []

    facts = {{"old": os.waitstatus_to_exitcode(os.waitpid(old, 0)[1])}}
    facts["forking_after_old"] = forking(timeout=2)
    facts["after_old"] = [*where(work / "run.log"), *frozen()] if facts["forking_after_old"] else []
    facts["new"] = over_cap({{1: process.pid}}, limits)
    facts["forking"] = forking()
    facts["where"] = [] if facts["forking"] else [*where(work / "run.log"), *frozen()]
    facts["stopped"] = stat_fields(found["stopped"])[0]
    facts["stopped_child"] = described(found["stopped"])
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
    left = facts["after_old"]
    assert not facts["forking_after_old"], f"the old scheduler's death did not leave the run stopped: {left}"
    assert facts["new"] == {}
    assert facts["forking"], f"the new scheduler's reading left the run stopped: {facts['where']}"
    assert facts["stopped"] == "T", f"what the run had stopped itself was continued: {facts['stopped_child']}"
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


# A process that notes each SIGCONT it gets in the file named by its argument, says it is ready, and sleeps.
NOTES_SIGCONT = textwrap.dedent("""
    import pathlib, signal, sys, time
    signal.signal(signal.SIGCONT, lambda *_: pathlib.Path(sys.argv[1]).write_text("continued"))
    print("ready", flush=True)
    time.sleep(300)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and signals processes")
def test_a_process_left_with_the_freezes_stop_pending_is_continued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scheduler killed before its freeze settled leaves a SIGSTOP pending in a process a loaded machine has not
    run since (state R, `ShdPnd` holding SIGSTOP): the next scheduler continues it too, or it would stop for good
    once it ran. The process is real (it notes the SIGCONT); what the ledger's reader sees of it is a copy of /proc
    showing it so, as the kernel cannot be made to hold a stop pending on cue."""
    monkeypatch.setenv("ORCA_LOG_STAGE", str(tmp_path / "stage"))
    noted = tmp_path / "noted"
    process = subprocess.Popen([sys.executable, "-c", NOTES_SIGCONT, str(noted)], stdout=subprocess.PIPE,
                               start_new_session=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        fake = tmp_path / "proc" / str(process.pid)
        fake.mkdir(parents=True)
        stat = Path(f"/proc/{process.pid}/stat").read_text()
        close = stat.rindex(")")
        (fake / "stat").write_text(f"{stat[: close + 2]}R{stat[close + 3 :]}")
        (fake / "status").write_text(f"State:\tR (running)\nSigPnd:\t0000000000000000\nShdPnd:\t{1 << 18:016x}\n")
        start = procs.start_of(process.pid, str(tmp_path / "proc"))
        assert start == procs.start_of(process.pid)
        ledger.Record(ledger.SIGNALS, process.pid, start).write(())
        # The entry's scheduler, this test, is not in the copy of /proc: it reads as one that no longer runs.
        assert ledger.thaw_left(str(tmp_path / "proc")) == 1
        deadline = time.monotonic() + 30
        while not noted.exists():
            assert time.monotonic() < deadline, "the process with the stop pending was not continued"
            time.sleep(0.01)
    finally:
        process.kill()
        process.wait()
