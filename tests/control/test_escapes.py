"""Processes that leave a run's session with `setsid` and whose parent is gone, without a cgroup: found by the run's
mark, measured and killed with the run (docs/behaviour.md §12.3). Each scenario runs in a pid namespace whose init
reaps (`namespace`), so the parent truly disappears, and nothing of the scenario outlives the test."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.control.namespace import needs_pid_namespace, run_in_pid_namespace
from tests.control.processes import MIB

pytestmark = needs_pid_namespace

# The run's root forks a child that forks the escapee's parent and exits; that parent leaves the run's session
# (`setsid`), forks the escapee, which makes 100 MB resident, and exits: reparented to the namespace's init, and
# reaped by it. The root waits for its own child and sleeps, holding nothing much.
ESCAPING_ROOT = textwrap.dedent("""
    import os, sys, time
    pids = sys.argv[1]
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                hold = bytearray(b"\\x01") * (100 << 20)
                with open(pids, "a") as f:
                    f.write(f"escapee {os.getpid()}\\n")
                time.sleep(300)
                os._exit(0)
            with open(pids, "a") as f:
                f.write(f"parent {os.getpid()}\\n")
            os._exit(0)
        os._exit(0)
    os.wait()
    with open(pids, "a") as f:
        f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")

ESCAPE = textwrap.dedent(f"""
    import os, sys
    from pathlib import Path
    from orca.control import enforce_memory, over_cap
    from tests.control.inside import CAP_64, gone, left, report, start, status
    from tests.control.processes import ended, stat_fields

    process, found = start(Path(sys.argv[1]), "escape", {ESCAPING_ROOT!r}, ready=3)
    facts = {{"parent_gone": gone(found["parent"]), "root": process.pid}}
    escapee = os.pidfd_open(found["escapee"])
    fields = stat_fields(found["escapee"])
    facts |= {{"escapee_ppid": int(fields[1]), "escapee_session": int(fields[3])}}
    facts["over"] = over_cap({{1: process.pid}}, CAP_64).get(1)
    facts["reasons"] = enforce_memory({{1: process.pid}}, CAP_64)
    facts["escapee_ended"] = ended(escapee, timeout=5)
    facts["root_status"] = status(process)
    facts["left"] = left()
    report(facts)
""")


def test_a_setsid_escapee_whose_parent_is_gone_is_measured_and_killed_by_the_mark(tmp_path: Path) -> None:
    facts = run_in_pid_namespace(ESCAPE, str(tmp_path))
    # Nothing but the mark ties it to the run: its parent reaped, its parent the init, its session not the run's.
    assert facts["parent_gone"]
    assert facts["escapee_ppid"] == 1
    assert facts["escapee_session"] != facts["root"]
    assert facts["over"] is not None and facts["over"] > 100 * MIB
    assert list(facts["reasons"]) == ["1"]
    assert facts["reasons"]["1"].endswith(" MiB over the 64 MB cap")
    assert facts["escapee_ended"]
    assert facts["root_status"] == -9
    assert facts["left"] == []


# A chain that leaves its session at every generation, each parent gone at once (reaped by the init): 100 MB
# resident in every generation, a short pause before each fork, so that a pass over /proc is quicker than a
# generation (a chain quicker than that is what only a cgroup holds).
SESSION_CHAIN_ROOT = textwrap.dedent("""
    import os, sys, time
    pids = sys.argv[1]
    if os.fork() == 0:
        hold = bytearray(b"\\x01") * (100 << 20)
        with open(pids, "a") as f:
            f.write(f"chain {os.getpid()}\\n")
        while True:
            os.setsid()
            time.sleep(0.01)
            if os.fork() != 0:
                os._exit(0)
    with open(pids, "a") as f:
        f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")

SESSION_CHAIN = textwrap.dedent(f"""
    import sys
    from pathlib import Path
    from orca.control import enforce_memory, over_cap
    from tests.control.inside import CAP_64, forking, left, report, start, status

    process, found = start(Path(sys.argv[1]), "chain", {SESSION_CHAIN_ROOT!r}, ready=2)
    facts = {{"readings": [over_cap({{1: process.pid}}, CAP_64).get(1) for _ in range(10)], "forking": forking()}}
    facts["reasons"] = enforce_memory({{1: process.pid}}, CAP_64)
    facts["root_status"] = status(process)
    facts["left"] = left()
    report(facts)
""")


def test_a_chain_leaving_its_session_at_each_generation_is_followed_by_its_mark(tmp_path: Path) -> None:
    facts = run_in_pid_namespace(SESSION_CHAIN, str(tmp_path))
    assert all(reading is not None and reading > 100 * MIB for reading in facts["readings"]), facts["readings"]
    assert facts["forking"], "the chain was left stopped by a reading"
    assert list(facts["reasons"]) == ["1"]
    assert facts["root_status"] == -9
    assert facts["left"] == [], "part of the chain escaped the kill"
