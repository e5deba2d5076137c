"""The memory cap and chains of processes that fork and exit, for real (docs/behaviour.md §12.4): every reading sees
a chain whole, a chain over the cap is killed and reported, one under it runs on.

A chain orphans a process at every generation: each scenario runs in a pid namespace whose init reaps them at once
(`namespace`), where a host whose pid 1 reaps late (a container's) would fill its pid space with them; the
namespace also ends whatever a failing scenario leaves."""

from __future__ import annotations

import os
import re
import signal
import sys
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from orca.control import ControlLimits, over_cap, procs
from orca.control.members import Members, ProcId
from tests.control.namespace import needs_pid_namespace, run_in_pid_namespace
from tests.control.processes import MIB, Runs, described, stat_fields

# The root leaves 1000 orphans that end at once (under an init that does not reap, 1000 zombies in its group and
# session, as a chain's generations pile up there in time), makes 100 MB resident, says so, and becomes a chain: each
# generation forks the next and exits at once, and each holds the 100 MB it inherits. No process of the run lives
# longer than a fork.
HOLDING_CHAIN = textwrap.dedent("""
    import os, sys
    for _ in range(1000):
        if os.fork() == 0:
            if os.fork() == 0:
                os._exit(0)
            os._exit(0)
        os.wait()
    hold = bytearray(b"\\x01") * (100 << 20)
    with open(sys.argv[1], "a") as f:
        f.write(f"root {os.getpid()}\\n")
    while True:
        if os.fork() != 0:
            os._exit(0)
""")

# The root sleeps; its child becomes a chain: the run is over a 1 MB cap (an interpreter alone is over it), and a
# kill that lets one generation of the chain slip leaves it forking for good.
CHAIN = textwrap.dedent("""
    import os, sys, time
    if os.fork() == 0:
        while True:
            if os.fork() != 0:
                os._exit(0)
    with open(sys.argv[1], "a") as f:
        f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")

PRELUDE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from orca.control import ControlLimits, enforce_memory, kill_run, over_cap
    from tests.control.inside import CAP_64, forking, left, live, report, start, where
    from tests.control.processes import stat_fields

    work = Path(sys.argv[1])
""")


# The init of each scenario's namespace reaps every orphan (as `docker run --init` or orca as pid 1 does), or none (a
# container whose entrypoint is not an init): a chain's generations then stay zombies, in its group and session.
INITS = pytest.mark.parametrize("reaps", [True, False], ids=["reaping-init", "non-reaping-init"])


@needs_pid_namespace
@INITS
def test_a_chain_holding_memory_reads_over_the_cap_at_every_reading(tmp_path: Path, reaps: bool) -> None:
    scenario = PRELUDE + textwrap.dedent(f"""
        process, _ = start(work, "chain", {HOLDING_CHAIN!r}, ready=1)
        readings = [over_cap({{1: process.pid}}, CAP_64).get(1) for _ in range(20)]
        on = forking()
        report({{"readings": readings, "forking": on, "where": [] if on else where(work / "chain.log")}})
    """)
    facts = run_in_pid_namespace(scenario, str(tmp_path), reaps=reaps)
    readings = facts["readings"]
    assert all(reading is not None and reading > 100 * MIB for reading in readings), [
        None if reading is None else round(reading / MIB) for reading in readings
    ]
    # Under either init: `forking` reads the namespace's last pid, which each generation moves, where a listing of
    # /proc rarely caught one alive among a non-reaping init's zombies and read a chain that forked on as gone.
    assert facts["forking"], f"a reading left the chain stopped: {facts['where']}"


@needs_pid_namespace
@INITS
def test_a_chain_holding_memory_is_killed_and_reported(tmp_path: Path, reaps: bool) -> None:
    scenario = PRELUDE + textwrap.dedent(f"""
        trials = []
        for trial in range(3):
            process, _ = start(work, f"chain-{{trial}}", {HOLDING_CHAIN!r}, ready=1)
            trials.append({{"reasons": enforce_memory({{1: process.pid}}, CAP_64), "left": left()}})
            process.wait()
        report({{"trials": trials}})
    """)
    for trial in run_in_pid_namespace(scenario, str(tmp_path), reaps=reaps)["trials"]:
        assert list(trial["reasons"]) == ["1"], "a chain over the cap was not reported"
        # A reading may count several generations' copies of the 100 MB (MiB or GiB).
        assert re.fullmatch(r"resident memory [0-9.]+ [MG]iB over the 64 MB cap", trial["reasons"]["1"])
        assert trial["left"] == [], "the chain was not killed"


@needs_pid_namespace
@INITS
def test_kill_run_ends_a_chain_and_counts_it(tmp_path: Path, reaps: bool) -> None:
    scenario = PRELUDE + textwrap.dedent(f"""
        process, _ = start(work, "chain", {HOLDING_CHAIN!r}, ready=1)
        killed = kill_run(process.pid, int(stat_fields(process.pid)[19]))
        report({{"killed": killed, "left": left()}})
    """)
    facts = run_in_pid_namespace(scenario, str(tmp_path), reaps=reaps)
    assert facts["killed"] >= 1
    assert facts["left"] == []


@needs_pid_namespace
@INITS
def test_a_chain_under_the_cap_runs_on(tmp_path: Path, reaps: bool) -> None:
    scenario = PRELUDE + textwrap.dedent(f"""
        process, _ = start(work, "chain", {HOLDING_CHAIN!r}, ready=1)
        reasons = enforce_memory({{1: process.pid}}, ControlLimits(memory_mb=4096))
        on = forking()
        report({{"reasons": reasons, "forking": on, "where": [] if on else where(work / "chain.log")}})
    """)
    facts = run_in_pid_namespace(scenario, str(tmp_path), reaps=reaps)
    assert facts["reasons"] == {}
    assert facts["forking"], f"the chain was left stopped: {facts['where']}"


CHAIN_ROUNDS = 40
"""Enough rounds that a kill that lets a chain escape one time in nine all but surely fails one of them."""
ZOMBIE_ROUNDS = 5
"""Under an init that does not reap, every generation of every round stays a zombie until the namespace ends, and
zombies hold pids of the whole machine's (`pid_max`): a few rounds only."""


@needs_pid_namespace
@INITS
def test_a_forking_chain_leaves_nothing_behind(tmp_path: Path, reaps: bool) -> None:
    scenario = PRELUDE + textwrap.dedent(f"""
        for round_ in range({CHAIN_ROUNDS} if {reaps} else {ZOMBIE_ROUNDS}):
            process, _ = start(work, f"chain-{{round_}}", {CHAIN!r}, ready=1)
            reasons = enforce_memory({{1: process.pid}}, ControlLimits(memory_mb=1))
            # Killed processes take a moment to end; a survivor keeps forking, and is seen again and again.
            survivors = left(timeout=10)
            for _ in range(3):
                time.sleep(0.02)
                survivors += sorted(live())
            process.wait()
            if list(reasons) != [1] or survivors:
                report({{"round": round_, "reasons": reasons, "survivors": survivors, "where": where()}})
                break
        else:
            report({{"round": None}})
    """)
    facts = run_in_pid_namespace(scenario, str(tmp_path), reaps=reaps)
    assert facts["round"] is None, f"round {facts['round']}: {facts}"


# --- a reading and what the run had stopped itself, on this host (no chain) ----------------------------------------


# The root stops a child of its own, says both pids, and sleeps.
STOPS_A_CHILD = textwrap.dedent("""
    import os, signal, sys, time
    child = os.fork()
    if child == 0:
        time.sleep(300)
        os._exit(0)
    os.kill(child, signal.SIGSTOP)
    with open(sys.argv[1], "a") as f:
        f.write(f"stopped {child}\\nroot {os.getpid()}\\n")
    time.sleep(300)
""")


def _started_with_a_stopped_child(runs: Runs) -> tuple[int, int]:
    """The root of a run `STOPS_A_CHILD`, and that child, once it is stopped."""
    root, found = runs.start("stopped", [sys.executable, "-c", STOPS_A_CHILD], ready=2)
    deadline = time.monotonic() + 20
    while stat_fields(found["stopped"])[0] != "T":
        assert time.monotonic() < deadline, "the child was not stopped"
        time.sleep(0.01)
    return root, found["stopped"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_reading_continues_what_it_stopped_and_leaves_stopped_what_was(runs: Runs) -> None:
    root, stopped = _started_with_a_stopped_child(runs)
    assert over_cap({1: root}, ControlLimits(memory_mb=4096)) == {}
    # proc(5) field 3, state: the root runs again (sleeping), the child its run stopped stays stopped.
    deadline = time.monotonic() + 20
    while stat_fields(root)[0] not in "RS":
        assert time.monotonic() < deadline, f"the root was left {stat_fields(root)[0]}"
        time.sleep(0.01)
    assert stat_fields(stopped)[0] == "T"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("passes", [1, procs.FREEZE_PASSES], ids=["unsettled", "settled"])
def test_a_release_leaves_stopped_what_the_run_stopped_itself_whether_or_not_the_freeze_settled(
    runs: Runs, monkeypatch: pytest.MonkeyPatch, passes: int
) -> None:
    """One pass never settles a freeze (the run's group was not stopped before it was read), as a loaded machine's
    can fail to within its passes: its release continues what it stopped, and not the child the run stopped."""
    root, stopped = _started_with_a_stopped_child(runs)
    monkeypatch.setattr(procs, "FREEZE_PASSES", passes)
    frozen = procs.Frozen()
    frozen.stop(lambda table: Members(frozenset({root, stopped}) & table.keys(), frozenset({root})))
    assert frozen.release(signal.SIGCONT) == 2
    assert stat_fields(stopped)[0] == "T", "what the run had stopped itself was continued"
    assert stat_fields(root)[0] != "T", "what the freeze stopped was left stopped"


# The root forks a child that sleeps and, beside another group, a second child in a process group of its own, which it
# stops; it says each pid, and sleeps. argv: `alone` or `beside`, then the pids file.
BORN_IN_THE_GROUP = textwrap.dedent("""
    import os, signal, sys, time
    born = os.fork()
    if born == 0:
        time.sleep(300)
        os._exit(0)
    said = f"born {born}\\n"
    if sys.argv[1] == "beside":
        other = os.fork()
        if other == 0:
            time.sleep(300)
            os._exit(0)
        os.setpgid(other, other)
        os.kill(other, signal.SIGSTOP)
        said += f"other {other}\\n"
    with open(sys.argv[-1], "a") as f:
        f.write(f"{said}root {os.getpid()}\\n")
    time.sleep(300)
""")


def _as_born_with_its_stop_pending(fake: Path, pid: int) -> None:
    """Writes into `fake` a copy of process `pid`'s `stat` and `status` as they read while it was being forked as a
    SIGSTOP went to its group: running, the stop in `ShdPnd`. The kernel cannot be made to hold a stop pending on cue,
    so the test's release reads the child so, from the copy, while the real child took the stop it was sent."""
    (fake / str(pid)).mkdir()
    stat = Path(f"/proc/{pid}/stat").read_text()
    close = stat.rindex(")")
    (fake / str(pid) / "stat").write_text(f"{stat[: close + 2]}R{stat[close + 3 :]}")
    status = Path(f"/proc/{pid}/status").read_text()
    status = re.sub(r"^State:.*$", "State:\tR (running)", status, flags=re.M)
    status = re.sub(r"^ShdPnd:.*$", f"ShdPnd:\t{1 << (signal.SIGSTOP - 1):016x}", status, flags=re.M)
    (fake / str(pid) / "status").write_text(status)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("shape", ["alone", "beside"], ids=["alone", "beside-another-group"])
def test_a_release_continues_a_child_born_with_its_groups_stop_pending(
    runs: Runs, tmp_path: Path, shape: str
) -> None:
    """A child forked in a group as the freeze's SIGSTOP went to the group is born with the stop pending (`ShdPnd`),
    running until a loaded machine next runs it. A release that continued only what read stopped left it to stop
    for good. Here the freeze settles (the case where its groups are not continued whole), beside a group whose
    process the run stopped itself or not, and the release finds the child with its stop still pending."""
    root, found = runs.start(shape, [sys.executable, "-c", BORN_IN_THE_GROUP, shape], ready=2 + (shape == "beside"))
    others = [found["other"]] if shape == "beside" else []
    deadline = time.monotonic() + 20
    while any(stat_fields(pid)[0] != "T" for pid in others):
        assert time.monotonic() < deadline, f"not stopped by the run: {[described(pid) for pid in others]}"
        time.sleep(0.01)
    fake = tmp_path / "proc"
    fake.mkdir()
    for pid in (root, *others):
        (fake / str(pid)).symlink_to(f"/proc/{pid}")
    _as_born_with_its_stop_pending(fake, found["born"])
    named = frozenset({root, *others})
    passes = 0

    def find(table: Mapping[int, ProcId]) -> Members:
        # A loaded machine can take longer to stop the root than the passes over this small /proc last, and a
        # freeze that does not settle continues its groups whole: each pass after the first waits for the stops.
        nonlocal passes
        if passes:
            waited = time.monotonic() + 20
            while any(stat_fields(pid)[0] != "T" for pid in named) and time.monotonic() < waited:
                time.sleep(0.01)
        passes += 1
        return Members(named & table.keys(), named)

    frozen = procs.Frozen(str(fake))
    frozen.stop(find)
    assert frozen.release(signal.SIGCONT) == len(named)
    deadline = time.monotonic() + 10
    while stat_fields(found["born"])[0] == "T" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stat_fields(found["born"])[0] != "T", f"the child born with its stop pending: {described(found['born'])}"
    assert stat_fields(root)[0] != "T", f"what the freeze stopped: {described(root)}"
    assert all(stat_fields(pid)[0] == "T" for pid in others), f"what the run stopped: {described(others[0])}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_run_whose_processes_stay_the_same_is_read_without_being_stopped(runs: Runs, tmp_path: Path) -> None:
    # Each process of the run notes every SIGCONT it receives, and then a real-time signal sent after the readings:
    # the kernel delivers a pending SIGCONT before any real-time signal, and Python runs handlers in signal order,
    # so once both marks are there every continue a reading sent has been noted.
    notes = tmp_path / "notes"
    code = textwrap.dedent(f"""
        import os, signal, sys, time
        def noted(signum, frame):
            with open({str(notes)!r}, "a") as f:
                f.write(f"{{'continued' if signum == signal.SIGCONT else 'mark'}} {{os.getpid()}}\\n")
        signal.signal(signal.SIGCONT, noted)
        signal.signal(signal.SIGRTMIN, noted)
        child = os.fork()
        with open(sys.argv[1], "a") as f:
            f.write(f"{{'child' if child == 0 else 'root'}} {{os.getpid()}}\\n")
        while True:
            time.sleep(300)
    """)
    root, found = runs.start("quiet", [sys.executable, "-c", code], ready=2)
    for _ in range(5):
        assert over_cap({1: root}, ControlLimits(memory_mb=4096)) == {}
    got = over_cap({1: root}, ControlLimits(memory_mb=1))  # over a 1 MB cap: read, not killed
    assert list(got) == [1] and got[1] > 2 * MIB
    for pid in found.values():
        os.kill(pid, signal.SIGRTMIN)
    deadline = time.monotonic() + 20
    while not notes.exists() or notes.read_text().count("mark") < 2:
        assert time.monotonic() < deadline, "the processes did not note the mark"
        time.sleep(0.01)
    assert "continued" not in notes.read_text()
    assert {stat_fields(pid)[0] for pid in found.values()} <= set("RS")
