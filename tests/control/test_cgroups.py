"""A run in a cgroup of its own (`ORCA_CONTROL_CGROUP`): its logic on a fixture tree laid out as the kernel's
cgroup-v2 documentation describes the files, and for real on this machine's cgroup v2 hierarchy where it has one
(the controllers it offers decide which of those tests run)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orca.control import (
    ControlLimits,
    cap,
    cgroups,
    enforce_memory,
    kernel_cap_reason,
    over_cap,
    procs,
    start_run,
)
from orca.sample import tree_usage
from tests.control.processes import MIB, Runs, described, ended, stat_fields

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and cgroups")


def _delegated(tmp_path: Path, subtree: str = "memory pids") -> Path:
    """A fixture of a delegated cgroup v2 directory: the files the kernel gives every one."""
    directory = tmp_path / "delegated"
    directory.mkdir()
    (directory / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (directory / "cgroup.subtree_control").write_text(f"{subtree}\n")
    (directory / "cgroup.procs").write_text("")
    return directory


def _start_sleeping(directory: Path, tmp_path: Path, limits: ControlLimits) -> tuple[int, Path]:
    process = start_run(["sleep", "300"], [], limits, str(tmp_path / "run.log"))
    return process.pid, directory / f"run-{process.pid}"


@pytest.fixture
def sleeping(tmp_path: Path) -> Iterator[list[int]]:
    """Pids of the runs a fixture test starts, each killed and waited for afterwards."""
    started: list[int] = []
    yield started
    for pid in started:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


# --- on a fixture tree ----------------------------------------------------------------------------------------------


def test_a_directory_that_is_not_a_cgroup_is_refused_before_anything_starts(tmp_path: Path) -> None:
    limits = ControlLimits(cgroup=str(tmp_path))
    with pytest.raises(OSError, match="ORCA_CONTROL_CGROUP: not a cgroup v2 directory"):
        start_run(["sleep", "300"], [], limits, str(tmp_path / "run.log"))
    assert not (tmp_path / "run.log").exists()


def test_the_memory_and_pids_controllers_are_asked_for(tmp_path: Path) -> None:
    directory = _delegated(tmp_path, subtree="cpu")
    cgroups.prepare(str(directory))
    # One write, as `echo "+memory +pids" > cgroup.subtree_control`: the kernel's own syntax for enabling them.
    assert (directory / "cgroup.subtree_control").read_text() == "+memory +pids"


def test_a_run_starts_in_a_cgroup_of_its_own_with_its_limits(tmp_path: Path, sleeping: list[int]) -> None:
    directory = _delegated(tmp_path)
    limits = ControlLimits(memory_mb=64, max_pids=400, cgroup=str(directory))
    pid, cgroup = _start_sleeping(directory, tmp_path, limits)
    sleeping.append(pid)
    # Made and joined by the run itself before it ran anything: `0` in cgroup.procs is "the writing process".
    assert {path.name: path.read_text() for path in cgroup.iterdir()} == {
        "memory.max": str(64 * MIB),
        "memory.swap.max": "0",
        "memory.oom.group": "1",
        "pids.max": "400",
        "cgroup.procs": "0",
    }
    assert stat_fields(pid)[0] in "RS"


def test_without_controllers_a_run_gets_a_cgroup_and_no_limits(tmp_path: Path, sleeping: list[int]) -> None:
    directory = _delegated(tmp_path, subtree="")
    pid, cgroup = _start_sleeping(directory, tmp_path, ControlLimits(cgroup=str(directory)))
    sleeping.append(pid)
    assert [path.name for path in cgroup.iterdir()] == ["cgroup.procs"]


@pytest.mark.parametrize(
    ("current", "peak", "events", "over", "reason"),
    [
        # memory.current over the cap (a cap the kernel could not set): the figure, rounded up.
        (70 * MIB, 70 * MIB, "max 0\noom 0\noom_kill 0\n", 70 * MIB, "resident memory 70 MiB over the 64 MB cap"),
        # The kernel ended it at memory.max: memory.events counts an `oom`; the peak is the cap, not over it.
        (12 * MIB, 64 * MIB, "max 41\noom 1\noom_kill 3\noom_group_kill 1\n", 64 * MIB, kernel_cap_reason(64)),
        # Reclaimed at the cap (`max`) but never out of memory: under it.
        (60 * MIB, 64 * MIB, "max 41\noom 0\noom_kill 0\n", None, None),
    ],
)
def test_the_kernels_numbers_decide(
    tmp_path: Path, sleeping: list[int], current: int, peak: int, events: str, over: int | None, reason: str | None
) -> None:
    directory = _delegated(tmp_path)
    limits = ControlLimits(memory_mb=64, cgroup=str(directory))
    pid, cgroup = _start_sleeping(directory, tmp_path, limits)
    sleeping.append(pid)
    (cgroup / "memory.current").write_text(f"{current}\n")
    (cgroup / "memory.peak").write_text(f"{peak}\n")
    (cgroup / "memory.events").write_text(events)
    (cgroup / "cgroup.procs").write_text(f"{pid}\n")
    (cgroup / "cgroup.kill").write_text("")
    assert over_cap({7: pid}, limits) == ({} if over is None else {7: over})
    assert enforce_memory({7: pid}, limits) == ({} if reason is None else {7: reason})
    assert (cgroup / "cgroup.kill").read_text() == ("" if reason is None else "1")


def test_without_cgroup_kill_the_cgroup_is_frozen_and_each_process_killed(
    tmp_path: Path, sleeping: list[int]
) -> None:
    directory = _delegated(tmp_path)
    limits = ControlLimits(memory_mb=64, cgroup=str(directory))
    pid, cgroup = _start_sleeping(directory, tmp_path, limits)
    sleeping.append(pid)
    watch = os.pidfd_open(pid)
    try:
        (cgroup / "memory.current").write_text(f"{65 * MIB}\n")
        (cgroup / "cgroup.procs").write_text(f"{pid}\n")
        (cgroup / "cgroup.freeze").write_text("0\n")
        assert enforce_memory({7: pid}, limits) == {7: "resident memory 65 MiB over the 64 MB cap"}
        assert ended(watch)
        assert (cgroup / "cgroup.freeze").read_text() == "0"  # thawed again, as the kernel would have it
    finally:
        os.close(watch)


def test_without_the_memory_controller_the_processes_are_measured(tmp_path: Path, runs: Runs) -> None:
    directory = _delegated(tmp_path, subtree="")
    limits = ControlLimits(memory_mb=64, cgroup=str(directory))
    root, found = runs.start("holder", [sys.executable, "-c", HOLDER, "root"], ready=1, limits=limits)
    (directory / f"run-{root}" / "cgroup.procs").write_text(f"{found['root']}\n")
    assert over_cap({7: root}, limits)[7] > 100 * MIB
    # Measured by the cgroup's processes, not the session: a process listed nowhere else counts.
    (directory / f"run-{root}" / "cgroup.procs").write_text("")
    assert over_cap({7: root}, limits) == {}


# The root stops a child of its own; another child leaves the root's session and holds 100 MB: only the cgroup says
# it is the run's.
STOPPED_AND_LEFT = textwrap.dedent("""
    import os, signal, sys, time
    stopped = os.fork()
    if stopped == 0:
        time.sleep(300)
        os._exit(0)
    os.kill(stopped, signal.SIGSTOP)
    if os.fork() == 0:
        os.setsid()
        hold = bytearray(b"\\x01") * (100 << 20)
        with open(sys.argv[1], "a") as f:
            f.write(f"left {os.getpid()}\\n")
        time.sleep(300)
        os._exit(0)
    with open(sys.argv[1], "a") as f:
        f.write(f"stopped {stopped}\\nroot {os.getpid()}\\n")
    time.sleep(300)
""")


def test_a_freeze_that_does_not_settle_stops_each_process_by_signal_and_continues_them(
    tmp_path: Path, runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cgroup without the memory controller whose run forks as it is read is frozen for the reading; where
    `cgroup.freeze` does not say frozen in time (a loaded machine), the cgroup is thawed and its processes are
    stopped by signals, each on its own (a cgroup's processes come with no process group of the run's: one left its
    session). They are read stopped, entered in the ledger meanwhile, then continued, but the one the run had stopped
    itself; and killed, every one, when over the cap."""
    monkeypatch.setenv("ORCA_LOG_STAGE", str(tmp_path / "stage"))
    monkeypatch.setattr(cgroups, "FREEZE_SECONDS", 0.05)
    directory = _delegated(tmp_path, subtree="")
    limits = ControlLimits(memory_mb=64, cgroup=str(directory))
    root, found = runs.start("run", [sys.executable, "-c", STOPPED_AND_LEFT], ready=3, limits=limits)
    deadline = time.monotonic() + 20
    while stat_fields(found["stopped"])[0] != "T":
        assert time.monotonic() < deadline, described(found["stopped"])
        time.sleep(0.01)
    cgroup = directory / f"run-{root}"
    (cgroup / "cgroup.procs").write_text(f"{root}\n{found['left']}\n")
    (cgroup / "cgroup.freeze").write_text("0\n")
    (cgroup / "cgroup.events").write_text("populated 1\nfrozen 0\n")  # never frozen
    ledger_directory = tmp_path / "stage" / ".control-frozen"
    measured: list[tuple[dict[str, str], list[str]]] = []
    real = tree_usage

    def measure(heads: frozenset[int], proc: str = "/proc") -> Any:
        if not measured:  # the run forks while it is read as it runs: its stopped child is in its cgroup now
            (cgroup / "cgroup.procs").write_text(f"{root}\n{found['left']}\n{found['stopped']}\n")
        entries = [path.read_text() for path in ledger_directory.iterdir()] if ledger_directory.exists() else []
        measured.append(({role: stat_fields(pid)[0] for role, pid in found.items()}, entries))
        return real(heads, proc=proc)

    real_freeze = cgroups.freeze
    frozen: list[tuple[bool, str]] = []

    def freeze(path: str) -> bool:
        frozen.append((real_freeze(path), (cgroup / "cgroup.freeze").read_text()))
        return frozen[-1][0]

    monkeypatch.setattr(cap, "tree_usage", measure)
    monkeypatch.setattr(cgroups, "freeze", freeze)
    over = over_cap({7: root}, limits)
    assert over[7] > 100 * MIB
    assert frozen == [(False, "0")]  # asked, not settled in time, and thawed again before the signals
    [(_, unfrozen), (states, entries)] = measured
    assert not unfrozen
    assert states == {"root": "T", "left": "T", "stopped": "T"}, [described(pid) for pid in found.values()]
    [entry] = entries
    assert entry.split("\n")[0].split()[2:4] == ["signals", str(root)] and entry.split("\n")[2] == str(cgroup)
    assert entry.split("\n")[1] == f"{found['stopped']}:{stat_fields(found['stopped'])[19]}"
    # Continued: each process the reading stopped runs again (its stop not pending either); the run's own stays so.
    assert (cgroup / "cgroup.freeze").read_text() == "0"
    assert not list(ledger_directory.iterdir())
    running = {role: stat_fields(pid)[0] for role, pid in found.items() if role != "stopped"}
    assert set(running.values()) <= set("RS"), [described(pid) for pid in found.values()]
    assert not any(procs.stop_pending(pid) for pid in found.values() if pid != found["stopped"])
    assert stat_fields(found["stopped"])[0] == "T"
    watched = [os.pidfd_open(pid) for pid in found.values()]
    try:
        [reason] = enforce_memory({7: root}, limits).values()
        assert reason.startswith("resident memory ") and reason.endswith(" MiB over the 64 MB cap")
        assert all(ended(pidfd) for pidfd in watched), [described(pid) for pid in found.values()]
    finally:
        for pidfd in watched:
            os.close(pidfd)


def test_a_cgroup_stopped_by_signals_by_a_scheduler_now_gone_is_continued_by_the_next(
    tmp_path: Path, runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the test above enters in the ledger, left by a scheduler that ended before it continued the run: the
    next reading continues each process of the cgroup the freeze stopped, not the one the run had stopped itself."""
    monkeypatch.setenv("ORCA_LOG_STAGE", str(tmp_path / "stage"))
    directory = _delegated(tmp_path, subtree="")
    limits = ControlLimits(memory_mb=4096, cgroup=str(directory))
    root, found = runs.start("run", [sys.executable, "-c", STOPPED_AND_LEFT], ready=3, limits=limits)
    cgroup = directory / f"run-{root}"
    (cgroup / "cgroup.procs").write_text(f"{root}\n{found['left']}\n{found['stopped']}\n")
    gone = subprocess.Popen(["true"])
    writer = (gone.pid, stat_fields(gone.pid)[19])  # read while it is a zombie, not yet waited for
    gone.wait()
    deadline = time.monotonic() + 20
    while stat_fields(found["stopped"])[0] != "T":
        assert time.monotonic() < deadline, described(found["stopped"])
        time.sleep(0.01)
    stopped = (found["stopped"], int(stat_fields(found["stopped"])[19]))
    entries = tmp_path / "stage" / ".control-frozen"
    entries.mkdir(parents=True, mode=0o700)
    (entries / "left").write_text(f"{writer[0]} {writer[1]} signals {root} -\n{stopped[0]}:{stopped[1]}\n{cgroup}\n\n")
    for pid in (root, found["left"]):
        os.kill(pid, signal.SIGSTOP)
    while {stat_fields(pid)[0] for pid in (root, found["left"])} != {"T"}:
        assert time.monotonic() < deadline, [described(pid) for pid in found.values()]
        time.sleep(0.01)
    assert over_cap({7: root}, limits) == {}
    assert {role: stat_fields(pid)[0] in "RS" for role, pid in found.items()} == {
        "root": True, "left": True, "stopped": False
    }, [described(pid) for pid in found.values()]
    assert not list(entries.iterdir())


# --- on this machine's cgroup v2 hierarchy --------------------------------------------------------------------------

HOLDER = textwrap.dedent("""
    import os, sys, time
    hold = bytearray(b"\\x01") * (100 << 20)
    with open(sys.argv[-1], "a") as f:
        f.write(f"{sys.argv[1]} {os.getpid()}\\n")
    time.sleep(300)
""")

# The one the process path cannot see: a grandchild that leaves the run's session with `setsid`, drops the run's mark
# from its environment, and whose parent then exits, so that no parent, group, session or mark ties it to the run.
# It holds the 100 MB.
ESCAPER = textwrap.dedent(f"""
    import os, subprocess, sys, time
    if os.fork() == 0:
        os.setsid()
        unmarked = {{name: value for name, value in os.environ.items() if name != "ORCA_CONTROL_RUN"}}
        holder = [sys.executable, "-c", {HOLDER!r}, "escaper", sys.argv[1]]
        subprocess.Popen(holder, start_new_session=True, env=unmarked)
        os._exit(0)
    with open(sys.argv[1], "a") as f:
        f.write(f"root {{os.getpid()}}\\n")
    time.sleep(300)
""")


def _cgroup2_mount() -> Path | None:
    """Where this machine mounts cgroup v2, if it does (the whole tree, or beside v1 as `unified`)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            if after.split()[:1] == ["cgroup2"]:
                return Path(before.split()[4])
    return None


MOUNT = _cgroup2_mount()
OFFERED = set((MOUNT / "cgroup.controllers").read_text().split()) if MOUNT else set()
LIVE = MOUNT is not None and os.geteuid() == 0
needs_v2 = pytest.mark.skipif(not LIVE, reason="needs root and a cgroup v2 hierarchy to make a delegated directory in")
needs_controllers = pytest.mark.skipif(
    not (LIVE and {"memory", "pids"} <= OFFERED),
    reason=f"this machine's cgroup v2 hierarchy ({MOUNT}) offers {' '.join(sorted(OFFERED)) or 'no controller'}, "
    "not memory and pids (they are bound to its cgroup v1 hierarchies)",
)


def _empty(path: Path) -> bool:
    """Whether the cgroup at `path` has no process left (or is gone: removed once it had none)."""
    return not path.exists() or "populated 0" in (path / "cgroup.events").read_text()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Path]:
    """A directory of this machine's cgroup v2 hierarchy, as if delegated to the scheduler; removed afterwards with
    whatever is left in it."""
    assert MOUNT is not None
    if {"memory", "pids"} <= OFFERED:
        with contextlib.suppress(OSError):  # the root cgroup may hold processes and still give children controllers
            (MOUNT / "cgroup.subtree_control").write_text("+memory +pids")
    directory = MOUNT / f"orca-control-test-{os.getpid()}-{tmp_path.name}"
    directory.mkdir()
    yield directory
    for child in [*directory.iterdir(), directory]:
        if child.is_dir():
            (child / "cgroup.kill").write_text("1")
            deadline = time.monotonic() + 20
            while not _empty(child):
                assert time.monotonic() < deadline, f"{child} would not empty"
                time.sleep(0.02)
            child.rmdir()


@needs_v2
def test_live_a_run_in_its_cgroup_is_measured_and_killed_with_what_no_session_holds(live: Path, runs: Runs) -> None:
    limits = ControlLimits(memory_mb=64, cgroup=str(live))
    root, found = runs.start("escaper", [sys.executable, "-c", ESCAPER], ready=2, limits=limits)
    escaper = os.pidfd_open(found["escaper"])
    try:
        cgroup = live / f"run-{root}"
        assert {int(pid) for pid in (cgroup / "cgroup.procs").read_text().split()} >= {root, found["escaper"]}
        # Without its cgroup the run would not be over: nothing but the cgroup ties the escaper to it.
        assert b"ORCA_CONTROL_RUN=" not in Path(f"/proc/{found['escaper']}/environ").read_bytes()
        assert over_cap({7: root}, ControlLimits(memory_mb=64)) == {}
        assert over_cap({7: root}, limits)[7] > 100 * MIB
        reasons = enforce_memory({7: root}, limits)
        assert list(reasons) == [7]
        assert ended(escaper), "the escaper was not killed"
        assert runs.started[0].wait(timeout=20) == -9
        deadline = time.monotonic() + 20
        while not _empty(cgroup):  # the same call may have removed it, if its processes ended in time
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert enforce_memory({}, limits) == {}
        assert not cgroup.exists(), "an empty run's cgroup was not removed"
    finally:
        os.close(escaper)


CHAIN = textwrap.dedent("""
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        while True:
            if os.fork() != 0:
                os._exit(0)
            os.setsid()
    hold = bytearray(b"\\x01") * (100 << 20)
    with open(sys.argv[1], "a") as f:
        f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")
"""A chain that leaves its session at every generation: only a cgroup holds it."""


@needs_v2
def test_live_a_chain_leaving_its_session_each_generation_is_killed_by_its_cgroup(live: Path, runs: Runs) -> None:
    limits = ControlLimits(memory_mb=64, cgroup=str(live))
    for round_ in range(10):
        root, _ = runs.start(f"chain-{round_}", [sys.executable, "-c", CHAIN], ready=1, limits=limits)
        cgroup = live / f"run-{root}"
        assert list(enforce_memory({7: root}, limits)) == [7]
        deadline = time.monotonic() + 20
        while not _empty(cgroup):
            assert time.monotonic() < deadline, f"round {round_}: the chain escaped its cgroup's kill"
            time.sleep(0.02)


@needs_controllers
def test_live_the_kernel_ends_a_run_at_its_memory_max(live: Path, runs: Runs) -> None:
    limits = ControlLimits(memory_mb=64, cgroup=str(live))
    process = start_run([sys.executable, "-c", HOLDER, "root", "/dev/null"], [], limits, str(live.parent / "x.log"))
    runs.started.append(process)
    assert process.wait(timeout=60) == -9  # killed by the kernel at memory.max, before any reading
    assert enforce_memory({7: process.pid}, limits) == {7: kernel_cap_reason(64)}


@needs_controllers
def test_live_a_fork_bomb_is_held_by_pids_max_and_killed_whole(live: Path, runs: Runs) -> None:
    limits = ControlLimits(memory_mb=4096, max_pids=100, cgroup=str(live))
    process = start_run(["bash", "-c", "b(){ b|b& }; b"], [], limits, str(runs.tmp_path / "bomb.log"))
    runs.started.append(process)
    cgroup = live / f"run-{process.pid}"
    deadline = time.monotonic() + 60
    while int((cgroup / "pids.current").read_text()) < 90:
        assert time.monotonic() < deadline, "the bomb did not grow"
        time.sleep(0.05)
    assert int((cgroup / "pids.current").read_text()) <= 100
    cgroups.kill(str(cgroup))
    deadline = time.monotonic() + 20
    while not _empty(cgroup):
        assert time.monotonic() < deadline, "part of the bomb survived"
        time.sleep(0.05)
