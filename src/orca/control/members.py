"""Which processes belong to a control-placed run, from one pass over /proc: pure, for the shell that kills them.

A run's processes are its root and every descendant, a child that left the root's process group (`setsid`)
included, plus any process still in the root's group whose parent has gone (an orphan keeps its group) and its
descendants. Every
process is known by its pid *and* its start time, so a pid that ends and is given to another process between two
readings is never taken for the one found.

>>> table = {
...     100: ProcId(ppid=1, pgrp=100, start=5000),
...     101: ProcId(ppid=100, pgrp=101, start=5010),  # its own session now
...     102: ProcId(ppid=1, pgrp=100, start=5020),  # orphaned, still in the run's group
...     103: ProcId(ppid=100, pgrp=103, start=4000),  # started before its "parent": pid 100 was reused
...     104: ProcId(ppid=102, pgrp=104, start=5030),  # the orphan's child, in a group of its own
...     200: ProcId(ppid=1, pgrp=200, start=10),
... }
>>> sorted(run_members(table, 100, 5000))
[100, 101, 102, 104]
>>> run_members(table, 100, 4999)
frozenset()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from orca.sample.compute.tree import children_by_parent
from orca.sample.parse.pid_stat import stat_fields

# proc(5) field 5, `pgrp`, in the fields after comm's last `)` (field 3, `state`, is index 0).
_PGRP = 2


@dataclass(frozen=True, slots=True)
class ProcId:
    """What tells one process from another that later has its pid: its parent, its group and its start."""

    ppid: int
    pgrp: int
    """proc(5) field 5: the process group."""
    start: int
    """proc(5) field 22, `starttime`: clock ticks after boot; a later process with the same pid has a later one."""


def proc_id(data: bytes) -> ProcId | None:
    """The `ProcId` of a raw /proc/<pid>/stat; None when it does not parse (fields counted after the LAST `)`).

    >>> proc_id(b"42 (a) b) S 7 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 900 0 12\\n")
    ProcId(ppid=7, pgrp=42, start=900)
    >>> proc_id(b"42 (a) S 7") is None
    True
    """
    fields = stat_fields(data)
    if fields is None:
        return None
    _, ppid, _, start = fields
    pgrp = data[data.rfind(b")") + 1 :].split(None, _PGRP + 1)[_PGRP]
    if not (pgrp.isdigit() and len(pgrp) <= 20):
        return None
    return ProcId(ppid=ppid, pgrp=int(pgrp), start=start)


def run_members(table: Mapping[int, ProcId], root: int, root_start: int) -> frozenset[int]:
    """The pids of the run whose root is `root`, started at `root_start`; none when `root` is gone or is now
    another process. A child counts only if it started no earlier than its parent (else its parent's pid was
    reused after the child was forked)."""
    found = table.get(root)
    if found is None or found.start != root_start:
        return frozenset()
    children = children_by_parent({pid: entry.ppid for pid, entry in table.items()})
    members = {root}
    members.update(pid for pid, entry in table.items() if entry.pgrp == root and entry.start >= root_start)
    pending = list(members)
    while pending:
        parent = pending.pop()
        for child in children.get(parent, ()):
            if child not in members and table[child].start >= table[parent].start:
                members.add(child)
                pending.append(child)
    return frozenset(members)
