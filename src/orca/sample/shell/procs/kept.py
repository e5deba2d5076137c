"""The descriptors of the run's processes' files, kept open from line to line (`tree_files.py` reads through them).

For each kept process: its task directory (whose link count is 2 + its threads), its main thread's `children`, its
`statm`, `stat`, `schedstat` and `io`; for one with more threads, each other thread's `children` too, since a child
belongs to the thread that forked it. A descriptor is bound to its process, not to the pid: once the process is
gone, reads fail and the pid's files are opened afresh, so a reused pid never reads as the old process.

Only under the kernel's procfs (`ProcRoot.trusted`), whose process files are regular: elsewhere every read goes by
path, checked. Within the open-files limit's share (`kept_files_at_most`, docs/behaviour.md §4.6): three quarters of
it for processes, a quarter for threads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

from orca.sample.parse.statm import resident_pages
from orca.sample.shared.bounded import OUT_OF_DESCRIPTORS, read_from
from orca.sample.shared.sysconf import kept_files_at_most
from orca.sample.shell.procs.walk import ProcRoot, pids_in

_FLAGS = os.O_RDONLY | os.O_CLOEXEC
STATM_READ = 4096
"""`statm` is seven numbers: one `pread` reads it whole."""
STAT_READ = 4096
"""`stat` is one line of some 300 bytes (52 fields and a comm of at most 16 bytes): one `pread` reads it whole."""
IO_READ = 512
"""`io` is seven short lines: one `pread` reads it whole."""
ONE_THREAD = 3
"""A task directory's link count is 2 + its threads."""


class PidFiles(NamedTuple):
    """The kept descriptors of one process."""

    task: int
    """`/proc/<pid>/task`, a directory: its link count is 2 + the process's threads."""
    children: int
    """`/proc/<pid>/task/<pid>/children`: the children its main thread forked."""
    statm: int
    stat: int
    schedstat: int
    """-1 where the kernel has no `schedstat` files (CONFIG_SCHED_INFO off): `stat` is then read every line."""
    io: int
    """-1 where it cannot be read (another user's process; a kernel without CONFIG_TASK_IO_ACCOUNTING)."""


class Columns(NamedTuple):
    """The kept descriptors as columns, one entry per kept process, for reads in batches (`map` over a column: no
    Python runs per process). A new `Columns` is made whenever a process is kept or let go: one that is the same
    object as a line's before holds the same processes."""

    pids: list[int]
    tasks: list[int]
    children: list[int]
    statms: list[int]
    stats: list[int]
    schedstats: list[int]
    ios: list[int]


class KeptProcesses:
    """The kept descriptors of the run's processes; `close()` closes them all."""

    KEPT_AT_MOST = 128
    """Processes whose files are kept (six descriptors each); a larger tree reads the rest by path."""
    FILES_PER_PROCESS = 6
    THREADS_KEPT_AT_MOST = 256
    """`children` files of the other threads of kept processes with more than one, kept open in all; past that,
    they are opened and closed each line."""

    def __init__(self, root: ProcRoot, share: int | None = None) -> None:
        """`share`: the descriptors it may keep (by default, the open-files limit's share)."""
        self.root = root
        self._fds: dict[int, PidFiles] = {}
        self.by_pid: Mapping[int, PidFiles] = self._fds
        """pid -> its kept descriptors (read only: for the set operations of the batches)."""
        self._columns: Columns | None = None
        """`_fds` as columns; None once `_fds` changed, until the next batch needs them."""
        share = (kept_files_at_most() if share is None else share) if root.trusted else 0
        self._keep_at_most = min(self.KEPT_AT_MOST, share * 3 // (4 * self.FILES_PER_PROCESS))
        self._threads_at_most = min(self.THREADS_KEPT_AT_MOST, share // 4)
        self.threaded: dict[int, dict[str, int]] = {}
        """pid -> thread id -> descriptor of that thread's `children`, for kept processes with more threads."""
        self._threads_kept = 0
        self.schedstats = root.trusted and os.path.exists(f"{root.path}/self/schedstat")
        """The kernel has `schedstat` files: a process's `stat` need not be read again when it did not run."""
        self.io_files = counts_io(root)

    def columns(self) -> Columns:
        columns = self._columns
        if columns is None:
            fds = self._fds
            columns = self._columns = Columns(
                list(fds), [f.task for f in fds.values()], [f.children for f in fds.values()],
                [f.statm for f in fds.values()], [f.stat for f in fds.values()], [f.schedstat for f in fds.values()],
                [f.io for f in fds.values()],
            )
        return columns

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
        return self.root.children(pid)

    def stat(self, pid: int) -> bytes | None:
        """One process's `stat`, through its kept descriptor when it has one (so that it is the process this
        descriptor was opened for, whatever its pid names now); None when it is gone."""
        files = self._fds.get(pid)
        if files is None:
            return self.root.read(pid, "stat")
        try:
            return os.pread(files.stat, STAT_READ, 0) or None
        except OSError:  # ESRCH: the process is gone
            self.forget(pid)
            return None

    def io(self, pid: int) -> bytes | None:
        """One process's `io`, through its kept descriptor when it has one; None when it cannot be read (gone,
        another user's, none on this kernel)."""
        files = self._fds.get(pid)
        if files is None:
            return self.root.read(pid, "io")
        return read_io(files.io)

    def resident_pages(self, pid: int) -> int | None:
        """One process's resident pages from its `statm`; None when it is gone."""
        files = self._fds.get(pid)
        if files is None:
            return self.root.resident_pages(pid)
        try:
            data = os.pread(files.statm, STATM_READ, 0)
        except OSError:  # ESRCH: the process is gone
            self.forget(pid)
            return None
        return None if not data else resident_pages(data)

    def one_thread(self, pid: int) -> None:
        """`pid` is down to one thread: its other threads' descriptors are of no use."""
        for fd in self.threaded.pop(pid, {}).values():
            os.close(fd)
            self._threads_kept -= 1

    def keep_only(self, pids: frozenset[int]) -> None:
        for pid in self._fds.keys() - pids:
            self.forget(pid)

    def forget(self, pid: int) -> None:
        files = self._fds.pop(pid, None)
        if files is not None:
            self._columns = None
            for fd in files:
                if fd >= 0:  # no `schedstat` or no readable `io`
                    os.close(fd)
        self.one_thread(pid)

    def close(self) -> None:
        for pid in list(self._fds):
            self.forget(pid)

    def _files(self, pid: int) -> PidFiles | None:
        kept = self._fds.get(pid)
        if kept is not None or len(self._fds) >= self._keep_at_most:
            return kept
        base = f"{self.root.path}/{pid}"
        opened: list[int] = []
        try:
            for path in (f"{base}/task", f"{base}/task/{pid}/children", f"{base}/statm", f"{base}/stat"):
                opened.append(os.open(path, _FLAGS))
            opened.append(os.open(f"{base}/schedstat", _FLAGS) if self.schedstats else -1)
            opened.append(open_io(f"{base}/io", self.io_files))
        except OSError:  # gone; or out of descriptors, which the read by path then tells
            for fd in opened:
                if fd >= 0:
                    os.close(fd)
            return None
        files = self._fds[pid] = PidFiles(*opened)
        self._columns = None
        return files

    def _threads_children(self, pid: int, files: PidFiles) -> list[int]:
        """The children of every thread of a kept process with more than one: its threads listed through the kept
        task directory (so they are its own, whatever the pid names by now), each thread's `children` file kept
        open while there is room."""
        tids = os.listdir(files.task)
        kept = self.threaded.setdefault(pid, {})
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
        except OSError as error:  # the thread ended; but out of descriptors, its children are not known to be none
            if error.errno in OUT_OF_DESCRIPTORS:
                raise
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


def counts_io(root: ProcRoot) -> bool:
    """Whether the kernel counts each process's I/O (CONFIG_TASK_IO_ACCOUNTING): a missing `io` is then a process's
    that is gone, not one the kernel has none of."""
    return os.path.exists(f"{root.path}/self/io")


def open_io(path: str, counted: bool) -> int:
    """A process's `io` opened to keep, or -1 where it cannot be read: another user's (EACCES), or none on this
    kernel (not `counted`). The `OSError` when the process is gone or no descriptor was left."""
    if not counted:
        return -1
    try:
        return os.open(path, _FLAGS)
    except PermissionError:
        return -1


def read_io(fd: int) -> bytes | None:
    """A process's `io` through a kept descriptor (-1: none); None when it cannot be read: gone, or no longer the
    reader's to read (the process exec'd a setuid program)."""
    if fd < 0:
        return None
    try:
        return os.pread(fd, IO_READ, 0) or None
    except OSError:
        return None
