"""The documented API's process readings from a /proc root (the kernel's, or a fixture tree standing in for it):
what `portable.py`'s `alive`, `tree_rss` and `tree_usage` are computed from where there is a /proc. Each is one
reading: nothing is kept open for a next one (the sampler's lines keep theirs: `scanner.py`).

A tree is found by walking `children` files down from its root where the kernel has them (only the tree's own
files are read), else by one pass over every process's `stat` (`walk.py`); compute/tree.py does the sums.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from orca.sample.compute.tree import run_of, trees_of
from orca.sample.parse.pid_stat import stat_fields
from orca.sample.shared.sysconf import clock_ticks, page_size
from orca.sample.shell.procs.argv0s import Argv0ByImage
from orca.sample.shell.procs.walk import ProcRoot, walk_tree, walk_tree_within

# A walk reads about three files per member (its task directory, a `children` file, its stat), a scan one per host
# process: trees up to this many members are walked without counting the host's processes first.
WALK_ALWAYS = 64
_WALK_READS_PER_MEMBER = 3
_UNREADABLE = ""
"""The state of a process whose `stat` exists but does not parse: still a process."""


class ProcReadings:
    """The API's readings under one /proc root."""

    def __init__(self, proc: str) -> None:
        self.root = ProcRoot.at(proc)
        self.ticks_per_second = clock_ticks()

    def state(self, pid: int) -> str | None:
        """proc(5)'s state letter of `pid`; "" for a `stat` that does not parse; None when there is no such
        process. Raises `OSError` when no descriptor was left to read it with."""
        data = self.root.read(pid, "stat")
        if data is None:
            return None
        fields = stat_fields(data)
        return _UNREADABLE if fields is None else fields[0]

    def run_resident(self, root: int | None, argv0: str) -> Mapping[int, int]:
        """pid -> resident bytes of `root`'s tree and of the processes whose argv[0] is `argv0`, each once."""
        files = self.root
        if files.has_children_files():
            members = set() if root is None else set(walk_tree(files, root))
            if argv0:
                members.update(int(name) for name in files.pid_names() if files.argv0(name) == argv0)
        else:
            members = set(scan_run(files, root, argv0, Argv0ByImage(files))[0])
        return self.resident(members)

    def resident(self, pids: Iterable[int]) -> dict[int, int]:
        """pid -> statm's resident bytes, for those of `pids` still there."""
        bytes_per_page, files = page_size(), self.root
        return {pid: pages * bytes_per_page for pid in pids if (pages := files.resident_pages(pid)) is not None}

    def tree_figures(self, roots: list[int]) -> tuple[dict[int, frozenset[int]], dict[int, int], dict[int, int]]:
        """Each present root's tree; and pid -> resident bytes, pid -> CPU ticks (own and waited-for children's)
        of their processes.

        Small trees are walked down from the roots (reading only their processes' files); trees that prove to be a
        large share of the host, or any tree where the kernel has no `children` files, are found in one pass over
        every process's stat, which then costs less than the walk."""
        files = self.root
        ticks: dict[int, int] = {}
        trees = walked_unless_wide(files, roots) if files.has_children_files() else None
        if trees is not None:
            for pid in frozenset().union(*trees.values()):
                fields = files.stat_fields(pid)
                if fields is not None:
                    ticks[pid] = fields[2]
        else:
            parents: dict[int, int] = {}
            for pid, data in files.stats():
                fields = stat_fields(data)
                if fields is not None:
                    _, parents[pid], ticks[pid], _ = fields
            trees = trees_of(parents, roots)
        return trees, self.resident(frozenset().union(*trees.values())), ticks


def scan_run(
    root: ProcRoot, pid: int | None, argv0: str, argv0s: Argv0ByImage
) -> tuple[frozenset[int], dict[int, bytes]]:
    """The run's processes by the portable way: one pass over every `stat` for the parents (and, with `argv0`,
    each process's argv[0], read as `argv0s` allows); and every process's `stat` as the pass read it."""
    parents: dict[int, int] = {}
    matched: list[int] = []
    stats: dict[int, bytes] = {}
    for member, data in root.stats():
        fields = stat_fields(data)
        if fields is None:
            continue
        state, ppid, _, starttime = fields
        parents[member] = ppid
        stats[member] = data
        if argv0 and argv0s.argv0(member, data, state, ppid, starttime) == argv0:
            matched.append(member)
    argv0s.pass_done()
    return run_of(parents, pid, matched), stats


def walked_within(files: ProcRoot, roots: list[int], most: int) -> dict[int, frozenset[int]] | None:
    """Each present root's tree, or None once the trees hold more than `most` processes in all."""
    trees: dict[int, frozenset[int]] = {}
    known = 0
    for root in roots:
        tree = walk_tree_within(files, root, most - known)
        if tree is None:
            return None
        known += len(tree)
        if tree:
            trees[root] = tree
    return trees


def walked_unless_wide(files: ProcRoot, roots: list[int]) -> dict[int, frozenset[int]] | None:
    """Each present root's tree by walking down `children` files, or None when the trees prove to be so much of the
    host that one pass over every process's stat costs less than walking them."""
    trees = walked_within(files, roots, WALK_ALWAYS)
    if trees is None:
        # Larger than a small tree: worth walking only while it is a small share of the host.
        most = len(files.pid_names()) // _WALK_READS_PER_MEMBER
        trees = walked_within(files, roots, most) if most > WALK_ALWAYS else None
    return trees
