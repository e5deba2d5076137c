"""Processes that leave a run's session with `setsid` and whose parent is gone, without a cgroup (docs/behaviour.md
§12.3): a process a reading found as the run's stays the run's, measured and killed with it, whatever its environment
says since; a process that writes another run's mark into its environment is not that run's. Each scenario runs in a
pid namespace whose init reaps, or one whose init does not (`namespace`), so the parent truly disappears or stays a
zombie, and nothing of the scenario outlives the test."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.control.namespace import needs_pid_namespace, run_in_pid_namespace
from tests.control.processes import MIB

pytestmark = [needs_pid_namespace, pytest.mark.parametrize("reaps", [True, False], ids=["reaping", "non-reaping"])]

# The run's root forks a child that forks the escapee's parent; that parent leaves the run's session (`setsid`) and
# forks the escapee, which makes 100 MB resident. The child and the parent exit once `<pids>.go` exists (so the
# parent is no child of the root's, which would keep it as a zombie, but the init's); the escapee then, with `title`,
# overwrites its environment in place as setproctitle and PostgreSQL's ps display do (so /proc/<pid>/environ lacks
# the run's mark), and says so. The root sleeps, holding nothing much.
ESCAPING_ROOT = textwrap.dedent("""
    import os, sys, time
    pids, title = sys.argv[2], sys.argv[1] == "title"
    go = pids + ".go"

    def wait_for(path):
        while not os.path.exists(path):
            time.sleep(0.01)

    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                hold = bytearray(b"\\x01") * (100 << 20)
                with open(pids, "a") as f:
                    f.write(f"escapee {os.getpid()}\\n")
                wait_for(go + ".reparented")
                if title:
                    fields = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
                    start, end = int(fields[47]), int(fields[48])  # proc(5) fields 50 and 51: env_start, env_end
                    with open("/proc/self/mem", "r+b", buffering=0) as mem:
                        mem.seek(start)
                        mem.write(b"\\0" * (end - start))
                with open(pids, "a") as f:
                    f.write(f"retitled {os.getpid()}\\n")
                time.sleep(300)
                os._exit(0)
            with open(pids, "a") as f:
                f.write(f"parent {os.getpid()}\\n")
            wait_for(go)
            os._exit(0)
        wait_for(go)
        os._exit(0)
    with open(pids, "a") as f:
        f.write(f"root {os.getpid()}\\n")
    while True:
        time.sleep(300)
""")

ESCAPE = textwrap.dedent(f"""
    import os, sys, time
    from pathlib import Path
    from orca.control import ControlLimits, Known, enforce_memory, over_cap, start_run
    from tests.control.inside import CAP_64, gone, left, report, status
    from tests.control.processes import ended, stat_fields, wait_for_lines

    work, how = Path(sys.argv[1]), sys.argv[2]
    pids, log = work / "escape.pids", work / "escape.log"
    process = start_run([sys.executable, "-c", {ESCAPING_ROOT!r}, how, str(pids)], [], ControlLimits(), str(log))
    found = wait_for_lines(pids, 3, log)
    known = Known()
    facts = {{"root": process.pid, "first": over_cap({{1: process.pid}}, CAP_64, known=known).get(1)}}  # seen here
    Path(str(pids) + ".go").touch()
    facts["parent_gone"] = gone(found["parent"]) or stat_fields(found["parent"])[0] == "Z"
    Path(str(pids) + ".go.reparented").touch()
    wait_for_lines(pids, 4, log)
    escapee = os.pidfd_open(found["escapee"])
    fields = stat_fields(found["escapee"])
    facts |= {{"escapee_ppid": int(fields[1]), "escapee_session": int(fields[3])}}
    facts["marked"] = b"ORCA_CONTROL_RUN=" in Path(f"/proc/{{found['escapee']}}/environ").read_bytes()
    facts["unknown"] = over_cap({{1: process.pid}}, CAP_64).get(1)  # a scheduler that never saw it
    facts["over"] = over_cap({{1: process.pid}}, CAP_64, known=known).get(1)
    facts["reasons"] = enforce_memory({{1: process.pid}}, CAP_64, known=known)
    facts["escapee_ended"] = ended(escapee, timeout=5)
    facts["root_status"] = status(process)
    facts["left"] = left()
    report(facts)
""")


@pytest.mark.parametrize("how", ["plain", "title"])
def test_a_setsid_escapee_a_reading_found_is_measured_and_killed_once_its_parent_is_gone(
    tmp_path: Path, reaps: bool, how: str
) -> None:
    facts = run_in_pid_namespace(ESCAPE, str(tmp_path), how, reaps=reaps)
    # Nothing ties it to the run now: its parent gone, its parent the init, its session not the run's; with `title`,
    # not even the mark in its environment.
    assert facts["parent_gone"]
    assert facts["escapee_ppid"] == 1
    assert facts["escapee_session"] != facts["root"]
    assert facts["marked"] == (how == "plain")
    assert facts["first"] is not None and facts["first"] > 100 * MIB
    assert facts["unknown"] is None
    assert facts["over"] is not None and facts["over"] > 100 * MIB
    assert list(facts["reasons"]) == ["1"]
    assert facts["reasons"]["1"].endswith(" MiB over the 64 MB cap")
    assert facts["escapee_ended"]
    assert facts["root_status"] == -9
    assert facts["left"] == []


# Run A's root daemonises a child (fork, setsid, its parent gone at once) that runs Python again with run B's mark
# in its environment (given as the argument) and makes 100 MB resident. Run B's root sleeps, holding little.
FORGER = textwrap.dedent("""
    import os, sys, time
    mark, pids = sys.argv[1], sys.argv[2]
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            code = (
                "import os, sys, time; hold = bytearray(b'1') * (100 << 20); "
                "open(sys.argv[1], 'a').write(f'forger {os.getpid()}\\\\n'); time.sleep(300)"
            )
            os.execve(sys.executable, [sys.executable, "-c", code, pids], {**os.environ, "ORCA_CONTROL_RUN": mark})
        os._exit(0)
    os.wait()
    with open(pids, "a") as f:
        f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")

FORGERY = textwrap.dedent(f"""
    import os, sys
    from pathlib import Path
    from orca.control import ControlLimits, Known, enforce_memory, kill_run, over_cap, start_run
    from tests.control.inside import CAP_64, report
    from tests.control.processes import stat_fields, wait_for_lines

    work = Path(sys.argv[1])
    b = start_run(["sleep", "300"], [], ControlLimits(), str(work / "b.log"))
    b_start = int(stat_fields(b.pid)[19])
    pids, log = work / "a.pids", work / "a.log"
    mark = f"{{b.pid}}:{{b_start}}"
    a = start_run([sys.executable, "-c", {FORGER!r}, mark, str(pids)], [], ControlLimits(), str(log))
    found = wait_for_lines(pids, 2, log)
    environ = Path(f"/proc/{{found['forger']}}/environ").read_bytes()
    facts = {{"forged": f"ORCA_CONTROL_RUN={{mark}}".encode() in environ}}
    known = Known()
    facts["over"] = over_cap({{"a": a.pid, "b": b.pid}}, CAP_64, known=known)
    facts["reasons"] = enforce_memory({{"a": a.pid, "b": b.pid}}, CAP_64, known=known)
    facts["b_running"] = b.poll() is None
    facts["b_killed"] = kill_run(b.pid, b_start, known=known)
    facts["forger_alive"] = stat_fields(found["forger"])[0] not in "ZX"
    for process in (a, b):
        process.kill()
        process.wait()
    report(facts)
""")


def test_a_process_that_writes_another_runs_mark_is_not_that_runs(tmp_path: Path, reaps: bool) -> None:
    facts = run_in_pid_namespace(FORGERY, str(tmp_path), reaps=reaps)
    assert facts["forged"], "the forger did not carry run B's mark"
    assert "b" not in facts["over"], "run B was measured with another run's process"
    assert "b" not in facts["reasons"], "run B was killed for another run's process"
    assert facts["b_running"]
    assert facts["b_killed"] == 1, "kill_run of run B reached more than B's one process"
    assert facts["forger_alive"]
