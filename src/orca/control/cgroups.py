"""A run's own cgroup, where the scheduler is given a cgroup v2 directory of its own (`ORCA_CONTROL_CGROUP`).

A cgroup holds every process forked inside it, whatever it does after: an orphan, a `setsid` child, a fork bomb.
So where the directory is delegated (writable by the scheduler, as systemd's `Delegate=yes` makes a service's), each
run is started in `<directory>/run-<root pid>`, made by the run's own process between fork and exec, and the
kernel's numbers and controls are used: `memory.max` is the cap and `pids.max` the processes (where the directory
offers the memory and pids controllers), `memory.current` and `memory.events` what the run uses and whether it
reached the cap, `cgroup.kill` (Linux 5.14; before it `cgroup.freeze`, then a SIGKILL to each process) what ends
it. A run's cgroup with no process left is removed by the next `enforce_memory`.

The files are read and written as the kernel's cgroup-v2 documentation describes them (`cgroup_text` parses them).
Every path here can be a fixture tree: a file the kernel would offer is written with `O_CREAT`, which cgroupfs
refuses for a file it does not have.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

from orca.control import cgroup_text
from orca.control.cgroup_text import RUN_PREFIX
from orca.control.rules import ControlLimits

_READ = 1 << 20
"""More than any of these files holds but `cgroup.procs` of a very large run, which is read on to its end."""
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NOCTTY
FREEZE_SECONDS = 1.0
"""How long a cgroup is waited for to be frozen before it is read by its processes' signals instead."""
_FREEZE_POLL_SECONDS = 0.002


def read(path: str) -> str | None:
    """A cgroup file's text; None when it cannot be read. Non-blocking, so a FIFO in a fixture tree never waits."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except (OSError, ValueError):
        return None
    try:
        chunks: list[bytes] = []
        while chunk := os.read(descriptor, _READ):
            chunks.append(chunk)
        return b"".join(chunks).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(descriptor)


def write(path: str, text: str) -> None:
    """One write of `text` to a cgroup file, as `echo text > path` makes it; OSError when the kernel refuses it."""
    descriptor = os.open(path, _WRITE_FLAGS, 0o644)
    try:
        os.write(descriptor, text.encode("ascii"))
    finally:
        os.close(descriptor)


def prepare(directory: str) -> frozenset[str]:
    """Checks that `directory` is a cgroup v2 directory the scheduler can write, and asks it to give its children
    the memory and pids controllers where it offers them; returns those its children have. OSError naming the
    directory and why when it cannot hold runs.

    A directory that still holds processes of its own cannot give its children controllers (cgroup v2's "no
    internal processes" rule): its runs then get a cgroup each all the same, measured by their processes' resident
    memory as runs without one are."""
    listed = os.path.join(directory, "cgroup.controllers")
    offered = cgroup_text.controllers(read(listed))
    if not offered and not os.path.isfile(listed):
        why = "ORCA_CONTROL_CGROUP: not a cgroup v2 directory (no cgroup.controllers)"
        raise OSError(errno.ENOTDIR, why, directory)
    if not os.access(directory, os.W_OK):
        raise PermissionError(errno.EACCES, "ORCA_CONTROL_CGROUP: not writable by the scheduler", directory)
    subtree = os.path.join(directory, "cgroup.subtree_control")
    enabled = cgroup_text.controllers(read(subtree))
    wanted = [name for name in cgroup_text.CONTROLLERS if name in offered and name not in enabled]
    if wanted:
        with contextlib.suppress(OSError):
            write(subtree, " ".join(f"+{name}" for name in wanted))
        enabled = cgroup_text.controllers(read(subtree))
    return frozenset(cgroup_text.CONTROLLERS) & enabled


def joiner(directory: str, limits: ControlLimits, enabled: frozenset[str]) -> Callable[[], None]:
    """What the run's process does between fork and exec to be in a cgroup of its own: make `run-<its pid>` (or
    take one left empty by an earlier run of that pid), set its limits, and move itself in, so that nothing it
    runs ever starts outside. Only system calls on text made beforehand: the scheduler may have threads."""
    prefix = os.path.join(directory, RUN_PREFIX)
    written = [(name, text.encode("ascii")) for name, text, _ in cgroup_text.settings(limits, enabled)]
    required = {name for name, _, needed in cgroup_text.settings(limits, enabled) if needed}

    def join() -> None:
        path = prefix + str(os.getpid())
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o755)
        for name, text in written:
            try:
                descriptor = os.open(f"{path}/{name}", _WRITE_FLAGS, 0o644)
                try:
                    os.write(descriptor, text)
                finally:
                    os.close(descriptor)
            except OSError:
                if name in required:
                    raise
        descriptor = os.open(f"{path}/cgroup.procs", _WRITE_FLAGS, 0o644)
        try:
            os.write(descriptor, b"0")  # "0": the writing process itself
        finally:
            os.close(descriptor)

    return join


def of_run(directory: str, root: int) -> str | None:
    """The cgroup of the run whose root is `root`, None when it has none there."""
    path = os.path.join(directory, f"{RUN_PREFIX}{root}")
    return path if os.path.isdir(path) else None


def processes(path: str) -> frozenset[int]:
    """Every process in the cgroup at `path` and the cgroups under it (a run may make some)."""
    found: set[int] = set()
    for directory, _, _ in os.walk(path):
        found |= cgroup_text.pids(read(os.path.join(directory, "cgroup.procs")))
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Usage:
    """What the kernel says of a run's cgroup."""

    current: int | None
    """`memory.current`: every byte charged to the run (its page cache too); None without the memory controller."""
    peak: int | None
    """`memory.peak` (Linux 5.19): the most it ever was."""
    reached_cap: bool
    """`memory.events`: its memory reached `memory.max` (`oom`)."""


def usage(path: str) -> Usage:
    current = cgroup_text.number(read(os.path.join(path, "memory.current")))
    return Usage(
        current=current,
        peak=cgroup_text.number(read(os.path.join(path, "memory.peak"))),
        reached_cap=current is not None and cgroup_text.reached_cap(cgroup_text.keyed(read(f"{path}/memory.events"))),
    )


def freeze(path: str) -> bool:
    """Freezes the cgroup at `path` and those under it (`cgroup.freeze`, Linux 5.2): every process in them, one
    forked meanwhile included. True once `cgroup.events` says it is frozen; False where it cannot be (no such
    file, or not frozen within `FREEZE_SECONDS`: it is then thawed again)."""
    control = os.path.join(path, "cgroup.freeze")
    if not os.path.isfile(control):
        return False
    try:
        write(control, "1")
    except OSError:
        return False
    deadline = time.monotonic() + FREEZE_SECONDS
    while cgroup_text.keyed(read(os.path.join(path, "cgroup.events"))).get("frozen") != 1:
        if time.monotonic() > deadline:
            thaw(path)
            return False
        time.sleep(_FREEZE_POLL_SECONDS)
    return True


def thaw(path: str) -> None:
    with contextlib.suppress(OSError):
        write(os.path.join(path, "cgroup.freeze"), "0")


def kill(path: str) -> int:
    """SIGKILLs every process in the cgroup at `path` and under it: `cgroup.kill` where the kernel has it (which
    reaches a process being forked too), else frozen (`cgroup.freeze`), each process killed, thawed. Returns how
    many there were."""
    found = processes(path)
    kill_file = os.path.join(path, "cgroup.kill")
    if os.path.exists(kill_file):
        with contextlib.suppress(OSError):
            write(kill_file, "1")
            return len(found)
    freeze = os.path.join(path, "cgroup.freeze")
    with contextlib.suppress(OSError):
        write(freeze, "1")
    # Frozen, none of them can fork or end by itself: the pids read now are still theirs.
    for pid in processes(path):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        write(freeze, "0")
    return len(found)


def sweep(directory: str) -> None:
    """Removes each run's cgroup that has no process left (`cgroup.events`: `populated 0`)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        if name.startswith(RUN_PREFIX) and cgroup_text.keyed(read(f"{path}/cgroup.events")).get("populated") == 0:
            with contextlib.suppress(OSError):
                os.rmdir(path)
