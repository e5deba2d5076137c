"""What a scheduler has stopped or frozen, written down before it does, where the next scheduler finds it
(docs/behaviour.md §12.4).

A reading or a kill stops a run (`procs.Frozen`) or freezes its cgroup (`cgroups.freeze`) and continues it before it
returns. A scheduler killed in between (a deploy, an OOM kill, `systemctl restart`) would leave the run stopped for
good, and a new one could not tell what the old one stopped from what the run stopped itself. So each freeze is
entered first in a file of the ledger, `<staging root>/.control-frozen/` (the root a run's staged output is under,
which a new scheduler must find as well): who froze (the scheduler's pid and start), which run (its root and start,
or its cgroup), how (signals or `cgroup.freeze`), and which of its processes were stopped already. The entry goes
once the run is continued or killed. `thaw_left`, which `over_cap`, `enforce_memory` and `kill_run` call first,
continues what each entry of a scheduler that is gone names and removes the entry.

Nothing is synced to disk: a scheduler's death leaves what it wrote in the page cache, and a host that goes down
takes its runs with it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from orca.control import cgroups, procs
from orca.control.members import proc_id, run_members
from orca.sample import process_stat, stage_root

DIRECTORY = ".control-frozen"
"""The ledger's directory under the staging root."""
SIGNALS, CGROUP = "signals", "cgroup"
"""How an entry's run was frozen: its processes stopped by signals, or its cgroup's `cgroup.freeze`."""
_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class Entry:
    """One freeze: the scheduler that made it, the run, how, and the processes the run had stopped itself."""

    writer: tuple[int, int]
    how: str
    root: int
    root_start: int | None
    cgroup: str
    stopped: frozenset[tuple[int, int]]
    known: frozenset[tuple[int, int]] = frozenset()
    """The processes (pid, start) the scheduler's readings had found as the run's."""

    def text(self) -> str:
        start = "-" if self.root_start is None else str(self.root_start)
        stopped, known = (
            " ".join(f"{pid}:{begun}" for pid, begun in sorted(pairs)) for pairs in (self.stopped, self.known)
        )
        return f"{self.writer[0]} {self.writer[1]} {self.how} {self.root} {start}\n{stopped}\n{self.cgroup}\n{known}\n"


def parse(text: str) -> Entry | None:
    """An entry from its file's text (`Entry.text`); None when it is not one.

    >>> entry = Entry((7, 90), SIGNALS, 40, None, "", frozenset({(41, 95)}), frozenset({(44, 96), (45, 97)}))
    >>> parse(entry.text()) == entry, parse("7 90 signals\\n"), parse("")
    (True, None, None)
    """
    lines = text.split("\n")
    if len(lines) < 4:
        return None
    head, cgroup = lines[0].split(), lines[2]
    if len(head) != 5 or head[2] not in (SIGNALS, CGROUP):
        return None
    if not all(word.isascii() and word.isdigit() for word in (head[0], head[1], head[3])):
        return None
    if not (head[4] == "-" or (head[4].isascii() and head[4].isdigit())):
        return None
    stopped, known = _pairs(lines[1]), _pairs(lines[3])
    if stopped is None or known is None:
        return None
    start = None if head[4] == "-" else int(head[4])
    return Entry((int(head[0]), int(head[1])), head[2], int(head[3]), start, cgroup, stopped, known)


def _pairs(line: str) -> frozenset[tuple[int, int]] | None:
    """`pid:start` words; None when one is not."""
    pairs: set[tuple[int, int]] = set()
    for word in line.split():
        pid, colon, start = word.partition(":")
        if not (colon and pid.isascii() and pid.isdigit() and start.isascii() and start.isdigit()):
            return None
        pairs.add((int(pid), int(start)))
    return frozenset(pairs)


def directory() -> str:
    return os.path.join(stage_root(os.environ), DIRECTORY)


def _private(path: str) -> bool:
    """Makes `path` a directory of this user's, 0700, where missing; False when it is anything else."""
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    found = os.lstat(path)
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and not found.st_mode & 0o077


def _me() -> tuple[int, int]:
    return os.getpid(), procs.start_of(os.getpid()) or 0


class Record:
    """The ledger's entry of one freeze, written before the first signal (`write`), gone with `close`."""

    def __init__(
        self, how: str, root: int, root_start: int | None, cgroup: str = "", known: Mapping[int, int] | None = None
    ) -> None:
        self._how, self._root, self._root_start, self._cgroup = how, root, root_start, cgroup
        self._known = known if known is not None else {}
        self._path = ""

    def write(self, stopped: Iterable[tuple[int, int]]) -> None:
        """Enters the freeze, with the processes (pid, start) the run had stopped itself. OSError when it cannot be
        entered: then nothing may be frozen."""
        where = directory()
        if not _private(where):
            raise PermissionError(f"{where}: not a private directory of this user's")
        me = _me()
        known = frozenset(self._known.items())
        entry = Entry(me, self._how, self._root, self._root_start, self._cgroup, frozenset(stopped), known)
        name = f"{me[0]}-{me[1]}-{self._root}-{id(self)}"
        temporary = os.path.join(where, f".{name}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(descriptor, entry.text().encode("utf-8", "surrogateescape"))
        finally:
            os.close(descriptor)
        # Whole or not at all: a scheduler killed mid-write leaves only the temporary name, which nothing froze.
        os.rename(temporary, os.path.join(where, name))
        self._path = os.path.join(where, name)

    def close(self) -> None:
        if self._path:
            with contextlib.suppress(OSError):
                os.unlink(self._path)
            self._path = ""


def _read(path: str) -> str:
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return ""
        return os.read(descriptor, _LIMIT).decode("utf-8", "surrogateescape")
    finally:
        os.close(descriptor)


def _continue(entry: Entry, proc: str) -> None:
    """Continues what `entry` froze: its cgroup thawed, or each stopped process of its run (its cgroup's, else its
    root's as `run_members` finds it) but those the run had stopped itself. A process with the freeze's SIGSTOP
    still pending is continued too (a SIGCONT cancels it): not stopped yet, it would be once it ran. Each is read
    again for it, its pending signals before its state (`procs.stopped_or_stopping`): the table's state, read
    first, can say running of one that took its stop since."""
    if entry.how == CGROUP:
        cgroups.thaw(entry.cgroup)
        return
    table = procs.process_table(proc)
    if entry.cgroup:
        pids = cgroups.processes(entry.cgroup) & table.keys()
    else:
        pids = run_members(table, entry.root, entry.root_start, dict(entry.known)).pids
    for pid in pids:
        found = table[pid]
        if (pid, found.start) not in entry.stopped and procs.stopped_or_stopping(pid, found.start, proc):
            held = procs.Held.of(pid, found.start, proc)
            if held is not None:
                held.send(signal.SIGCONT)
                held.close()


def _running(writer: tuple[int, int], proc: str) -> bool:
    """Whether the scheduler `writer` (pid, start) still runs: not ended, nor a zombie its parent has not reaped."""
    data = process_stat(writer[0], proc)
    found = None if data is None else proc_id(data)
    return found is not None and found.start == writer[1] and not found.ended


def thaw_left(proc: str = "/proc") -> int:
    """Continues every run a scheduler that is no longer running froze and left so (its entries in the ledger),
    and removes those entries; returns how many there were. Entries of a live scheduler, this one included, are
    its own to close."""
    where = directory()
    try:
        names = os.listdir(where)
    except OSError:
        return 0
    thawed = 0
    for name in names:
        path = os.path.join(where, name)
        try:
            entry = parse(_read(path)) if not name.startswith(".") else None
        except OSError:
            continue
        if entry is None or _running(entry.writer, proc):
            continue
        _continue(entry, proc)
        with contextlib.suppress(OSError):
            os.unlink(path)
        thawed += 1
    return thawed
