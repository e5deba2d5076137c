"""A control-placed run's process, for real: how it is started, its staging file, and the memory cap killing real
trees (read back from /proc, never from the code under test)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orca.control import ControlLimits, control_stage, enforce_memory, kill_run, over_cap, start_run
from orca.control.runs import _Held, _process_table

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

MIB = 1 << 20


def _stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat's fields after comm, numbered so that index 0 is proc(5)'s field 3."""
    data = Path(f"/proc/{pid}/stat").read_text()
    return data[data.rfind(")") + 2 :].split()


def _wait_for(path: Path, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < deadline, f"{path} was not written"
        time.sleep(0.02)
    return path.read_text()


def _ended(pidfd: int, timeout: float = 20) -> bool:
    """Whether the process a pidfd holds has ended (a pidfd reads as ready when it has)."""
    ready, _, _ = select.select([pidfd], [], [], timeout)
    return bool(ready)


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


# --- starting a run -------------------------------------------------------------------------------------------------


def test_start_run_lowers_priority_exposes_to_oom_groups_and_appends(tmp_path: Path) -> None:
    stage = tmp_path / "stage" / "p" / "9" / "driver-1.log"
    stage.parent.mkdir(parents=True)
    stage.write_text("earlier line\n")
    ready = tmp_path / "ready"
    code = textwrap.dedent(f"""
        import os, sys, time
        print("out:", os.environ["ORCA_IMAGE"], os.environ["TOKEN"], flush=True)
        print("err: to stderr", file=sys.stderr, flush=True)
        open({str(ready)!r}, "w").write("ok\\n")
        time.sleep(60)
    """)
    limits = ControlLimits(nice=7)
    own = (Path("/proc/self/oom_score_adj").read_text(), os.nice(0))
    process = start_run([sys.executable, "-c", code], ["ORCA_IMAGE=img:1", "TOKEN=t0k"], limits, str(stage))
    try:
        _wait_for(ready)
        fields = _stat_fields(process.pid)
        # proc(5): field 5 pgrp, field 6 session, field 19 nice.
        assert int(fields[2]) == process.pid, "not in a process group of its own"
        assert int(fields[3]) == os.getsid(0), "a process group, not a new session"
        assert int(fields[16]) == min(19, os.nice(0) + 7)
        assert Path(f"/proc/{process.pid}/oom_score_adj").read_text().strip() == "1000"
        # The scheduler itself is unchanged.
        assert (Path("/proc/self/oom_score_adj").read_text(), os.nice(0)) == own
    finally:
        process.kill()
        process.wait()
    assert stage.read_text() == "earlier line\nout: img:1 t0k\nerr: to stderr\n"


def test_start_run_creates_a_private_stage(tmp_path: Path) -> None:
    stage = tmp_path / "root" / "p" / "1" / "driver-2.log"
    process = start_run(["sh", "-c", "echo hi"], [], ControlLimits(), str(stage))
    assert process.wait() == 0
    assert stage.read_text() == "hi\n"
    assert stage.stat().st_mode & 0o777 == 0o600


def test_start_run_of_a_missing_program_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        start_run(["/nonexistent/binary"], [], ControlLimits(), str(tmp_path / "s.log"))


# --- the memory cap -------------------------------------------------------------------------------------------------

# The run: a root that sleeps; a child that leaves the root's process group (setsid) and then holds 100 MB, touched
# so that it is resident; and an orphan: a grandchild whose parent exits, so that it is no longer in the root's tree
# but still in its process group. Each writes its pid to `pids` when ready.
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


class Runs:
    """The runs a test starts, each process of them held by a pidfd, so that every one is gone after the test."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []
        self.held: list[int] = []

    def start(self, tmp_path: Path, name: str, code: str) -> tuple[int, dict[str, int]]:
        """Starts `code` as a run, and waits until each of its processes has written `<role> <pid>` to a file."""
        pids = tmp_path / f"{name}.pids"
        log = tmp_path / f"{name}.log"
        process = start_run([sys.executable, "-c", code, str(pids)], [], ControlLimits(), str(log))
        self.started.append(process)
        self.held.append(os.pidfd_open(process.pid))
        deadline = time.monotonic() + 60
        while len(pids.read_text().splitlines() if pids.exists() else []) < code.count("f.write"):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        found = {role: int(pid) for role, pid in (line.split() for line in pids.read_text().splitlines())}
        self.held.extend(os.pidfd_open(pid) for role, pid in found.items() if role != "root")
        return process.pid, found

    def end(self) -> None:
        for pidfd in self.held:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            os.close(pidfd)
        for process in self.started:
            process.wait()


@pytest.fixture
def runs() -> Iterator[Runs]:
    started = Runs()
    yield started
    started.end()


SMALL = textwrap.dedent("""
    import os, sys, time
    with open(sys.argv[1], "a") as f:
        f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")


def test_a_tree_over_the_cap_is_killed_whole_and_one_under_it_untouched(
    tmp_path: Path, runs: Runs
) -> None:
    limits = ControlLimits.from_env({"ORCA_CONTROL_MEMORY_MB": "64"})
    big_root, big = runs.start(tmp_path, "big", GROWING)
    small_root, _ = runs.start(tmp_path, "small", SMALL)
    # Held before the kill, so the test sees these very processes end (and not a pid reused afterwards).
    watch = {role: os.pidfd_open(pid) for role, pid in big.items()}
    small_fd = os.pidfd_open(small_root)
    # proc(5) fields 4 and 5, ppid and pgrp. The child left the root's process group, so killing the group alone
    # would miss it; the orphan left the tree, so walking the tree alone would miss it.
    assert int(_stat_fields(big["child"])[2]) == big["child"]
    orphan = _stat_fields(big["orphan"])
    assert int(orphan[1]) not in (big_root, big["child"]) and int(orphan[2]) == big_root
    try:
        over = over_cap({1: big_root, 2: small_root}, limits)
        assert list(over) == [1]
        assert over[1] > 100 * MIB  # the child's 100 MB alone
        reasons = enforce_memory({1: big_root, 2: small_root}, limits)
        assert list(reasons) == [1]
        assert reasons[1].startswith("resident memory 1") and reasons[1].endswith(" MiB over the 64 MB cap")
        for role, pidfd in watch.items():
            assert _ended(pidfd), f"the run's {role} was not killed"
        assert not _ended(small_fd, timeout=0.5), "a run under the cap was signalled"
        assert _stat_fields(small_root)[0] in "RS"
        assert runs.started[0].wait(timeout=20) == -9
    finally:
        for pidfd in [*watch.values(), small_fd]:
            os.close(pidfd)


def test_nothing_is_over_a_cap_it_fits_under(tmp_path: Path, runs: Runs) -> None:
    root, _ = runs.start(tmp_path, "big", GROWING)
    limits = ControlLimits(memory_mb=4096)
    assert over_cap({1: root}, limits) == {}
    assert enforce_memory({1: root}, limits) == {}
    assert runs.started[0].poll() is None


def test_a_run_whose_root_ended_is_not_over() -> None:
    process = subprocess.Popen(["true"])
    process.wait()
    assert over_cap({1: process.pid}, ControlLimits(memory_mb=1)) == {}
    assert enforce_memory({1: process.pid}, ControlLimits(memory_mb=1)) == {}


def test_a_root_that_is_another_process_now_is_never_killed(
    tmp_path: Path, runs: Runs
) -> None:
    root, _ = runs.start(tmp_path, "small", SMALL)
    start = int(_stat_fields(root)[19])
    # As if `root` had ended and its pid gone to this process: the start time found no longer matches.
    assert kill_run(root, start - 1) == 0
    assert kill_run(root, start + 1) == 0
    time.sleep(0.2)
    assert runs.started[0].poll() is None
    # The start time the process really has: it is killed.
    assert kill_run(root, start) == 1
    assert runs.started[0].wait(timeout=20) == -9


def test_the_process_table_sees_this_process() -> None:
    table = _process_table("/proc")
    me = table[os.getpid()]
    assert me.ppid == os.getppid() and me.pgrp == os.getpgrp()
    assert me.start == int(_stat_fields(os.getpid())[19])


def test_a_process_is_held_only_if_it_is_the_one_found(tmp_path: Path, runs: Runs) -> None:
    root, _ = runs.start(tmp_path, "small", SMALL)
    start = int(_stat_fields(root)[19])
    assert _Held.of("/proc", root, start + 1) is None  # the pid now names a process that started later
    held = _Held.of("/proc", root, start)
    assert held is not None
    held.send(signal.SIGKILL)
    held.close()
    assert runs.started[0].wait(timeout=20) == -9
