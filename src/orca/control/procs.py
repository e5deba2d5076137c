"""Finding processes in /proc and ending them, for a run's memory cap and for a secret's fetch command.

The table of every process comes from one pass over /proc (`orca.sample.process_stats`); which of them are a run's
is `members`' pure decision. Ending them freezes first: pass after pass, each of the run's process groups is
stopped whole (a signal to a group reaches a process being forked in it too) and every other process found is
stopped on its own, until a pass finds no process not yet stopped; then all of them are killed. Each process is
held by a pidfd opened before its start time is checked again, so a signal never reaches a pid reused since the
pass that found it. The scheduler's own process, group and session are never signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Mapping

from orca.control.members import Members, ProcId, proc_id
from orca.sample import process_stat, process_stats

FREEZE_PASSES = 64
"""A bound on the passes, so that ending a run always ends; a run forking faster than a pass can read /proc and
leaving its groups with `setsid` each time is what only a cgroup catches (`cgroups`)."""

Finder = Callable[[Mapping[int, ProcId]], Members]
"""What a table of every process says a run's processes are."""


def process_table(proc: str = "/proc") -> dict[int, ProcId]:
    """Every process's `ProcId`, from one pass over `proc`; a process that ends mid-pass is left out."""
    table: dict[int, ProcId] = {}
    for pid, data in process_stats(proc).items():
        found = proc_id(data)
        if found is not None:
            table[pid] = found
    return table


def start_of(pid: int, proc: str = "/proc") -> int | None:
    """The start time of process `pid`, None when there is none (or pid names no single process)."""
    data = process_stat(pid, proc)
    found = None if data is None else proc_id(data)
    return None if found is None else found.start


def own_ids() -> frozenset[int]:
    """This process's pid, process group and session: never a run's, whatever a table says."""
    return frozenset({os.getpid(), os.getpgrp(), os.getsid(0)})


class Held:
    """One process, by a pidfd where the kernel has them (Linux 5.3+), else by pid checked just before use."""

    def __init__(self, proc: str, pid: int, start: int, pidfd: int) -> None:
        self._proc, self._pid, self._start, self._pidfd = proc, pid, start, pidfd

    @classmethod
    def of(cls, pid: int, start: int, proc: str = "/proc") -> Held | None:
        """`pid` if it is still the process that started at `start`; None if it ended or the pid is another's."""
        pidfd = -1
        with contextlib.suppress(OSError, AttributeError):
            pidfd = os.pidfd_open(pid)
        # Checked after the pidfd is open: if `pid` is still the process found, the pidfd holds that process.
        if start_of(pid, proc) != start:
            if pidfd >= 0:
                os.close(pidfd)
            return None
        return cls(proc, pid, start, pidfd)

    def send(self, signal_number: int) -> None:
        with contextlib.suppress(OSError):
            if self._pidfd >= 0:
                signal.pidfd_send_signal(self._pidfd, signal_number)
            elif start_of(self._pid, self._proc) == self._start:
                os.kill(self._pid, signal_number)

    def close(self) -> None:
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1


def _signal_groups(groups: frozenset[int], signal_number: int) -> None:
    for group in groups:
        with contextlib.suppress(OSError):
            os.killpg(group, signal_number)


def end_all(find: Finder, proc: str = "/proc") -> int:
    """Freezes, then SIGKILLs, every process `find` names in a table of every process (see the module docstring);
    returns how many processes were stopped and killed.

    A group is signalled only while a pass has just found a process in it, and the kernel does not give a group's
    id to another while the group has a process: it is the run's group that is signalled."""
    own = own_ids()
    held: dict[int, Held] = {}
    groups: frozenset[int] = frozenset()
    try:
        for _ in range(FREEZE_PASSES):
            table = process_table(proc)
            found = find(table)
            groups = found.groups - own
            _signal_groups(groups, signal.SIGSTOP)
            new = [pid for pid in found.pids if pid not in held and pid not in own and not table[pid].ended]
            for pid in new:
                process = Held.of(pid, table[pid].start, proc)
                if process is not None:
                    held[pid] = process
                    process.send(signal.SIGSTOP)
            if not new:
                break
    finally:
        _signal_groups(groups, signal.SIGKILL)
        for process in held.values():
            process.send(signal.SIGKILL)
            process.close()
    return len(held)


def pipe_holders(inode: int, proc: str = "/proc", *, writing: bool = False) -> frozenset[int]:
    """The processes other than this one holding a descriptor of the pipe whose inode is `inode` (its two ends
    share it); with `writing`, only those holding it open for writing. Only processes whose descriptors this user
    may list are seen, which a child of ours is."""
    link = f"pipe:[{inode}]"
    me = os.getpid()
    holders: set[int] = set()
    try:
        names = os.listdir(proc)
    except OSError:
        return frozenset()
    for name in names:
        if not (name.isdigit() and name.isascii()) or int(name) == me:
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"{proc}/{name}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"{proc}/{name}/fd/{fd}") == link and (
                        not writing or _open_for_writing(f"{proc}/{name}/fdinfo/{fd}")
                    ):
                        holders.add(int(name))
                        break
    return frozenset(holders)


def _open_for_writing(fdinfo: str) -> bool:
    """Whether a descriptor's `fdinfo` (proc(5): `flags:` in octal) says it was opened to write."""
    descriptor = os.open(fdinfo, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        text = os.read(descriptor, 4096)
    finally:
        os.close(descriptor)
    for line in text.splitlines():
        key, _, value = line.partition(b":")
        if key == b"flags" and value.strip().isdigit():
            return int(value.strip(), 8) & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR)
    return False
