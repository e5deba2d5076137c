"""A control-placed run's process, for real: how it is started, its staging file, and the memory cap killing real
runs (read back from /proc, never from the code under test)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from orca.control import ControlLimits, control_stage, enforce_memory, kill_run, over_cap, start_run
from orca.control.procs import Held, pipe_holders, process_table
from tests.control.processes import MIB, Runs, ended, stat_fields, wait_for_lines

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

CAP_64 = ControlLimits(memory_mb=64)


# --- the staging file -----------------------------------------------------------------------------------------------


def test_stage_under_orca_log_stage() -> None:
    env = {"ORCA_LOG_STAGE": "/var/stage", "TMPDIR": "/scratch", "ORCA_LOGS": "/logs"}
    assert control_stage("etl", 42, 1796016198, env) == "/var/stage/etl/42/driver-1796016198.log"


def test_stage_under_tmpdir_then_tmp() -> None:
    assert control_stage("etl", 7, 5, {"TMPDIR": "/scratch"}) == "/scratch/orca-logs/etl/7/driver-5.log"
    assert control_stage("etl", 7, 5, {"TMPDIR": "", "ORCA_LOG_STAGE": ""}) == "/tmp/orca-logs/etl/7/driver-5.log"


def test_stage_is_never_under_orca_logs(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    env = {"ORCA_LOGS": str(logs), "ORCA_LOG_STAGE": str(logs / "stage"), "TMPDIR": str(tmp_path / "tmp")}
    assert control_stage("p", 1, 2, env) == f"{tmp_path}/tmp/orca-logs/p/1/driver-2.log"
    env = {"ORCA_LOGS": str(logs), "ORCA_LOG_STAGE": str(logs / "stage"), "TMPDIR": str(logs)}
    assert control_stage("p", 1, 2, env) == "/tmp/orca-logs/p/1/driver-2.log"
    with pytest.raises(ValueError, match="every staging root is under ORCA_LOGS"):
        control_stage("p", 1, 2, {"ORCA_LOGS": "/", "ORCA_LOG_STAGE": "/stage"})


def test_stage_with_logs_in_object_storage() -> None:
    assert control_stage("p", 1, 2, {"ORCA_LOGS": "s3://b/logs", "ORCA_LOG_STAGE": "/s"}) == "/s/p/1/driver-2.log"


@pytest.mark.parametrize("pipeline", ["", ".", "..", "a/b", "a\0b"])
def test_stage_refuses_a_pipeline_that_is_not_one_directory(pipeline: str) -> None:
    with pytest.raises(ValueError, match="not a name that can be one directory"):
        control_stage(pipeline, 1, 2, {"ORCA_LOG_STAGE": "/s"})


@pytest.fixture
def stage_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A staging root of its own (`ORCA_LOG_STAGE`), as a shared `/tmp/orca-logs` would be, made by this user."""
    root = tmp_path / "orca-logs"
    monkeypatch.setenv("ORCA_LOG_STAGE", str(root))
    return root


# What the run sees of its own output, printed before its secret: the mode the file has when the secret is written.
SHOWS_ITS_MODE = ["sh", "-c", 'stat -L -c "mode %a" /dev/stdout; echo "token=$TOKEN"']


def test_a_staging_file_made_new_is_private_and_so_are_its_directories(stage_root: Path) -> None:
    stage = Path(control_stage("etl", 9, 1, os.environ))
    process = start_run(SHOWS_ITS_MODE, ["TOKEN=t0k"], ControlLimits(), str(stage))
    assert process.wait() == 0
    assert stage.read_text() == "mode 600\ntoken=t0k\n"
    for directory in (stage_root, stage_root / "etl", stage_root / "etl" / "9"):
        assert directory.stat().st_mode & 0o777 == 0o700, directory


def test_a_staging_file_readable_by_others_is_made_private_before_the_run_writes(stage_root: Path) -> None:
    stage = Path(control_stage("etl", 9, 1, os.environ))
    stage.parent.mkdir(parents=True, mode=0o700)
    stage.write_text("earlier line\n")
    stage.chmod(0o644)  # as an older version left it
    process = start_run(SHOWS_ITS_MODE, ["TOKEN=t0k"], ControlLimits(), str(stage))
    assert process.wait() == 0
    assert stage.read_text() == "earlier line\nmode 600\ntoken=t0k\n"
    assert stage.stat().st_mode & 0o777 == 0o600


def test_a_symbolic_link_planted_at_the_staging_file_is_refused(stage_root: Path, tmp_path: Path) -> None:
    stage = Path(control_stage("etl", 9, 1, os.environ))
    stage.parent.mkdir(parents=True, mode=0o700)
    target = tmp_path / "victim"
    target.write_text("theirs\n")
    stage.symlink_to(target)
    with pytest.raises(OSError, match="a symbolic link where a staging file should be"):
        start_run(["sh", "-c", "echo token=t0k"], [], ControlLimits(), str(stage))
    assert target.read_text() == "theirs\n"


@pytest.mark.parametrize("where", ["root", "pipeline", "run"])
def test_a_staging_directory_others_can_write_is_refused(stage_root: Path, where: str) -> None:
    stage = Path(control_stage("etl", 9, 1, os.environ))
    stage.parent.mkdir(parents=True, mode=0o700)
    directory = {"root": stage_root, "pipeline": stage_root / "etl", "run": stage.parent}[where]
    directory.chmod(0o777)
    with pytest.raises(OSError, match="a staging directory that other users can write"):
        start_run(["sh", "-c", "echo token=t0k"], [], ControlLimits(), str(stage))
    assert not stage.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a directory another user's needs root")
def test_a_staging_directory_of_another_user_is_refused(stage_root: Path) -> None:
    stage = Path(control_stage("etl", 9, 1, os.environ))
    (stage_root / "etl").mkdir(parents=True, mode=0o700)
    os.chown(stage_root / "etl", 65534, 65534)  # nobody: as if another user had made it first
    with pytest.raises(OSError, match=r"a staging directory owned by another user \(uid 65534\)"):
        start_run(["sh", "-c", "echo token=t0k"], [], ControlLimits(), str(stage))
    assert not stage.exists()


# --- starting a run -------------------------------------------------------------------------------------------------


def test_start_run_lowers_priority_exposes_to_oom_leads_a_session_and_appends(tmp_path: Path) -> None:
    stage = tmp_path / "stage" / "p" / "9" / "driver-1.log"
    stage.parent.mkdir(parents=True)
    stage.write_text("earlier line\n")
    ready = tmp_path / "ready"
    code = textwrap.dedent(f"""
        import os, sys, time
        print("out:", os.environ["ORCA_IMAGE"], os.environ["TOKEN"], flush=True)
        print("err: to stderr", file=sys.stderr, flush=True)
        open({str(ready)!r}, "w").write(f"ready {{os.getpid()}}\\n")
        time.sleep(60)
    """)
    limits = ControlLimits(nice=7)
    own = (Path("/proc/self/oom_score_adj").read_text(), os.nice(0))
    process = start_run([sys.executable, "-c", code], ["ORCA_IMAGE=img:1", "TOKEN=t0k"], limits, str(stage))
    try:
        wait_for_lines(ready, 1, stage)
        fields = stat_fields(process.pid)
        # proc(5): field 5 pgrp, field 6 session, field 19 nice.
        assert int(fields[2]) == process.pid, "not in a process group of its own"
        assert int(fields[3]) == process.pid, "not the leader of a session of its own"
        assert int(fields[16]) == min(19, os.nice(0) + 7)
        assert Path(f"/proc/{process.pid}/oom_score_adj").read_text().strip() == "1000"
        # The scheduler itself is unchanged.
        assert (Path("/proc/self/oom_score_adj").read_text(), os.nice(0)) == own
    finally:
        process.kill()
        process.wait()
    assert stage.read_text() == "earlier line\nout: img:1 t0k\nerr: to stderr\n"


def test_start_run_of_a_missing_program_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        start_run(["/nonexistent/binary"], [], ControlLimits(), str(tmp_path / "s.log"))


def test_an_environment_given_as_a_mapping_is_refused_before_anything_starts(tmp_path: Path) -> None:
    stage = tmp_path / "s.log"
    with pytest.raises(TypeError, match=r"NAME=value entries .* not a dict"):
        start_run(["sh", "-c", "echo started"], {"TOKEN": "t"}, ControlLimits(), str(stage))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="env entry 'PATH': not NAME=value"):
        start_run(["sh", "-c", "echo started"], ["PATH"], ControlLimits(), str(stage))
    assert not stage.exists()


def test_the_environment_entries_reach_the_run_and_the_schedulers_stays(tmp_path: Path) -> None:
    stage = tmp_path / "s.log"
    process = start_run(["sh", "-c", 'echo "$TOKEN|$PATH"'], ["TOKEN=a=b"], ControlLimits(), str(stage))
    assert process.wait() == 0
    assert stage.read_text() == f"a=b|{os.environ['PATH']}\n"


# --- the memory cap: who is measured and killed ---------------------------------------------------------------------

# The run: a root that sleeps; a child that leaves the root's session (setsid) and then holds 100 MB, touched so
# that it is resident; and an orphan: a grandchild whose parent exits, so that it is no longer in the root's tree
# but still in its session and process group. Each writes `<role> <pid>` to the file named last when ready.
GROWING = textwrap.dedent("""
    import os, sys, time
    pids = sys.argv[1]
    if os.fork() == 0:
        os.setsid()
        hold = bytearray(b"\\x01") * (100 << 20)
        with open(pids, "a") as f:
            f.write(f"child {os.getpid()}\\n")
        time.sleep(300)
        os._exit(0)
    if os.fork() == 0:
        parent = os.getpid()
        if os.fork() == 0:
            while os.getppid() == parent:
                time.sleep(0.01)
            with open(pids, "a") as f:
                f.write(f"orphan {os.getpid()}\\n")
            time.sleep(300)
        os._exit(0)
    os.wait()
    with open(pids, "a") as f:
        f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")

SMALL = textwrap.dedent("""
    import os, sys, time
    with open(sys.argv[1], "a") as f:
        f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")

# 100 MB held by a process that writes `<role> <pid>` (its role the second argument) to the file named last.
HOLDER = textwrap.dedent("""
    import os, sys, time
    hold = bytearray(b"\\x01") * (100 << 20)
    with open(sys.argv[-1], "a") as f:
        f.write(f"{sys.argv[1]} {os.getpid()}\\n")
    time.sleep(300)
""")


def test_a_run_over_the_cap_is_killed_whole_and_one_under_it_untouched(runs: Runs) -> None:
    big_root, big = runs.start("big", [sys.executable, "-c", GROWING], ready=3)
    small_root, _ = runs.start("small", [sys.executable, "-c", SMALL], ready=1)
    # Held before the kill, so the test sees these very processes end (and not a pid reused afterwards).
    watch = {role: os.pidfd_open(pid) for role, pid in big.items()}
    small_fd = os.pidfd_open(small_root)
    # proc(5) fields 4, 5, 6: ppid, pgrp, session. The child left the root's session and group, so killing those
    # alone would miss it; the orphan left the tree, so walking the tree alone would miss it.
    child = stat_fields(big["child"])
    assert int(child[2]) == int(child[3]) == big["child"]
    orphan = stat_fields(big["orphan"])
    assert int(orphan[1]) not in (big_root, big["child"]) and int(orphan[2]) == int(orphan[3]) == big_root
    try:
        over = over_cap({1: big_root, 2: small_root}, CAP_64)
        assert list(over) == [1]
        assert over[1] > 100 * MIB  # the child's 100 MB alone
        reasons = enforce_memory({1: big_root, 2: small_root}, CAP_64)
        assert list(reasons) == [1]
        assert reasons[1].startswith("resident memory 1") and reasons[1].endswith(" MiB over the 64 MB cap")
        for role, pidfd in watch.items():
            assert ended(pidfd), f"the run's {role} was not killed"
        assert not ended(small_fd, timeout=0.5), "a run under the cap was signalled"
        assert stat_fields(small_root)[0] in "RS"
        assert runs.started[0].wait(timeout=20) == -9
    finally:
        for pidfd in [*watch.values(), small_fd]:
            os.close(pidfd)


def test_what_is_left_of_a_run_whose_root_exited_first_is_measured_and_killed(runs: Runs) -> None:
    # The root (sh) starts the holder in the background and exits at once; the holder stays in its session.
    argv = ["sh", "-c", f'"{sys.executable}" -c \'{HOLDER}\' orphan "$0" & exit 0']
    root, found = runs.start("first", argv, ready=1)
    assert runs.started[0].wait(timeout=20) == 0  # the root has ended, and been waited for
    holder = os.pidfd_open(found["orphan"])
    try:
        assert int(stat_fields(found["orphan"])[3]) == root
        over = over_cap({1: root}, CAP_64)
        assert list(over) == [1] and over[1] > 100 * MIB
        assert list(enforce_memory({1: root}, CAP_64)) == [1]
        assert ended(holder), "the orphan of an ended root was not killed"
    finally:
        os.close(holder)


def test_a_setsid_child_and_its_children_are_measured_with_the_run(runs: Runs) -> None:
    # The 100 MB is held by a grandchild in the session the child made: found through the child's own session.
    code = textwrap.dedent(f"""
        import os, subprocess, sys, time
        if os.fork() == 0:
            os.setsid()
            subprocess.Popen([sys.executable, "-c", {HOLDER!r}, "grandchild", sys.argv[1]])
            time.sleep(300)
        with open(sys.argv[1], "a") as f:
            f.write(f"root {{os.getpid()}}\\n")
        time.sleep(300)
    """)
    root, found = runs.start("setsid", [sys.executable, "-c", code], ready=2)
    grandchild = os.pidfd_open(found["grandchild"])
    try:
        assert over_cap({1: root}, CAP_64)[1] > 100 * MIB
        assert list(enforce_memory({1: root}, CAP_64)) == [1]
        assert ended(grandchild)
        assert runs.started[0].wait(timeout=20) == -9
    finally:
        os.close(grandchild)


def _v1_pids_cgroup() -> Path | None:
    """This machine's cgroup v1 pids hierarchy, when it has one and this process may make a cgroup in it."""
    mount = Path("/sys/fs/cgroup/pids")
    if os.geteuid() != 0 or not (mount / "cgroup.procs").exists() or (mount / "cgroup.controllers").exists():
        return None
    return mount


@pytest.mark.skipif(_v1_pids_cgroup() is None, reason="needs root and a cgroup v1 pids hierarchy to contain the bomb")
def test_a_fork_bomb_under_a_pids_limit_is_killed_whole(runs: Runs) -> None:
    mount = _v1_pids_cgroup()
    assert mount is not None
    jail = mount / f"orca-control-test-{os.getpid()}"
    jail.mkdir()
    try:
        (jail / "pids.max").write_text("150\n")
        # The root moves itself into the limited cgroup, then becomes the bomb: it forks and exits at once.
        bomb = f"echo $$ > {jail}/cgroup.procs && exec bash -c 'b(){{ b|b& }}; b'"
        process = start_run(["sh", "-c", bomb], [], CAP_64, str(runs.tmp_path / "bomb.log"))
        runs.started.append(process)
        deadline = time.monotonic() + 60
        while len((jail / "cgroup.procs").read_text().split()) < 120:
            assert time.monotonic() < deadline, "the bomb did not grow"
            time.sleep(0.05)
        assert int((jail / "pids.max").read_text()) == 150
        reasons = enforce_memory({1: process.pid}, CAP_64)
        assert list(reasons) == [1], "a bomb of a hundred and more shells is over 64 MB"
        deadline = time.monotonic() + 20
        while (jail / "cgroup.procs").read_text().split():
            assert time.monotonic() < deadline, "part of the bomb survived"
            time.sleep(0.05)
    finally:
        for _ in range(100):
            left = (jail / "cgroup.procs").read_text().split()
            if not left:
                break
            for pid in left:
                with contextlib.suppress(OSError):  # the jail's own: none of them can be another's pid
                    os.kill(int(pid), signal.SIGKILL)
            time.sleep(0.05)
        jail.rmdir()


def test_nothing_is_over_a_cap_it_fits_under(runs: Runs) -> None:
    root, _ = runs.start("big", [sys.executable, "-c", GROWING], ready=3)
    limits = ControlLimits(memory_mb=4096)
    assert over_cap({1: root}, limits) == {}
    assert enforce_memory({1: root}, limits) == {}
    assert runs.started[0].poll() is None


def test_a_run_whose_root_ended_is_not_over() -> None:
    process = subprocess.Popen(["true"])
    process.wait()
    assert over_cap({1: process.pid}, ControlLimits(memory_mb=1)) == {}
    assert enforce_memory({1: process.pid}, ControlLimits(memory_mb=1)) == {}


def test_the_scheduler_itself_is_never_a_run() -> None:
    assert over_cap({1: os.getpid(), 2: os.getpgrp()}, ControlLimits(memory_mb=1)) == {}
    assert kill_run(os.getpid(), None) == 0


def test_a_root_that_is_another_process_now_is_never_killed(runs: Runs) -> None:
    root, _ = runs.start("small", [sys.executable, "-c", SMALL], ready=1)
    start = int(stat_fields(root)[19])
    # As if `root` had ended and its pid gone to this process: the start time found no longer matches.
    assert kill_run(root, start - 1) == 0
    assert kill_run(root, start + 1) == 0
    time.sleep(0.2)
    assert runs.started[0].poll() is None
    # The start time the process really has: it is killed.
    assert kill_run(root, start) == 1
    assert runs.started[0].wait(timeout=20) == -9


def test_the_process_table_sees_this_process() -> None:
    me = process_table()[os.getpid()]
    assert (me.ppid, me.pgrp, me.session) == (os.getppid(), os.getpgrp(), os.getsid(0))
    assert me.start == int(stat_fields(os.getpid())[19])


def test_a_process_is_held_only_if_it_is_the_one_found(runs: Runs) -> None:
    root, _ = runs.start("small", [sys.executable, "-c", SMALL], ready=1)
    start = int(stat_fields(root)[19])
    assert Held.of(root, start + 1) is None  # the pid now names a process that started later
    held = Held.of(root, start)
    assert held is not None
    held.send(signal.SIGKILL)
    held.close()
    assert runs.started[0].wait(timeout=20) == -9


def test_the_holders_of_a_pipe_are_found_by_the_end_they_hold() -> None:
    read_end, write_end = os.pipe()
    sleeper = ["sleep", "300"]
    reader = subprocess.Popen(sleeper, stdin=read_end, stdout=subprocess.DEVNULL)
    writer = subprocess.Popen(sleeper, stdin=subprocess.DEVNULL, stdout=write_end)
    try:
        inode = os.fstat(read_end).st_ino
        assert pipe_holders(inode) == {reader.pid, writer.pid}  # this process, holding both, is never one
        assert pipe_holders(inode, writing=True) == {writer.pid}
    finally:
        for process in (reader, writer):
            process.kill()
            process.wait()
        os.close(read_end)
        os.close(write_end)
