"""Which processes belong to a control-placed run, from one pass over /proc: pure, for the shell that kills them.

A run's root is started as the leader of a session of its own (`start_run`), so its session and its process group
carry the root's pid. A run is what the kernel ties to its root, none of which a process can choose for itself
(docs/behaviour.md §12.3); from one table of every process:

- the root, while it is the process found at the start (a pid is known by its start time too);
- every process in the root's session or process group, even when the root has ended: an orphan keeps both, and
  the kernel does not give the root's pid to another process while a session or group still carries it;
- every process an earlier reading found as the run's (`known`: pid and start), a child that left with `setsid`
  and whose parent has ended since included;
- every descendant of those;
- and, again, every process in a session or group that one of them made (whose id is its pid).

A process counts only if it started no earlier than the one it was found through (else that pid was reused after it
was forked). The run mark a process carries in its environment (`MARK`) is not read: any process can write any
mark into its environment, another run's included. What is out of reach without a cgroup: a process that left the
run's session with `setsid` and whose parent ended before a reading found it.

>>> table = {
...     100: ProcId(ppid=1, pgrp=100, session=100, start=5000),
...     101: ProcId(ppid=100, pgrp=101, session=101, start=5010),  # `setsid`: a session of its own
...     102: ProcId(ppid=1, pgrp=100, session=100, start=5020),  # orphaned, still in the run's group
...     103: ProcId(ppid=100, pgrp=103, session=103, start=4000),  # started before its "parent": pid 100 was reused
...     104: ProcId(ppid=102, pgrp=104, session=100, start=5030),  # the orphan's child, in a group of its own
...     105: ProcId(ppid=1, pgrp=104, session=100, start=5040),  # an orphan in that group
...     106: ProcId(ppid=1, pgrp=106, session=106, start=5050),  # left, its parent gone: known from a reading
...     200: ProcId(ppid=1, pgrp=200, session=200, start=10),
... }
>>> found = run_members(table, 100, 5000, {106: 5050})
>>> sorted(found.pids), sorted(found.groups)
([100, 101, 102, 104, 105, 106], [100, 101, 104, 106])
>>> run_members(table, 100, 4999).pids
frozenset()
>>> sorted(run_members({pid: table[pid] for pid in (102, 104, 105, 106, 200)}, 100, None).pids)  # the root ended
[102, 104, 105]
>>> run_members({pid: table[pid] for pid in (106, 200)}, 100, None, {106: 5050}).pids  # all but what was known
frozenset({106})
>>> run_members({pid: table[pid] for pid in (106, 200)}, 100, None, {106: 5049}).pids  # another process now
frozenset()
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Indexes of proc(5) fields in the text after comm's last `)` (field 3, `state`, is index 0).
_PPID, _PGRP, _SESSION, _STARTTIME = 1, 2, 3, 19
_DIGITS = 20
"""A u64's most digits: a longer field is refused before `int`."""
MARK = "ORCA_CONTROL_RUN"
"""The environment variable every process of a run starts with: `<root pid>:<root start>` (`mark_of`), for a person
or a tool to see which run a process came from; never read to decide what a run is (any process can write it)."""


@dataclass(frozen=True, slots=True)
class ProcId:
    """What tells one process from another that later has its pid, and the process group and session it is in."""

    ppid: int
    pgrp: int
    """proc(5) field 5: the process group."""
    session: int
    """proc(5) field 6: the session."""
    start: int
    """proc(5) field 22, `starttime`: clock ticks after boot; a later process with the same pid has a later one."""
    ended: bool = False
    """proc(5) field 3, `state`, is `Z` or `X`: the process has exited (a zombie not yet waited for), so it forks no
    more and holds no memory; its pid, group and session still tie the others to it."""
    stopped: bool = False
    """proc(5) field 3, `state`, is `T` or `t`: stopped by a signal, or by a tracer."""
    busy: bool = False
    """proc(5) field 3, `state`, is `R` or `D`: running, or in uninterruptible sleep; either may be in the middle of
    a system call, a fork among them (one sleeping in `S`, stopped or exited is not)."""


@dataclass(frozen=True, slots=True)
class Members:
    """A run's processes, and its own process groups (whose id is the root's or a member's pid), each of which a
    signal to the group reaches whole, a process forked as it is sent included."""

    pids: frozenset[int]
    groups: frozenset[int]


NONE = Members(frozenset(), frozenset())


def joined(found: Iterable[Members]) -> Members:
    """The processes and groups of every one of `found`."""
    pids: set[int] = set()
    groups: set[int] = set()
    for members in found:
        pids |= members.pids
        groups |= members.groups
    return Members(frozenset(pids), frozenset(groups))


def mark_of(root: int, start: int) -> str:
    """The mark of the run whose root is `root`, started at `start` (proc(5) field 22).

    >>> mark_of(4242, 173500)
    '4242:173500'
    """
    return f"{root}:{start}"


def proc_id(data: bytes) -> ProcId | None:
    """The `ProcId` of a raw /proc/<pid>/stat; None when it does not parse (fields counted after the LAST `)`).

    >>> proc_id(b"42 (a) b) S 7 42 40 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 900 0 12\\n")
    ProcId(ppid=7, pgrp=42, session=40, start=900, ended=False, stopped=False, busy=False)
    >>> proc_id(b"42 (a) Z 1 42 40 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 900 0 0\\n").ended
    True
    >>> proc_id(b"42 (a) S 7") is None
    True
    """
    close = data.rfind(b")")
    if close < 0 or b"(" not in data[:close]:
        return None
    fields = data[close + 1 :].split(None, _STARTTIME + 1)
    if len(fields) <= _STARTTIME:
        return None
    picked = (fields[_PPID], fields[_PGRP], fields[_SESSION], fields[_STARTTIME])
    if not all(field.isdigit() and len(field) <= _DIGITS for field in picked):
        return None
    ppid, pgrp, session, start = map(int, picked)
    state = fields[0]
    return ProcId(
        ppid,
        pgrp,
        session,
        start,
        ended=state in (b"Z", b"X"),
        stopped=state in (b"T", b"t"),
        busy=state in (b"R", b"D"),
    )


def _through(table: Mapping[int, ProcId]) -> dict[int, list[int]]:
    """id -> the pids that name it as their parent, process group or session."""
    index: dict[int, list[int]] = {}
    for pid, entry in table.items():
        for known in {entry.ppid, entry.pgrp, entry.session}:
            if known != pid:
                index.setdefault(known, []).append(pid)
    return index


def run_members(
    table: Mapping[int, ProcId], root: int, root_start: int | None, known: Mapping[int, int] | None = None
) -> Members:
    """The run whose root is `root`, started at `root_start` (None: not known; the start of the process with that
    pid, if any), and the processes `known` (pid -> start) that an earlier reading found as its own. When `root` is
    another process now (the run's root ended and its pid went to another), only what was known and what it ties."""
    found = table.get(root)
    if root_start is None and found is not None:
        root_start = found.start
    # A pid that is another process's now: the session and group of that id are that process's, not the run's.
    by_ids = found is None or root_start is None or found.start == root_start
    seeds = [pid for pid, start in (known or {}).items() if pid in table and table[pid].start == start]
    members = set(seeds)
    since = {pid: table[pid].start for pid in seeds}
    pending = list(seeds)
    if by_ids:
        if found is not None:
            members.add(root)
        since[root] = found.start if found is not None else -1 if root_start is None else root_start
        pending.append(root)
    through = _through(table)
    while pending:
        known_pid = pending.pop()
        for pid in through.get(known_pid, ()):
            start = table[pid].start
            if pid not in members and start >= since[known_pid]:
                members.add(pid)
                since[pid] = start
                pending.append(pid)
    own = members | {root} if by_ids else members
    return Members(frozenset(members), frozenset(table[pid].pgrp for pid in members if table[pid].pgrp in own))


def tops(table: Mapping[int, ProcId], pids: frozenset[int]) -> frozenset[int]:
    """The processes of `pids` whose parent is not one of them: their trees are disjoint and, between them, hold
    every one of `pids` (and what was forked since), so their sizes add up without counting one twice.

    >>> tops({1: ProcId(0, 1, 1, 0), 2: ProcId(1, 1, 1, 5), 3: ProcId(1, 3, 3, 6)}, frozenset({2, 3}))
    frozenset({2, 3})
    """
    return frozenset(pid for pid in pids if table[pid].ppid not in pids)
