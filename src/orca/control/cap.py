"""A control-placed run's memory cap: each run read whole, and killed whole when it is over the cap (docs/behaviour.md
§12.4).

A run is read as it is killed. Where it has a cgroup of its own with the memory controller, by the kernel's numbers
(`cgroups`). Else by its processes, frozen first: those of its cgroup by the kernel (`cgroup.freeze`, where it can),
else, and for a run without a cgroup (`members`: its root's session and group, what earlier readings found as its
own, their descendants), by signals (`procs.Frozen`). A chain of processes that fork and exit, which a pass over
/proc sees one at a time or not at all, is then read whole, and what was read is what is killed. Their resident
memory is summed by one `tree_usage`; then the run is killed when it is over the cap (still frozen, or its cgroup
whole), or continued.
"""

from __future__ import annotations

import contextlib
import errno
import signal
from collections.abc import Mapping
from dataclasses import dataclass

from orca.control import cgroups, ledger, procs
from orca.control.members import Members, ProcId, run_members, tops
from orca.control.rules import ControlLimits, cap_reason, kernel_cap_reason
from orca.sample import tree_usage


@dataclass(frozen=True, slots=True)
class _Reading:
    """One run as one reading found it."""

    resident: int
    """Bytes: its cgroup's `memory.current` (its peak, when the kernel ended it), else its processes' resident
    memory."""
    kernel_ended: bool = False
    """Its cgroup's memory reached `memory.max`: the kernel ended it."""

    def over(self, limits: ControlLimits) -> bool:
        return self.kernel_ended or self.resident > limits.memory_bytes

    def reason(self, limits: ControlLimits) -> str:
        if self.kernel_ended and self.resident <= limits.memory_bytes:
            return kernel_cap_reason(limits.memory_mb)
        return cap_reason(self.resident, limits.memory_mb)


def _tally(table: Mapping[int, ProcId], live: frozenset[int], proc: str) -> _Reading | None:
    """The resident memory of the processes `live` (none of them forking: frozen); None when there are none."""
    if not live:
        return None
    heads = tops(table, live)
    usage = tree_usage(heads, proc=proc)
    return _Reading(sum(usage[pid][0] for pid in heads if pid in usage))


def _known(table: Mapping[int, ProcId], found: Members) -> frozenset[tuple[int, int, bool]]:
    """The processes of `found`, each by its pid, start time and whether it had exited (a zombie)."""
    return frozenset((pid, table[pid].start, table[pid].ended) for pid in found.pids)


def read_unstopped(find: procs.Finder, proc: str) -> tuple[bool, _Reading | None]:
    """The processes `find` names read as they run, between two passes over /proc: (True, the reading) when both
    passes find the same processes (by pid and start time, exited or not) and a live one among them, so nothing
    forked or left while their memory was read; (False, None) when the run changed meanwhile, or shows nothing but
    exited processes (a chain's live process can slip through both passes, each time between the listing of /proc
    and the read of its stat), and only a frozen reading sees it whole."""
    before = procs.process_table(proc)
    known = _known(before, find(before))
    live = frozenset(pid for pid, _, ended in known if not ended)
    if known and not live:
        return False, None
    reading = _tally(before, live, proc)
    after = procs.process_table(proc)
    return (True, reading) if _known(after, find(after)) == known else (False, None)


def _read_processes(
    find: procs.Finder,
    limits: ControlLimits,
    proc: str,
    record: ledger.Record,
    *,
    enforce: bool,
) -> _Reading | None:
    """The processes `find` names, read whole; with `enforce` killed when over the cap. None when none of them is
    left.

    Read as they run when they stay the same meanwhile (`read_unstopped`) and no kill follows: a run is not stopped
    and continued at every reading, which its processes would see (a parent's SIGCHLD, a call ended by EINTR).
    Else frozen (`_read_frozen`)."""
    settled, reading = read_unstopped(find, proc)
    if settled and not (enforce and reading is not None and reading.over(limits)):
        return reading
    return _read_frozen(find, limits, proc, record, enforce=enforce)


def _read_frozen(
    find: procs.Finder,
    limits: ControlLimits,
    proc: str,
    record: ledger.Record,
    *,
    enforce: bool,
) -> _Reading | None:
    """The processes `find` names, frozen by signals and read; killed with `enforce` when over the cap, else
    continued. None when none of them is left. The freeze is entered in the ledger (`record`) before the first
    signal and leaves it once the run is continued or killed; a freeze that cannot be entered is not made, and
    the OSError saying why is raised."""
    frozen = procs.Frozen(proc)
    ending = signal.SIGCONT
    try:
        frozen.stop(find, record.write)
        reading = _tally(frozen.table, frozen.live(), proc)
        if reading is not None and enforce and reading.over(limits):
            ending = signal.SIGKILL
        return reading
    finally:
        frozen.release(ending)
        record.close()


class Known:
    """What a scheduler's readings found of its runs, for the next ones: each process a reading found as a run's, by
    pid and start time, stays the run's whatever it does after (leave the run's session, lose its parent, write over
    its environment). One per scheduler, given to every `over_cap`, `enforce_memory` and `kill_run`; it holds no
    more than the runs' processes that are there."""

    def __init__(self) -> None:
        self._runs: dict[int, tuple[int | None, dict[int, int]]] = {}
        """root pid -> (the run's start, pid -> start of each process found as the run's)."""

    def of(self, root: int) -> tuple[int | None, dict[int, int]]:
        return self._runs.get(root, (None, {}))

    def note(self, root: int, start: int | None, found: dict[int, int]) -> None:
        if found:
            self._runs[root] = (start, found)
        else:
            self._runs.pop(root, None)


class _Run:
    """A run as this scheduler knows it: its root, its start, and the processes its readings found."""

    def __init__(self, root: int, start: int | None, known: dict[int, int], notes: Known | None) -> None:
        self.root, self.start, self.known, self._notes = root, start, known, notes
        self._live = False

    @classmethod
    def of(cls, root: int, start: int | None, proc: str, notes: Known | None) -> _Run:
        """The run whose root is `root`, started at `start` (None: the start a reading noted, else that of the
        process with that pid). A noted start other than the process's is the run's while a process it noted is
        still there (its root ended and the pid went to another); else the notes are of an earlier run."""
        noted_start, noted = notes.of(root) if notes is not None else (None, {})
        current = procs.start_of(root, proc)
        if start is None:
            start = noted_start if noted_start is not None else current
            if noted_start is not None and noted_start != current and not _any_left(noted, proc):
                start, noted = current, {}
        elif noted_start != start:
            noted = {}
        return cls(root, start, dict(noted), notes)

    def find(self, table: Mapping[int, ProcId]) -> Members:
        """The run's processes in `table`; each one found is known from then on, wherever it goes, while it is
        there (a zombie still ties the sessions and groups it made)."""
        found = run_members(table, self.root, self.start, self.known)
        # What was known and is gone now is forgotten: a run's notes hold no more than its processes.
        self.known.clear()
        self.known.update((pid, table[pid].start) for pid in found.pids)
        self._live = self._live or any(not table[pid].ended for pid in found.pids)
        return found

    def record(self) -> ledger.Record:
        return ledger.Record(ledger.SIGNALS, self.root, self.start, known=self.known)

    def keep(self) -> None:
        """Notes what the reading found, for the next one; forgets a run of which nothing was found."""
        if self._notes is not None:
            self._notes.note(self.root, self.start, dict(self.known) if self._live else {})


def _any_left(noted: Mapping[int, int], proc: str) -> bool:
    return any(procs.start_of(pid, proc) == start for pid, start in noted.items())


def _read_cgroup_processes(path: str, root: int, limits: ControlLimits, proc: str) -> _Reading | None:
    """A run's cgroup without the memory controller, read by the processes it holds: as they run while they stay the
    same, else frozen, by the kernel where it can (`cgroup.freeze`), else by signals."""

    def held(table: Mapping[int, ProcId]) -> Members:
        return Members(cgroups.processes(path) & table.keys(), frozenset())

    settled, reading = read_unstopped(held, proc)
    if settled:
        return reading
    record = ledger.Record(ledger.CGROUP, root, None, path)
    record.write(())
    try:
        if not cgroups.freeze(path):
            record.close()
            return _read_frozen(held, limits, proc, ledger.Record(ledger.SIGNALS, root, None, path), enforce=False)
        table = procs.process_table(proc)
        return _tally(table, frozenset(pid for pid in held(table).pids if not table[pid].ended), proc)
    finally:
        cgroups.thaw(path)
        record.close()


def _read(root: int, limits: ControlLimits, proc: str, known: Known | None, *, enforce: bool) -> _Reading | None:
    """The run whose root is `root`, read whole, and with `enforce` killed when over the cap; None when nothing of
    it is left."""
    path = cgroups.of_run(limits.cgroup, root) if limits.cgroup else None
    if path is None:
        run = _Run.of(root, None, proc, known)
        try:
            return _read_processes(run.find, limits, proc, run.record(), enforce=enforce)
        finally:
            run.keep()
    use = cgroups.usage(path)
    if use.current is None:
        reading = _read_cgroup_processes(path, root, limits, proc)
    else:
        reading = _Reading(max(use.current, use.peak or 0) if use.reached_cap else use.current, use.reached_cap)
    if reading is not None and enforce and reading.over(limits):
        cgroups.kill(path)  # whole: nothing forked in it escapes
    return reading


def _read_unless_own(
    root: int, own: frozenset[int], limits: ControlLimits, proc: str, known: Known | None, *, enforce: bool
) -> _Reading | None:
    """`_read`, but None for the scheduler's own process, group or session, and None for a run that could not be
    read this time for want of a descriptor (docs/behaviour.md §4.6): the next call reads it again, and the other runs
    are read and capped meanwhile."""
    if root in own:
        return None
    try:
        return _read(root, limits, proc, known, enforce=enforce)
    except OSError as error:
        if error.errno in (errno.EMFILE, errno.ENFILE):
            return None
        raise


def over_cap(
    runs: Mapping[int, int], limits: ControlLimits, *, known: Known | None = None, proc: str = "/proc"
) -> dict[int, int]:
    """run -> resident bytes of the runs (run -> root pid) that hold more than `limits.memory_mb` MB, or whose cgroup
    reached it; each run read whole (as it runs while it stays the same, else frozen for the reading and then
    continued, unless its cgroup's numbers are read).
    A run with no process left is not over."""
    ledger.thaw_left(proc)
    own = procs.own_ids()
    over: dict[int, int] = {}
    for run, root in runs.items():
        reading = _read_unless_own(root, own, limits, proc, known, enforce=False)
        if reading is not None and reading.over(limits):
            over[run] = reading.resident
    return over


def enforce_memory(
    runs: Mapping[int, int], limits: ControlLimits, *, known: Known | None = None, proc: str = "/proc"
) -> dict[int, str]:
    """Kills each run (run -> root pid) over the cap, every process of it (SIGKILL), as it was read: frozen. Returns
    run -> the reason a person reads on its page, for every run killed. A run under the cap is continued, never
    killed. Afterwards removes the cgroups of runs that have no process left.

    A root that ended and whose pid went to another process is left alone, as is any other pid reused while the
    run is read and killed.
    """
    ledger.thaw_left(proc)
    own = procs.own_ids()
    reasons: dict[int, str] = {}
    for run, root in runs.items():
        reading = _read_unless_own(root, own, limits, proc, known, enforce=True)
        if reading is not None and reading.over(limits):
            reasons[run] = reading.reason(limits)
    if limits.cgroup:
        cgroups.sweep(limits.cgroup)
    return reasons


def kill_run(
    root: int, root_start: int | None, *, cgroup: str = "", known: Known | None = None, proc: str = "/proc"
) -> int:
    """SIGKILLs every process of the run whose root is `root`, started at `root_start` (None: not known; the
    root's, while a process has its pid, else the one this scheduler's readings noted); returns how many were
    signalled, 0 when nothing of it is left or `root` is another process now. `cgroup`: the directory of
    `ORCA_CONTROL_CGROUP`, where the run's own cgroup is killed whole.

    Without a cgroup the run is frozen first (`procs.end_all`), so a process forking as it is killed leaves no
    child behind.
    """
    ledger.thaw_left(proc)
    if root in procs.own_ids():
        return 0
    path = cgroups.of_run(cgroup, root) if cgroup else None
    if path is not None:
        return cgroups.kill(path)
    run = _Run.of(root, root_start, proc, known)
    record = run.record()

    def enter(stopped: frozenset[tuple[int, int]]) -> None:
        # A kill goes ahead even where it cannot be entered: it ends the run, which a freeze left behind would not.
        with contextlib.suppress(OSError):
            record.write(stopped)

    try:
        return procs.end_all(run.find, proc, before=enter)
    finally:
        record.close()
        if known is not None:
            known.note(root, None, {})
