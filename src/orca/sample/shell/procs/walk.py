"""Finding the run's processes in /proc (docs/behaviour.md §3.4, §6): a process's files read by path, and the walk.

A line's cost must not grow with the host's processes when only the run's tree is wanted. So the tree is walked
downwards from the root through `/proc/<pid>/task/<tid>/children` (every thread's, since a child belongs to the
thread that forked it): files are read only for the run's own processes. A kernel without those files
(CONFIG_PROC_CHILDREN off), or a fixture tree without them, gets the portable way: one pass over every
/proc/<pid>/stat, parents from `ppid` (`ProcRoot.stats`, the trees found by compute/tree.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from orca.sample.parse.cmdline import arguments as cmdline_arguments
from orca.sample.parse.cmdline import argv0 as cmdline_argv0
from orca.sample.parse.pid_stat import stat_fields
from orca.sample.parse.statm import resident_pages
from orca.sample.shared.bounded import LIMIT, OUT_OF_DESCRIPTORS, is_kernel_procfs, read_or_none

KTHREADD = 2
"""kthreadd is pid 2 and the parent of every other kernel thread: their cmdline is empty for good."""
CMDLINE_LIMIT = 32 * 4096
"""One argument is at most MAX_ARG_STRLEN (32 pages) long: a bound on what is read to find argv[0]'s end."""


def pids_in(data: bytes) -> list[int]:
    """The pids of a `children` file: decimal numbers separated by spaces."""
    return [int(field) for field in data.split() if field.isdigit()]


@dataclass(frozen=True, slots=True)
class ProcRoot:
    """A /proc directory (the kernel's, or a fixture tree) and its processes' files, read by path.

    A file that cannot be read (the process exited, no permission, not a regular file) reads as None: a process
    that vanishes mid-pass simply adds nothing."""

    path: str
    trusted: bool
    """`path` is the kernel's procfs, whose process files are regular files: they are opened without a check."""

    @classmethod
    def at(cls, path: str) -> ProcRoot:
        return cls(path, is_kernel_procfs(path))

    def read(self, pid: int | str, name: str) -> bytes | None:
        return read_or_none(f"{self.path}/{pid}/{name}", LIMIT, b"", self.trusted)

    def argv0(self, pid: int | str) -> str:
        """argv[0] from `cmdline`, read only up to its first NUL; "" when unreadable or empty (a kernel thread)."""
        raw = read_or_none(f"{self.path}/{pid}/cmdline", CMDLINE_LIMIT, b"\0", self.trusted)
        return "" if raw is None else cmdline_argv0(raw)

    def arguments(self, pid: int) -> list[str]:
        """Every argument from `cmdline` (at least the first 64 KiB of them); none when unreadable or empty."""
        raw = read_or_none(f"{self.path}/{pid}/cmdline", CMDLINE_LIMIT, b"\0", self.trusted)
        return [] if raw is None else cmdline_arguments(raw)

    def stat_fields(self, pid: int) -> tuple[str, int, int, int] | None:
        """(state, ppid, cpu_ticks, starttime) of `/proc/<pid>/stat`; None when gone or malformed."""
        data = read_or_none(f"{self.path}/{pid}/stat", LIMIT, b"", self.trusted)
        return None if data is None else stat_fields(data)

    def resident_pages(self, pid: int) -> int | None:
        """statm's resident pages of one process (docs/behaviour.md §3.4); None when gone or malformed."""
        data = read_or_none(f"{self.path}/{pid}/statm", LIMIT, b"", self.trusted)
        return None if data is None else resident_pages(data)

    def pid_names(self) -> list[str]:
        """The process directories (thread group leaders); none when the root cannot be listed (no /proc). Out of
        descriptors, the `OSError`: the processes are not known to be none."""
        try:
            names = os.listdir(self.path)
        except OSError as error:
            if error.errno in OUT_OF_DESCRIPTORS:
                raise
            return []
        return [name for name in names if name.isdigit() and name.isascii()]

    def stats(self) -> Iterator[tuple[int, bytes]]:
        """(pid, raw `stat`) of every process still there when its turn comes: the portable pass."""
        path, trusted = self.path, self.trusted
        for name in self.pid_names():
            data = read_or_none(f"{path}/{name}/stat", LIMIT, b"", trusted)
            if data is not None:
                yield int(name), data

    def has_children_files(self) -> bool:
        """Whether each task's children are listed (Linux 3.5+ with CONFIG_PROC_CHILDREN; not a fixture tree)."""
        return os.path.exists(f"{self.path}/thread-self/children")

    def children(self, pid: int) -> list[int]:
        """The pids of `pid`'s children, from every one of its threads' `children` files; none if it vanished."""
        task = f"{self.path}/{pid}/task"
        try:
            # A task directory's link count is 2 + its threads: a single-threaded process (most of a run's tree)
            # needs no listing, one stat instead of five system calls.
            single = os.stat(task).st_nlink == 3
            tids = [str(pid)] if single else os.listdir(task)
        except OSError as error:
            if error.errno in OUT_OF_DESCRIPTORS:
                raise
            return []
        kids: list[int] = []
        for tid in tids:
            data = self.read(pid, f"task/{tid}/children")
            if data:
                kids.extend(pids_in(data))
        return kids


def walk_tree(root: ProcRoot, pid: int, children_of: Callable[[int], list[int]] | None = None) -> frozenset[int]:
    """`pid` and its descendants, walking `children` files down from it; empty when `pid` does not exist.

    `children_of` answers for one process (by default, its files read by path)."""
    return walk_tree_within(root, pid, None, children_of) or frozenset()


def walk_tree_within(
    root: ProcRoot, pid: int, most: int | None, children_of: Callable[[int], list[int]] | None = None
) -> frozenset[int] | None:
    """`walk_tree`, given up (None) as soon as more than `most` processes of the tree are known: a caller that
    would rather scan every process than walk most of them learns it after reading few `children` files."""
    if not os.path.isdir(f"{root.path}/{pid}"):
        return frozenset()
    children = children_of or root.children
    tree = {pid}
    frontier = [pid]
    while frontier:
        for child in children(frontier.pop()):
            if child not in tree:  # a pid seen twice (reused mid-walk) is walked once, so the walk ends
                tree.add(child)
                frontier.append(child)
        if most is not None and len(tree) > most:
            return None
    return frozenset(tree)
