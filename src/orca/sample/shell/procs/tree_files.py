"""The run's tree and its processes' figures, read through descriptors kept open from line to line (`kept.py`).

Each line reads, for every process of the tree, whether it has more than one thread, its children, its resident
pages, its CPU times (`stat`) and its disk I/O (`io`). By path that is fourteen system calls and five /proc lookups a
process; through descriptors kept open it is five `fstat`/`pread`s, and fewer: `stat`, the dearest of them for the
kernel to make, and `io` are read again only for a process that ran since they were last read (compute/reread.py
decides which).

A line runs after seconds of sleep, with the CPU's and the interpreter's caches cold, so every call costs several
times its price in a tight loop. The kept processes' files are read in batches (`map` over the descriptors: no
Python runs per process) and the statm files parsed in one step; a line whose batches read as the last line's
takes that line's tree, and its pages when the statm files read the same. Only a process that is new, gone or has
more than one thread is read on its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import NamedTuple, Protocol

from orca.sample.compute.reread import read_again
from orca.sample.compute.tree import walk
from orca.sample.parse.statm import resident_pages, resident_pages_each
from orca.sample.shared.bounded import read_from
from orca.sample.shell.procs.kept import ONE_THREAD, STAT_READ, STATM_READ, Columns, KeptProcesses, read_io
from orca.sample.shell.procs.walk import ProcRoot, pids_in

SCHEDSTAT_READ = 128
"""`schedstat` is three numbers: the main thread's time on a CPU (ns), its wait for one, its times run."""
CHILDREN_READ = 4096
"""One `pread` of a kept `children` file in the batch. Under half of it is the whole list (a seq_file read stops
short only at its end or before a record that would not fit); a longer one is read again by `read_from`."""
_NO_CHILDREN: Sequence[int] = ()


class ProcessFiles(Protocol):
    """Where one process's `stat` and `io` are read from (its kept descriptors, or its files by path); None when
    they cannot be read."""

    def stat(self, pid: int) -> bytes | None: ...
    def io(self, pid: int) -> bytes | None: ...


class _RanAt(NamedTuple):
    """The kept processes' `schedstat`, `stat` and `io` files as last read, for the columns they were read through."""

    columns: Columns
    ran: list[bytes]
    stats: list[bytes]
    ios: list[bytes | None]


class _Walked(NamedTuple):
    """A walk, and the batches it was made from."""

    root: int
    columns: Columns
    statuses: list[os.stat_result]
    listed: list[bytes]
    tree: frozenset[int]


class TreeFiles:
    """The run's tree (`walk`), its processes' resident pages (`resident`) and their `stat` and `io` files (`stats`),
    read through the kept descriptors; `close()` closes them all."""

    def __init__(self, root: ProcRoot, share: int | None = None) -> None:
        """`share`: the descriptors it may keep (by default, the open-files limit's share)."""
        self.kept = KeptProcesses(root, share)
        self._last_walk: _Walked | None = None
        """The last line's walk, while the next may find the same tree from the batches alone."""
        self._forks_at_last_walk: int | None = None
        """The host's fork count (/proc/stat `processes`) read before the last walk; None when not given."""
        self._statm_read: tuple[Columns, list[bytes]] | None = None
        """The kept statm files as a walk that took the last tree read them, for `resident` to use."""
        self._last_statm: tuple[list[bytes], Mapping[int, int]] = ([], {})
        """The last line's kept statm files and each one's resident pages."""
        self._ran_at: _RanAt | None = None
        self._last_resident: Mapping[int, int] = {}
        """The last line's resident pages, processes read by path among them."""
        self._read_alone: dict[int, tuple[bytes, bytes | None]] = {}
        """pid -> the `stat` and `io` last read of each process read one by one (not kept, or not in the batch)."""

    def walk(self, pid: int, forks: int | None = None) -> frozenset[int]:
        """`pid` and its descendants, as `walk.walk_tree` finds them; empty when `pid` does not exist.

        `forks`: the host's count of tasks ever created (/proc/stat `processes`, which counts every fork and thread),
        read before this call. When it is the count read before the last walk, no process or thread was created
        anywhere since: the tree can only have lost members, and a member that ended (or whose parent did, which
        moves it out) is a member that ended. So when that walk found only kept processes and each one's statm still
        reads as a live process's, the tree is that walk's, and the statm files are not read again for the pages.

        Otherwise the kept processes' thread counts and `children` are read first, in two batches. When they read
        as on the last line, and that line's walk found only kept processes, the tree is that line's. Otherwise the
        walk reads one by one only the processes new to it, gone, or with more than one thread."""
        columns = self.kept.columns()
        last = self._last_walk
        if last is not None and (last.root != pid or last.columns is not columns):
            last = None
        self._statm_read = None
        if forks is not None and forks == self._forks_at_last_walk and last is not None:
            statms = _live_statms(columns)
            if statms is not None:
                self._statm_read = (columns, statms)
                return last.tree
        self._forks_at_last_walk = forks
        try:
            statuses = list(map(os.fstat, columns.tasks))
            listed = list(map(os.pread, columns.children, repeat(CHILDREN_READ), repeat(0)))
        except OSError:  # not seen from the kernel's procfs: every process one by one
            statuses, listed = [], []
        if last is not None and last.statuses == statuses and last.listed == listed:
            return last.tree
        known = _kept_children(self.kept, columns, statuses, listed)
        if pid not in known and not os.path.isdir(f"{self.kept.root.path}/{pid}"):
            self._last_walk = None
            return frozenset()

        def children_of(member: int) -> Sequence[int]:
            children = known.get(member)
            return self.children(member) if children is None else children

        tree = walk(children_of, pid)
        # Only a tree whose every process was read in the batches (kept, one thread, a short `children` list) is
        # the same again when the batches read the same; that needs every kept process in the tree, so that
        # `keep_only` leaves the batches as they are.
        whole = len(known) == len(tree) == len(self.kept.by_pid) and tree.issuperset(known)
        short = not listed or max(map(len, listed)) < CHILDREN_READ // 2
        self._last_walk = _Walked(pid, self.kept.columns(), statuses, listed, tree) if whole and short else None
        return tree

    def children(self, pid: int) -> list[int]:
        """`pid`'s children, read on their own (opening its files to keep when there is room)."""
        return self.kept.children(pid)

    def resident(self, pids: frozenset[int]) -> Mapping[int, int]:
        """pid -> resident pages of each of `pids` whose statm reads; every kept process must be among `pids`
        (`keep_only` first). The same mapping as the last line's when every statm read the same."""
        kept = self.kept
        # A statm that cannot be read or parsed reads as None, and is left out.
        others = pids.difference(kept.by_pid)
        by_path = {pid: pages for pid in others if (pages := kept.root.resident_pages(pid)) is not None}
        if not kept.by_pid:
            return self._same_as_last(by_path)
        columns = kept.columns()
        read, self._statm_read = self._statm_read, None
        if read is not None and read[0] is columns:
            datas = read[1]
        else:
            try:
                datas = list(map(os.pread, columns.statms, repeat(STATM_READ), repeat(0)))
            except OSError:  # a process gone since the walk: one by one, forgetting it
                for pid in columns.pids:
                    pages = kept.resident_pages(pid)
                    if pages is not None:
                        by_path[pid] = pages
                return by_path
        last_datas, last_kept = self._last_statm
        if datas != last_datas:  # idle processes read the same bytes: the same pages
            each = resident_pages_each(datas)
            if each is None:  # a file not in the kernel's plain form: each through the checked parser
                last_kept = {pid: pages for pid, data in zip(columns.pids, datas, strict=True)
                             if (pages := resident_pages(data)) is not None}
            else:
                last_kept = dict(zip(columns.pids, each, strict=True))
            self._last_statm = (datas, last_kept)
        if not by_path:
            return last_kept
        return self._same_as_last({**last_kept, **by_path})

    def _same_as_last(self, pages: dict[int, int]) -> Mapping[int, int]:
        """`pages`, or the last line's equal mapping itself: the caller then knows it unchanged by identity."""
        if pages == self._last_resident:
            return self._last_resident
        self._last_resident = pages
        return pages

    def stats(
        self, pids: frozenset[int], others: ProcessFiles | None = None
    ) -> tuple[list[int], list[bytes], list[bytes | None]]:
        """The `stat` and `io` files of `pids` (pids and their files, in one order; an `io` None where it cannot be
        read): the kept ones read in batches, the others through `others` (by path when None); a process whose
        `stat` cannot be read is left out. Every kept process must be among `pids` (`keep_only` first)."""
        kept = self.kept
        found: list[int] = []
        datas: list[bytes] = []
        ios: list[bytes | None] = []
        if kept.by_pid:
            columns = kept.columns()
            try:
                found, datas, ios = columns.pids, *self._kept_stats(columns)
            except OSError:  # a process reaped meanwhile: every one again, one by one after it
                self._ran_at = None
                found, datas, ios = self._each(kept, columns.pids)
            if len(pids) == len(columns.pids):  # the usual: every one kept
                return found, datas, ios
        rest = self._each(others or kept, [pid for pid in pids if pid not in kept.by_pid])
        return [*found, *rest[0]], [*datas, *rest[1]], [*ios, *rest[2]]

    def _each(self, files: ProcessFiles, pids: Sequence[int]) -> tuple[list[int], list[bytes], list[bytes | None]]:
        """The `stat` and `io` of each of `pids`, one process after the other, its `io` read right after its `stat`
        unless the `stat` reads as the last time (the process did not run long enough to move a counter of it): then
        its `io` as read then, any I/O it did showing in the line that next finds it changed. A process whose `stat`
        cannot be read is left out."""
        found: list[int] = []
        datas: list[bytes] = []
        ios: list[bytes | None] = []
        last, self._read_alone = self._read_alone, {}
        for pid in pids:
            data = files.stat(pid)
            if data:
                before = last.get(pid)
                io = before[1] if before is not None and before[0] == data else files.io(pid)
                found.append(pid)
                datas.append(data)
                ios.append(io)
                self._read_alone[pid] = (data, io)
        return found, datas, ios

    def _kept_stats(self, columns: Columns) -> tuple[list[bytes], list[bytes | None]]:
        """The kept processes' `stat` and `io` files: read again only for those `read_again` names, the others as
        last read. `OSError` when a `stat` cannot be read (its process was reaped meanwhile)."""
        if not self.kept.schedstats:
            return list(map(os.pread, columns.stats, repeat(STAT_READ), repeat(0))), list(map(read_io, columns.ios))
        ran = list(map(os.pread, columns.schedstats, repeat(SCHEDSTAT_READ), repeat(0)))
        last = self._ran_at
        if last is None or last.columns is not columns:  # other processes than last read: every one
            datas = list(map(os.pread, columns.stats, repeat(STAT_READ), repeat(0)))
            ios = list(map(read_io, columns.ios))
        else:
            again = read_again(columns.pids, ran, last.ran, self.kept.threaded)
            if not again:  # none ran (an idle tree): the last reading's, schedstats and all
                return last.stats, last.ios
            datas, ios = list(last.stats), list(last.ios)
            stats, io_files = columns.stats, columns.ios
            for place in again:
                datas[place] = os.pread(stats[place], STAT_READ, 0)
                ios[place] = read_io(io_files[place])
        self._ran_at = _RanAt(columns, ran, datas, ios)
        return datas, ios

    def stat(self, pid: int) -> bytes | None:
        return self.kept.stat(pid)

    def io(self, pid: int) -> bytes | None:
        return self.kept.io(pid)

    def keep_only(self, pids: frozenset[int]) -> None:
        self.kept.keep_only(pids)

    def close(self) -> None:
        self.kept.close()


def _live_statms(columns: Columns) -> list[bytes] | None:
    """Each kept process's statm, read in one batch; None when one cannot be read (the process was reaped) or
    reads as no process's memory at all (a zombie's `0 0 0 ...`: it ended, and its children moved out)."""
    try:
        datas = list(map(os.pread, columns.statms, repeat(STATM_READ), repeat(0)))
    except OSError:
        return None
    # A live process has a size; no digit sorts before 0 and none is written with a leading 0, so the smallest
    # text shows whether any is empty or starts with a 0 size.
    smallest = min(datas, default=b"")
    return None if not smallest or smallest.startswith(b"0 ") else datas


def _kept_children(
    kept: KeptProcesses, columns: Columns, statuses: list[os.stat_result], listed: list[bytes]
) -> dict[int, Sequence[int]]:
    """pid -> children of each kept process that has one thread, from the batches; a gone process's descriptors
    are closed."""
    known: dict[int, Sequence[int]] = {}
    for pid, status, children_fd, data in zip(columns.pids, statuses, columns.children, listed, strict=False):
        threads = status.st_nlink
        if threads == ONE_THREAD:
            if pid in kept.threaded:
                kept.one_thread(pid)
            if not data:
                known[pid] = _NO_CHILDREN
            else:
                known[pid] = pids_in(data if len(data) < CHILDREN_READ // 2 else read_from(children_fd))
        elif threads < ONE_THREAD:  # no threads left: gone, and the pid free for another process
            kept.forget(pid)
    return known
