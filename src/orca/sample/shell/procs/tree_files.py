"""Descriptors of the run's processes' files, kept open from line to line.

Each line reads, for every process of the tree, whether it has more than one thread, its children, its resident
pages and its CPU times (`stat`). By path that is eleven system calls and four /proc lookups a process; through
descriptors kept open it is four `fstat`/`pread`s, and fewer: `stat`, the dearest of them for the kernel to make, is
read again only for a process that ran since it was last read (its `schedstat`, a much cheaper file, moved) or has
more than one thread (bench/README.md). A descriptor is bound to its process, not to the pid: once the
process is gone, reads fail and the pid's files are opened afresh, so a reused pid never reads as the old process.

A line runs after seconds of sleep, with the CPU's and the interpreter's caches cold, so every call costs several
times its price in a tight loop. The kept processes' files are read in batches (`map` over the descriptors: no
Python runs per process) and the statm files summed in one step; a line whose batches read as the last line's
takes that line's tree, and its sum when the statm files read the same. Only a process that is new, gone or has
more than one thread is read on its own; one with more threads lists them through its kept task directory and
keeps each thread's `children` file open too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import NamedTuple

from orca.sample.compute.tree import walk
from orca.sample.parse.statm import resident_pages, resident_pages_total
from orca.sample.shell.bounded import read_from
from orca.sample.shell.procs.walk import ProcRoot, pids_in
from orca.sample.shell.sysconf import kept_files_at_most

_FLAGS = os.O_RDONLY | os.O_CLOEXEC
STATM_READ = 4096
STAT_READ = 4096
"""`stat` is one line of some 300 bytes (52 fields and a comm of at most 16 bytes): one `pread` reads it whole."""
SCHEDSTAT_READ = 128
"""`schedstat` is three numbers: the main thread's time on a CPU (ns), its wait for one, its times run."""
CHILDREN_READ = 4096
"""One `pread` of a kept `children` file in the batch. Under half of it is the whole list (a seq_file read stops
short only at its end or before a record that would not fit); a longer one is read again by `read_from`."""
ONE_THREAD = 3
"""A task directory's link count is 2 + its threads."""
_NO_CHILDREN: Sequence[int] = ()


class _PidFiles(NamedTuple):
    """The kept descriptors of one process."""

    task: int
    """`/proc/<pid>/task`, a directory: its link count is 2 + the process's threads."""
    children: int
    """`/proc/<pid>/task/<pid>/children`: the children its main thread forked."""
    statm: int
    stat: int
    schedstat: int
    """-1 where the kernel has no `schedstat` files (CONFIG_SCHED_INFO off): `stat` is then read every line."""


class _Columns(NamedTuple):
    """The kept descriptors as columns, one entry per kept process, for the batched reads."""

    pids: list[int]
    tasks: list[int]
    children: list[int]
    statms: list[int]
    stats: list[int]
    schedstats: list[int]


class _RanAt(NamedTuple):
    """The kept processes' `schedstat` and `stat` files as last read, for the columns they were read through."""

    columns: _Columns
    ran: list[bytes]
    stats: list[bytes]


class _Walked(NamedTuple):
    """A walk, and the batches it was made from."""

    root: int
    statuses: list[os.stat_result]
    listed: list[bytes]
    tree: frozenset[int]


class TreeFiles:
    """The kept descriptors of the run's tree, for `walk` and the sums; `close()` closes them all.

    Only under the kernel's procfs (`ProcRoot.trusted`), whose process files are regular: elsewhere every read
    goes by path, checked. Within the open-files limit's share (`kept_files_at_most`, docs/behaviour.md §4.6):
    three quarters of it for processes, a quarter for threads."""

    KEPT_AT_MOST = 128
    """Processes whose files are kept (five descriptors each); a larger tree reads the rest by path."""
    FILES_PER_PROCESS = 5
    THREADS_KEPT_AT_MOST = 256
    """`children` files of the other threads of kept processes with more than one, kept open in all; past that,
    they are opened and closed each line."""

    def __init__(self, root: ProcRoot) -> None:
        self._root = root
        self._fds: dict[int, _PidFiles] = {}
        self._columns: _Columns | None = None
        """`_fds` as columns; None once `_fds` changed, until the next batch needs them."""
        share = kept_files_at_most() if root.trusted else 0
        self._keep_at_most = min(self.KEPT_AT_MOST, share * 3 // (4 * self.FILES_PER_PROCESS))
        self._threads_at_most = min(self.THREADS_KEPT_AT_MOST, share // 4)
        self._last_walk: _Walked | None = None
        """The last line's walk, while the next may find the same tree from the batches alone."""
        self._last_statm: tuple[list[bytes], int] = ([], 0)
        """The last line's kept statm files and their resident pages in all."""
        self._forks_at_last_walk: int | None = None
        """The host's fork count (/proc/stat `processes`) read before the last walk; None when not given."""
        self._statm_read: list[bytes] | None = None
        """The kept statm files as a walk that took the last tree read them, for `total_pages` to use."""
        self._thread_files: dict[int, dict[str, int]] = {}
        """pid -> thread id -> descriptor of that thread's `children`, for kept processes with more threads."""
        self._threads_kept = 0
        self._schedstats = root.trusted and os.path.exists(f"{root.path}/self/schedstat")
        self._ran_at: _RanAt | None = None

    def _files(self, pid: int) -> _PidFiles | None:
        kept = self._fds.get(pid)
        if kept is not None or len(self._fds) >= self._keep_at_most:
            return kept
        base = f"{self._root.path}/{pid}"
        opened: list[int] = []
        try:
            for path in (f"{base}/task", f"{base}/task/{pid}/children", f"{base}/statm", f"{base}/stat"):
                opened.append(os.open(path, _FLAGS))
            opened.append(os.open(f"{base}/schedstat", _FLAGS) if self._schedstats else -1)
        except OSError:
            for fd in opened:
                os.close(fd)
            return None
        files = self._fds[pid] = _PidFiles(*opened)
        self._columns = None
        self._last_walk = None
        return files

    def _kept_columns(self) -> _Columns:
        columns = self._columns
        if columns is None:
            fds = self._fds
            columns = self._columns = _Columns(
                list(fds), [f.task for f in fds.values()], [f.children for f in fds.values()],
                [f.statm for f in fds.values()], [f.stat for f in fds.values()], [f.schedstat for f in fds.values()],
            )
        return columns

    def walk(self, pid: int, forks: int | None = None) -> frozenset[int]:
        """`pid` and its descendants, as `process_tree.walk_tree` finds them; empty when `pid` does not exist.

        `forks`: the host's count of tasks ever created (/proc/stat `processes`, which counts every fork and thread),
        read before this call. When it is the count read before the last walk, no process or thread was created
        anywhere since: the tree can only have lost members, and a member that ended (or whose parent did, which
        moves it out) is a member that ended. So when that walk found only kept processes and each one's statm still
        reads as a live process's, the tree is that walk's, and the statm files are not read again for the sum.

        Otherwise the kept processes' thread counts and `children` are read first, in two batches. When they read
        as on the last line, and that line's walk found only kept processes, the tree is that line's. Otherwise the
        walk reads one by one only the processes new to it, gone, or with more than one thread."""
        last = self._last_walk
        self._statm_read = None
        if forks is not None and forks == self._forks_at_last_walk and last is not None and last.root == pid:
            statms = self._live_statms()
            if statms is not None:
                self._statm_read = statms
                return last.tree
        self._forks_at_last_walk = forks
        columns = self._kept_columns()
        try:
            statuses = list(map(os.fstat, columns.tasks))
            listed = list(map(os.pread, columns.children, repeat(CHILDREN_READ), repeat(0)))
        except OSError:  # not seen from the kernel's procfs: every process one by one
            statuses, listed = [], []
        if last is not None and last.root == pid and last.statuses == statuses and last.listed == listed:
            return last.tree
        known = self._kept_children(columns, statuses, listed)
        if pid not in known and not os.path.isdir(f"{self._root.path}/{pid}"):
            self._last_walk = None
            return frozenset()

        def children_of(member: int) -> Sequence[int]:
            children = known.get(member)
            return self.children(member) if children is None else children

        tree = walk(children_of, pid)
        # Only a tree whose every process was read in the batches (kept, one thread, a short `children` list) is
        # the same again when the batches read the same; that needs every kept process in the tree, so that
        # `keep_only` leaves the batches as they are.
        whole = len(known) == len(tree) == len(self._fds) and tree.issuperset(known)
        short = not listed or max(map(len, listed)) < CHILDREN_READ // 2
        self._last_walk = _Walked(pid, statuses, listed, tree) if whole and short else None
        return tree

    def _live_statms(self) -> list[bytes] | None:
        """Each kept process's statm, read in one batch; None when one cannot be read (the process was reaped) or
        reads as no process's memory at all (a zombie's `0 0 0 ...`: it ended, and its children moved out)."""
        try:
            datas = list(map(os.pread, self._kept_columns().statms, repeat(STATM_READ), repeat(0)))
        except OSError:
            return None
        # A live process has a size; no digit sorts before 0 and none is written with a leading 0, so the smallest
        # text shows whether any is empty or starts with a 0 size.
        smallest = min(datas, default=b"")
        return None if not smallest or smallest.startswith(b"0 ") else datas

    def _kept_children(
        self, columns: _Columns, statuses: list[os.stat_result], listed: list[bytes]
    ) -> dict[int, Sequence[int]]:
        """pid -> children of each kept process that has one thread, from the batches; a gone process's descriptors
        are closed."""
        known: dict[int, Sequence[int]] = {}
        threaded = self._thread_files
        for pid, status, children_fd, data in zip(columns.pids, statuses, columns.children, listed, strict=False):
            threads = status.st_nlink
            if threads == ONE_THREAD:
                if pid in threaded:  # down to one thread: the others' descriptors are of no use
                    self._forget_threads(pid)
                if not data:
                    known[pid] = _NO_CHILDREN
                else:
                    known[pid] = pids_in(data if len(data) < CHILDREN_READ // 2 else read_from(children_fd))
            elif threads < ONE_THREAD:  # no threads left: gone, and the pid free for another process
                self.forget(pid)
        return known

    def children(self, pid: int) -> list[int]:
        """`pid`'s children, read on their own (opening its files to keep when there is room)."""
        files = self._files(pid)
        if files is not None:
            try:
                threads = os.fstat(files.task).st_nlink
                if threads == ONE_THREAD:  # one thread: its own `children` file is all of them
                    return pids_in(read_from(files.children))
                if threads > ONE_THREAD:
                    return self._threads_children(pid, files)
            except OSError:
                self.forget(pid)
        return self._root.children(pid)

    def _threads_children(self, pid: int, files: _PidFiles) -> list[int]:
        """The children of every thread of a kept process with more than one: its threads listed through the kept
        task directory (so they are its own, whatever the pid names by now), each thread's `children` file kept
        open while there is room."""
        tids = os.listdir(files.task)
        kept = self._thread_files.setdefault(pid, {})
        for ended in kept.keys() - set(tids):
            os.close(kept.pop(ended))
            self._threads_kept -= 1
        main = str(pid)
        kids: list[int] = []
        for tid in tids:
            data = read_from(files.children) if tid == main else self._thread_children(files.task, kept, tid)
            if data:
                kids.extend(pids_in(data))
        return kids

    def _thread_children(self, task: int, kept: dict[str, int], tid: str) -> bytes:
        """One thread's `children`, through its kept descriptor, opened now (and kept if there is room) if new; none
        once the thread has ended."""
        fd = kept.get(tid)
        try:
            if fd is not None:
                return read_from(fd)
            fd = os.open(f"{tid}/children", _FLAGS, dir_fd=task)
        except OSError:
            return b""
        keeping = self._threads_kept < self._threads_at_most
        if keeping:
            kept[tid] = fd
            self._threads_kept += 1
        try:
            return read_from(fd)
        except OSError:
            return b""
        finally:
            if not keeping:
                os.close(fd)

    def total_pages(self, pids: frozenset[int]) -> int:
        """The resident pages of `pids` in all, a process without a readable statm adding nothing; every kept
        process must be among `pids` (`keep_only` first)."""
        # A statm that cannot be read or parsed reads as None: `filter` drops it (and the zeros, which add nothing).
        by_path = sum(filter(None, map(self._root.resident_pages, pids.difference(self._fds))))
        if not self._fds:
            return by_path
        datas = self._statm_read
        self._statm_read = None
        if datas is None:
            try:
                datas = list(map(os.pread, self._kept_columns().statms, repeat(STATM_READ), repeat(0)))
            except OSError:  # a process gone since the walk: one by one, forgetting it
                return by_path + sum(filter(None, map(self.resident_pages, list(self._fds))))
        last_datas, last_kept = self._last_statm
        if datas == last_datas:  # idle processes: the same bytes, the same pages
            return by_path + last_kept
        kept = resident_pages_total(datas)
        if kept is None:  # a file not in the kernel's plain form: each through the checked parser
            kept = sum(filter(None, map(resident_pages, datas)))
        self._last_statm = (datas, kept)
        return by_path + kept

    def resident_pages(self, pid: int) -> int | None:
        files = self._fds.get(pid)
        if files is None:
            return self._root.resident_pages(pid)
        try:
            data = os.pread(files.statm, STATM_READ, 0)  # seven numbers: one read, as for a kept `comm`
        except OSError:  # ESRCH: the process is gone
            self.forget(pid)
            return None
        return None if not data else resident_pages(data)

    def stats(
        self, pids: frozenset[int], others: Callable[[int], bytes | None] | None = None
    ) -> tuple[list[int], list[bytes]]:
        """The `stat` files of `pids` (pids and their files, in one order): the kept ones read in one batch, the
        others by `others` (by path when None); a process whose file cannot be read is left out. Every kept process
        must be among `pids` (`keep_only` first)."""
        kept, datas = [], []
        if self._fds:
            columns = self._kept_columns()
            try:
                kept, datas = columns.pids, self._kept_stats(columns)
            except OSError:  # a process reaped meanwhile: every one again, one by one after it
                self._ran_at = None
                found = [(pid, data) for pid in list(self._fds) if (data := self.stat(pid))]
                kept, datas = [pid for pid, _ in found], [data for _, data in found]
            if len(pids) == len(self._fds):  # the usual: every one kept
                return kept, datas
        read = others or self.stat
        rest = [(pid, data) for pid in pids if pid not in self._fds and (data := read(pid))]
        return [*kept, *(pid for pid, _ in rest)], [*datas, *(data for _, data in rest)]

    def _kept_stats(self, columns: _Columns) -> list[bytes]:
        """The kept processes' `stat` files: those of the processes that have one thread and whose `schedstat` reads
        as when their `stat` was last read are that `stat` (a process that did not run has the same times, and the
        same children's times: only it, running, waits for its children); the others read again."""
        if not self._schedstats:
            return list(map(os.pread, columns.stats, repeat(STAT_READ), repeat(0)))
        ran = list(map(os.pread, columns.schedstats, repeat(SCHEDSTAT_READ), repeat(0)))
        last = self._ran_at
        if last is None or last.columns is not columns:  # new columns: every one read
            datas = list(map(os.pread, columns.stats, repeat(STAT_READ), repeat(0)))
        elif ran == last.ran and not self._thread_files:  # none ran (an idle tree)
            return last.stats
        else:
            threaded = self._thread_files
            rows = zip(columns.pids, columns.stats, ran, last.ran, last.stats, strict=True)
            datas = [
                old if now == before and pid not in threaded else os.pread(fd, STAT_READ, 0)
                for pid, fd, now, before, old in rows
            ]
        self._ran_at = _RanAt(columns, ran, datas)
        return datas

    def stat(self, pid: int) -> bytes | None:
        """One process's `stat`, through its kept descriptor when it has one (so that it is the process this
        descriptor was opened for, whatever its pid names now); None when it is gone."""
        files = self._fds.get(pid)
        if files is None:
            return self._root.read(pid, "stat")
        try:
            return os.pread(files.stat, STAT_READ, 0) or None
        except OSError:  # ESRCH: the process is gone
            self.forget(pid)
            return None

    def keep_only(self, pids: frozenset[int]) -> None:
        for pid in self._fds.keys() - pids:
            self.forget(pid)

    def forget(self, pid: int) -> None:
        files = self._fds.pop(pid, None)
        if files is not None:
            self._columns = None
            self._last_walk = None
            self._statm_read = None
            for fd in files:
                if fd >= 0:  # no `schedstat` on this kernel
                    os.close(fd)
        self._forget_threads(pid)

    def _forget_threads(self, pid: int) -> None:
        for fd in self._thread_files.pop(pid, {}).values():
            os.close(fd)
            self._threads_kept -= 1

    def close(self) -> None:
        for pid in list(self._fds):
            self.forget(pid)
