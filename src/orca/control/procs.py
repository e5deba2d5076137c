"""Finding processes in /proc and stopping or ending them, for a run's memory cap and for a secret's fetch command.

The table of every process comes from one pass over /proc (`orca.sample.process_stats`); which of them are a run's
is `members`' pure decision. A run is frozen
before it is read or killed: pass after pass, each of the run's process groups is stopped whole (a signal to a group
reaches a process being forked in it too) and every other process found is stopped on its own, until a pass made
after every group was stopped finds every process of the run stopped or exited (an exiting process cannot be
stopped, and its children go to another parent). Then all of them are killed, or continued (each but those stopped
before the first pass). Each process is held by a pidfd opened before its start time is checked again, so a signal
never reaches a pid reused since the pass that found it. The scheduler's own process, group and session are never
signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping

from orca.control.members import NONE, Members, ProcId, proc_id
from orca.sample import process_stat, process_stats

FREEZE_PASSES = 64
"""A bound on the passes, so that freezing a run always ends; a run forking faster than a pass can read /proc and
leaving its groups with `setsid` each time is what only a cgroup catches (`cgroups`)."""
PASS_PAUSE = 0.001
"""Seconds between two passes while only processes still running keep a freeze from settling: one in the middle of a
fork or an exit needs the CPU to get to its stop, which passes run back to back would keep from it on a busy
machine."""
RELEASE_WAIT = 0.5
"""Seconds at most that the release of a freeze that did not settle keeps looking for a child its stop reached in the
middle of a fork (`Frozen._continue_stragglers`)."""
Finder = Callable[[Mapping[int, ProcId]], Members]
"""What a table of every process says a run's processes are."""
Before = Callable[[frozenset[tuple[int, int]]], None]
"""What is done before a run is first stopped, given the processes (pid, start) it had stopped itself."""


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


STOPS = frozenset({signal.SIGSTOP, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU})
"""The signals that stop a process (signal(7)): one pending is a stop taken once the process next runs (the last
three where it neither catches nor blocks them), and a SIGCONT sent meanwhile cancels it."""
_STOP_BITS = sum(1 << (number - 1) for number in STOPS)


def stopping(status: bytes) -> bool:
    """Whether a `/proc/<pid>/status` text (proc_pid_status(5)) shows a stop signal pending: in `SigPnd` (sent to
    the thread) or `ShdPnd` (sent to the process or its group, which a child forked as a signal went to its group
    is born with). Each is a mask in hexadecimal, signal n its bit n - 1. A line that does not read as one counts
    as nothing pending.

    >>> stopping(b"State:\\tR (running)\\nSigPnd:\\t0000000000000000\\nShdPnd:\\t0000000000040000\\n")
    True
    >>> stopping(b"State:\\tS (sleeping)\\nSigPnd:\\t0000000000000000\\nShdPnd:\\t0000000000000000\\n")
    False
    """
    for line in status.splitlines():
        key, _, value = line.partition(b":")
        if key in (b"SigPnd", b"ShdPnd"):
            try:
                mask = int(value.strip(), 16)
            except ValueError:
                continue
            if mask & _STOP_BITS:
                return True
    return False


def stop_pending(pid: int, proc: str = "/proc") -> bool:
    """Whether process `pid` has a stop signal sent and not yet taken (`stopping`): one not running since, a loaded
    machine's, stops once it runs. False when it cannot be read."""
    try:
        with open(f"{proc}/{pid}/status", "rb") as status:
            return stopping(status.read())
    except OSError:
        return False


def stopped_or_stopping(pid: int, start: int, proc: str = "/proc") -> bool:
    """Whether the process `pid` that started at `start` is stopped, or has a stop pending it will take once it
    runs. Its pending signals are read before its state: a stop taken between the two reads then shows in the
    state, where the other order would see it in neither. False when it is gone or the pid is another's."""
    pending = stop_pending(pid, proc)
    data = process_stat(pid, proc)
    found = None if data is None else proc_id(data)
    return found is not None and found.start == start and (pending or found.stopped)


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


class Frozen:
    """A run stopped whole (see the module docstring), until it is killed or continued: `release`."""

    def __init__(self, proc: str = "/proc") -> None:
        self._proc = proc
        self._held: dict[int, Held] = {}
        self._already_stopped: set[int] = set()
        self._groups: set[int] = set()
        self._settled = False
        self.table: dict[int, ProcId] = {}
        """The last pass's table: every process of the run in it is stopped."""
        self.found: Members = NONE
        """The run's processes and groups in the last pass."""

    def stop(self, find: Finder, before: Before | None = None) -> None:
        """Stops what `find` names, pass after pass, until a pass made after all its groups were stopped finds every
        process of it stopped or exited (or `FREEZE_PASSES` passes). `before` is given the processes (pid, start)
        the run had stopped itself, before the first signal is sent; what it raises stops nothing."""
        own = own_ids()
        for passes in range(FREEZE_PASSES):
            self.table = process_table(self._proc)
            self.found = find(self.table)
            if passes == 0 and before is not None:
                before(frozenset((pid, self.table[pid].start) for pid in self.live() if self.table[pid].stopped))
            groups = self.found.groups - own
            # A pass read before one of these groups was stopped may have missed a process forking in it.
            settled = groups <= self._groups
            _signal_groups(groups, signal.SIGSTOP)
            self._groups |= groups
            new = [pid for pid in self.live() - self._held.keys() if pid not in own]
            for pid in new:
                entry = self.table[pid]
                process = Held.of(pid, entry.start, self._proc)
                if process is not None:
                    self._held[pid] = process
                    process.send(signal.SIGSTOP)
                    if passes == 0 and entry.stopped:  # before any signal of ours: the run stopped it
                        self._already_stopped.add(pid)
            # A process that ended before it was held may have forked first: only a pass with nothing new settles;
            # and one still running (its stop not yet taken, or exiting, which no signal stops) can still change.
            running = [pid for pid in self.live() if not self.table[pid].stopped]
            if settled and not new:
                if not running:
                    self._settled = True
                    return
                time.sleep(PASS_PAUSE)

    def live(self) -> frozenset[int]:
        """The run's processes in the last pass that had not exited."""
        return frozenset(pid for pid in self.found.pids if not self.table[pid].ended)

    def release(self, signal_number: int) -> int:
        """SIGKILL: kills every process stopped, and its groups whole; SIGCONT: continues each but those stopped
        before the first pass. Unless the last pass found every process of the run's groups stopped, every other
        process in them is continued too: the groups whole when the run had stopped none of its own, else one by
        one, as a SIGCONT to a group would continue a process the run had stopped. Returns how many processes were
        held."""
        if signal_number == signal.SIGKILL or not (self._settled or self._already_stopped):
            _signal_groups(frozenset(self._groups), signal_number)
        for pid, process in self._held.items():
            if signal_number != signal.SIGCONT or pid not in self._already_stopped:
                process.send(signal_number)
            process.close()
        if signal_number == signal.SIGCONT and self._groups:
            self._continue_stragglers(every=not self._settled and bool(self._already_stopped))
        count = len(self._held)
        self._held.clear()
        self._groups.clear()
        return count

    def _continue_stragglers(self, every: bool) -> None:
        """Continues each process of the run's groups still stopped but not by the run, or about to be: one a signal
        to its group stopped after the last pass read /proc (a chain's newest generation, among many exited ones),
        which no pass held, and one forked as that signal went to its group, born with it pending (`stopping`) and
        not run since; else the next reading would find it stopped and take it for one the run stopped itself.
        Each is read again, its pending signals before its state (`stopped_or_stopping`). With `every` (the freeze
        did not settle, and its groups were not continued whole), each one not yet stopped too: a stop sent to its
        group may still be pending, taken once it next runs, and a SIGCONT cancels it.

        A freeze that did not settle may also have ended while a process of its groups was in the middle of a fork
        (running, `busy`). The kernel gives the child every signal sent to the group during the fork, the stop and
        the continue alike, once the fork ends: the child takes the continue first (the lower number), then stops,
        with nothing pending, after this release has looked. So the release looks again until each process busy
        at its first look has been seen otherwise, or `RELEASE_WAIT` has passed, and once more after that."""
        deadline = time.monotonic() + RELEASE_WAIT
        busy: dict[int, int] | None = None
        last = self._settled
        while True:
            ours = {
                pid: entry
                for pid, entry in process_table(self._proc).items()
                if entry.pgrp in self._groups and not entry.ended
            }
            for pid, entry in ours.items():
                if (
                    pid not in self._held
                    and pid not in self._already_stopped
                    and (every or stopped_or_stopping(pid, entry.start, self._proc))
                ):
                    process = Held.of(pid, entry.start, self._proc)
                    if process is not None:
                        process.send(signal.SIGCONT)
                        process.close()
            if last:
                return
            busy = {
                pid: entry.start
                for pid, entry in ours.items()
                if entry.busy and (busy is None or busy.get(pid) == entry.start)
            }
            every = False
            last = not busy or time.monotonic() > deadline
            if not last:
                time.sleep(PASS_PAUSE)


def _signal_groups(groups: frozenset[int], signal_number: int) -> None:
    for group in groups:
        with contextlib.suppress(OSError):
            os.killpg(group, signal_number)


def end_all(find: Finder, proc: str = "/proc", *, before: Before | None = None) -> int:
    """Freezes, then SIGKILLs, every process `find` names in a table of every process (see the module docstring),
    whatever happens meanwhile; returns how many processes were stopped and killed.

    A group is signalled only while a pass has found a process in it, and the kernel does not give a group's id to
    another while the group has a process: it is the run's group that is signalled."""
    frozen = Frozen(proc)
    try:
        frozen.stop(find, before)
    finally:
        killed = frozen.release(signal.SIGKILL)
    return killed


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
