"""Real processes for the tests of a run's memory cap and of fetch commands: started, watched from /proc by the test
itself (never through the code under test), and every one of them ended afterwards."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from orca.control import ControlLimits, start_run

MIB = 1 << 20


def stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat's fields after comm, numbered so that index 0 is proc(5)'s field 3 (`state`)."""
    data = Path(f"/proc/{pid}/stat").read_text()
    return data[data.rfind(")") + 2 :].split()


def described(pid: int) -> str:
    """Where a test found process `pid`, for its failure message: its name, state and parent (proc(5) fields 2, 3,
    4) and the signals pending for it (`SigPnd`, `ShdPnd` of its status, in hexadecimal: a stop sent and not yet
    taken shows there), or that it is gone."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return f"{pid} gone"
    fields = data[data.rfind(")") + 2 :].split()
    said = f"{pid} {data[data.find('(') : data.rfind(')') + 1]} state {fields[0]}, parent {fields[1]}"
    with contextlib.suppress(OSError):
        pending = [line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if "Pnd:" in line]
        said += ", " + " ".join(line.replace("\t", " ") for line in pending)
    return said


def in_session_or_group(ids: set[int]) -> set[int]:
    """The live (not zombie) processes whose session or process group (proc(5) fields 6, 5) is one of `ids`."""
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                fields = stat_fields(int(name))
                if fields[0] not in "ZX" and (int(fields[2]) in ids or int(fields[3]) in ids):
                    found.add(int(name))
    return found


def end_sessions(ids: set[int]) -> None:
    """SIGKILLs every process in the sessions or groups `ids`, again until none is left: the test's own clean-up.

    Each group whole first, which no process forking in it escapes (a scan of /proc can miss a fast chain); `ids`
    are the roots' pids, their groups' ids, not yet reused since the roots are not yet waited for."""
    for _ in range(200):
        for group in ids:
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)
        left = in_session_or_group(ids)
        if not left:
            return
        for pid in left:
            with contextlib.suppress(OSError):
                pidfd = os.pidfd_open(pid)
                try:
                    fields = stat_fields(pid)  # still that process, held by the pidfd opened first
                    if int(fields[2]) in ids or int(fields[3]) in ids:
                        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                finally:
                    os.close(pidfd)
        time.sleep(0.02)
    raise AssertionError(f"processes of {ids} would not end")


def ended(pidfd: int, timeout: float = 20) -> bool:
    """Whether the process a pidfd holds has ended (a pidfd reads as ready when it has)."""
    ready, _, _ = select.select([pidfd], [], [], timeout)
    return bool(ready)


def wait_for_lines(path: Path, count: int, log: Path, timeout: float = 60) -> dict[str, int]:
    """`<role> <pid>` lines a run's processes write when ready, once there are `count` of them."""
    deadline = time.monotonic() + timeout
    while len(path.read_text().splitlines() if path.exists() else []) < count:
        assert time.monotonic() < deadline, log.read_text() if log.exists() else f"{path} was not written"
        time.sleep(0.02)
    return {role: int(pid) for role, pid in (line.split() for line in path.read_text().splitlines())}


class Runs:
    """The runs a test starts; every process in their sessions and groups is ended after the test."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.started: list[subprocess.Popen[bytes]] = []
        self.held: list[int] = []

    def start(
        self, name: str, argv: Sequence[str], ready: int, limits: ControlLimits | None = None
    ) -> tuple[int, dict[str, int]]:
        """Starts `argv` as a run, with the path of its `<role> <pid>` file as one more argument, and waits until
        `ready` such lines are there. Returns the root's pid and the roles'."""
        pids = self.tmp_path / f"{name}.pids"
        log = self.tmp_path / f"{name}.log"
        process = start_run([*argv, str(pids)], [], limits or ControlLimits(), str(log))
        self.started.append(process)
        self.held.append(os.pidfd_open(process.pid))
        found = wait_for_lines(pids, ready, log)
        for pid in found.values():
            with contextlib.suppress(OSError):
                self.held.append(os.pidfd_open(pid))
        return process.pid, found

    def end(self) -> None:
        for pidfd in self.held:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            os.close(pidfd)
        end_sessions({process.pid for process in self.started})
        for process in self.started:
            process.wait()
