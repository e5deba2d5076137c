"""Process trees over one pass of /proc (SPEC 3.4, 6): who descends from whom, and sums over a set of processes.

Pure and total: parent data from a racy pass over /proc can be anything (a parent that exited, pid reuse making a
cycle), and every function still answers. The core works on `pid -> ppid` maps so the shell's per-line hot path
builds no record per process; the `ProcEntry` functions are the same over a snapshot's entries.

>>> entries = {
...     1: ProcEntry(1, 0, 100, 5, "/sbin/init"),
...     10: ProcEntry(10, 1, 30, 7, "/bin/sh"),
...     11: ProcEntry(11, 10, 20, 1, "/usr/bin/worker"),
...     12: ProcEntry(12, 1, 50, 2, "/usr/bin/worker"),
... }
>>> sorted(tree_pids(entries, 10))
[10, 11]
>>> sorted(run_pids(entries, 10, "/usr/bin/worker"))
[10, 11, 12]
>>> rss_pages(entries, run_pids(entries, 10, "/usr/bin/worker")), cpu_ticks(entries, tree_pids(entries, 10))
(100, 8)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from toolz import groupby, valmap

from orca.sample.compute.snapshot import ProcEntry

# --- over pid -> ppid maps: what the shell builds in its hot loop ---------------------------------------------------


def children_by_parent(parents: Mapping[int, int]) -> dict[int, list[int]]:
    """ppid -> the pids whose parent it is. A process listed as its own parent is not its own child."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        if pid != ppid:
            children.setdefault(ppid, []).append(pid)
    return children


def descendants_and_self(children: Mapping[int, Sequence[int]], root: int) -> set[int]:
    """`root` and every pid reachable from it through `children`; each visited once, so a cycle ends."""
    found = {root}
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def tree_of(parents: Mapping[int, int], root: int) -> frozenset[int]:
    """The pids of `root`'s tree (root and descendants); empty when `root` is not among `parents`."""
    return trees_of(parents, (root,)).get(root, frozenset())


def trees_of(parents: Mapping[int, int], roots: Iterable[int]) -> dict[int, frozenset[int]]:
    """Each present root's tree, from one children index; a root that is not among `parents` is left out."""
    present = [root for root in roots if root in parents]
    if not present:
        return {}
    children = children_by_parent(parents)
    return {root: frozenset(descendants_and_self(children, root)) for root in present}


def run_of(parents: Mapping[int, int], root: int | None, matched: Iterable[int]) -> frozenset[int]:
    """The run's processes (SPEC 3.4): `root`'s tree, if any, together with `matched`; a set, so each counted once."""
    tree = frozenset() if root is None else tree_of(parents, root)
    return tree.union(matched)


def total(values: Mapping[int, int], pids: Iterable[int]) -> int:
    """The sum of `values` over the distinct `pids`; a pid without a value (it vanished mid-pass) adds nothing."""
    return sum(values.get(pid, 0) for pid in set(pids))


# --- over a snapshot's ProcEntry records ----------------------------------------------------------------------------


def parents_of(entries: Mapping[int, ProcEntry]) -> dict[int, int]:
    return valmap(lambda entry: entry.ppid, entries)


def children_index(entries: Mapping[int, ProcEntry]) -> dict[int, list[int]]:
    """ppid -> the pids of its children among `entries`, in the order of `entries`."""
    by_parent = groupby(lambda entry: entry.ppid, (e for e in entries.values() if e.pid != e.ppid))
    return valmap(lambda kids: [entry.pid for entry in kids], by_parent)


def tree_pids(entries: Mapping[int, ProcEntry], root: int) -> frozenset[int]:
    """`root` and its descendants; empty when `root` is not among `entries`."""
    return tree_of(parents_of(entries), root)


def matched_pids(entries: Mapping[int, ProcEntry], argv0: str) -> frozenset[int]:
    """The processes whose argv[0] is `argv0` (`--match`); none for an empty `argv0`, which kernel threads have."""
    if not argv0:
        return frozenset()
    return frozenset(pid for pid, entry in entries.items() if entry.argv0 == argv0)


def run_pids(entries: Mapping[int, ProcEntry], root: int | None, argv0: str) -> frozenset[int]:
    """SPEC 3.4: `root`'s tree (if any) and the `argv0` matches, each process once."""
    return run_of(parents_of(entries), root, matched_pids(entries, argv0))


def rss_pages(entries: Mapping[int, ProcEntry], pids: Iterable[int]) -> int:
    """Resident pages (statm's second field) summed over the distinct `pids` that are in `entries`."""
    return sum(entries[pid].rss_pages for pid in set(pids) if pid in entries)


def cpu_ticks(entries: Mapping[int, ProcEntry], pids: Iterable[int]) -> int:
    """CPU clock ticks (utime + stime + cutime + cstime) summed over the distinct `pids` that are in `entries`."""
    return sum(entries[pid].cpu_ticks for pid in set(pids) if pid in entries)
