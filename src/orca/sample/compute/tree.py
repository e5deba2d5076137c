"""Process trees (docs/behaviour.md §3.4, §6): who descends from whom, and sums over a set of processes.

Pure and total: parent data from a racy pass over /proc can be anything (a parent that exited, pid reuse making a
cycle), and every function still answers. The shell's hot path builds no record per process: it hands over plain
`pid -> ppid` and `pid -> value` maps, or, when it walks /proc's `children` files, a function giving a pid's children.

>>> parents = {1: 0, 10: 1, 11: 10, 12: 1}
>>> sorted(tree_of(parents, 10))
[10, 11]
>>> sorted(run_of(parents, 10, [12, 11]))
[10, 11, 12]
>>> total({1: 100, 10: 30, 11: 20, 12: 50}, run_of(parents, 10, [12, 11]))
100
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping


def walk(children_of: Callable[[int], Iterable[int]], root: int) -> frozenset[int]:
    """`root` and every pid reachable from it through `children_of`.

    Each pid is visited once, so a cycle (pid reuse mid-pass) ends; the walk keeps its own list of pids to visit
    rather than recursing, so a chain deeper than Python's recursion limit is walked too.

    >>> children = {1: [2, 3], 3: [4, 1]}
    >>> sorted(walk(lambda pid: children.get(pid, []), 1))
    [1, 2, 3, 4]
    """
    found = {root}
    pending = [root]
    while pending:
        for child in children_of(pending.pop()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return frozenset(found)


def tree_of(parents: Mapping[int, int], root: int) -> frozenset[int]:
    """The pids of `root`'s tree (root and descendants); empty when `root` is not among `parents`."""
    return trees_of(parents, (root,)).get(root, frozenset())


def trees_of(parents: Mapping[int, int], roots: Iterable[int]) -> dict[int, frozenset[int]]:
    """Each present root's tree, from one children index; a root that is not among `parents` is left out."""
    present = [root for root in roots if root in parents]
    if not present:
        return {}
    children = children_by_parent(parents)
    no_children: list[int] = []

    def children_of(pid: int) -> list[int]:
        return children.get(pid, no_children)

    return {root: walk(children_of, root) for root in present}


def run_of(parents: Mapping[int, int], root: int | None, matched: Iterable[int]) -> frozenset[int]:
    """The run's processes (docs/behaviour.md §3.4): `root`'s tree, if any, together with `matched`; a set, so each
    process is counted once."""
    tree = frozenset() if root is None else tree_of(parents, root)
    return tree.union(matched)


def total(values: Mapping[int, int], pids: Iterable[int]) -> int:
    """The sum of `values` over the distinct `pids`; a pid without a value (it vanished mid-pass) adds nothing."""
    return sum(values.get(pid, 0) for pid in set(pids))


def children_by_parent(parents: Mapping[int, int]) -> dict[int, list[int]]:
    """ppid -> the pids whose parent it is. A process listed as its own parent is not its own child."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        if pid != ppid:
            children.setdefault(ppid, []).append(pid)
    return children
