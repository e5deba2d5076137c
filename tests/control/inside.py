"""What a scenario run inside a pid namespace of its own (`namespace`) uses: it starts runs, watches the
namespace's /proc itself (never through the code under test), and prints what it saw as one JSON object."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from orca.control import ControlLimits, start_run
from tests.control.processes import described, stat_fields, wait_for_lines

CAP_64 = ControlLimits(memory_mb=64)


def start(work: Path, name: str, code: str, ready: int) -> tuple[subprocess.Popen[bytes], dict[str, int]]:
    """Starts the Python `code` as a run, with the path of its `<role> <pid>` file as its argument, and waits for
    `ready` such lines."""
    pids, log = work / f"{name}.pids", work / f"{name}.log"
    process = start_run([sys.executable, "-c", code, str(pids)], [], ControlLimits(), str(log))
    return process, wait_for_lines(pids, ready, log)


def gone(pid: int, timeout: float = 20) -> bool:
    """Whether process `pid` has disappeared (ended and been reaped) within `timeout`."""
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def status(process: subprocess.Popen[bytes]) -> int | None:
    """The root's exit status once it was killed; None (and killed now) when it was not within a while."""
    try:
        return process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


def live() -> set[int]:
    """Every live process of the namespace but its init and this scenario."""
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (1, os.getpid()):
            try:
                if stat_fields(int(name))[0] not in "ZX":
                    found.add(int(name))
            except (OSError, IndexError):
                pass  # ended meanwhile
    return found


def left(timeout: float = 20) -> list[int]:
    """What is still alive in the namespace once nothing is, or after `timeout`."""
    deadline = time.monotonic() + timeout
    while (found := live()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return sorted(found)


def last_pid() -> int | None:
    """The pid this namespace gave last (`/proc/sys/kernel/ns_last_pid`, Linux 3.3 with checkpoint/restore): every
    fork moves it, whatever pid the child gets, so a fork shows even when its pid is one a process had before, or
    its process is gone before a listing of /proc reaches it. None where the kernel has no such file."""
    try:
        return int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    except (OSError, ValueError):
        return None


def _births() -> set[tuple[int, int]]:
    """(pid, start) of every live process of the namespace but its init and this scenario: a pid reused is another
    birth."""
    found: set[tuple[int, int]] = set()
    for pid in live():
        with contextlib.suppress(OSError, IndexError, ValueError):  # ended meanwhile
            found.add((pid, int(stat_fields(pid)[19])))
    return found


def forking(timeout: float = 10) -> bool:
    """Whether a process forks within `timeout`: a chain forks on, it was not left stopped. Read from the last pid
    the namespace gave, else (a kernel without it) from a process seen that was not there, by pid and start."""
    first = last_pid()
    before = _births() if first is None else set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (last_pid() != first) if first is not None else bool(_births() - before):
            return True
        time.sleep(0.01)
    return False


def where(log: Path | None = None) -> list[str]:
    """For a failing test's message: the last pid given and how many processes have exited unreaped (zombies, which
    hold their pids), then each live process of the namespace but its init and this scenario as `described` gives it
    (name, state, parent): which one was left stopped, and whose child it is; then the end of the run's `log`, where
    a process that ended by an exception (a fork refused) wrote its traceback. A pid above the first line's was born
    while the list was made."""
    said = [f"last pid {last_pid()}, {len(_exited())} exited unreaped", *(described(pid) for pid in sorted(live()))]
    if log is not None:
        with contextlib.suppress(OSError):
            said.append(f"log: {log.read_text(errors='replace')[-2000:]}")
    return said


def _exited() -> set[int]:
    """Every process of the namespace that has exited and not been reaped (a zombie)."""
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                if stat_fields(int(name))[0] in "ZX":
                    found.add(int(name))
    return found


def report(facts: dict[str, Any]) -> None:
    print(json.dumps(facts), flush=True)
