"""Descriptors of the run's processes' files, kept open from line to line.

Each line reads, for every process of the tree, whether it has more than one thread, its children and its
resident pages. By path that is eight system calls and three /proc lookups a process; through descriptors kept
open it is three `fstat`/`pread`s. A descriptor is bound to its process, not to the pid: once the process is gone,
reads fail and the pid's files are opened afresh, so a reused pid never reads as the old process.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from orca.sample.parse.statm import resident_pages
from orca.sample.shell.process_tree import ProcRoot, pids_in
from orca.sample.shell.small_files import read_from

_FLAGS = os.O_RDONLY | os.O_CLOEXEC
STATM_READ = 4096


class _PidFiles(NamedTuple):
    """The kept descriptors of one process."""

    task: int
    """`/proc/<pid>/task`, a directory: its link count is 2 + the process's threads."""
    children: int
    """`/proc/<pid>/task/<pid>/children`: the children its main thread forked."""
    statm: int


class TreeFiles:
    """The kept descriptors of the run's tree, for `walk_tree` and the sums; `close()` closes them all.

    Only under the kernel's procfs (`ProcRoot.trusted`), whose process files are regular: elsewhere every read
    goes by path, checked."""

    KEPT_AT_MOST = 128
    """Processes whose files are kept (three descriptors each); a larger tree reads the rest by path."""

    def __init__(self, root: ProcRoot) -> None:
        self._root = root
        self._fds: dict[int, _PidFiles] = {}
        self._keep_at_most = self.KEPT_AT_MOST if root.trusted else 0

    def _files(self, pid: int) -> _PidFiles | None:
        kept = self._fds.get(pid)
        if kept is not None or len(self._fds) >= self._keep_at_most:
            return kept
        base = f"{self._root.path}/{pid}"
        opened: list[int] = []
        try:
            for path in (f"{base}/task", f"{base}/task/{pid}/children", f"{base}/statm"):
                opened.append(os.open(path, _FLAGS))
        except OSError:
            for fd in opened:
                os.close(fd)
            return None
        files = self._fds[pid] = _PidFiles(*opened)
        return files

    def children(self, pid: int) -> list[int]:
        files = self._files(pid)
        if files is not None:
            try:
                if os.fstat(files.task).st_nlink == 3:  # one thread: its own `children` file is all of them
                    return pids_in(read_from(files.children))
            except OSError:
                self.forget(pid)
        return self._root.children(pid)

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

    def keep_only(self, pids: frozenset[int]) -> None:
        for pid in [pid for pid in self._fds if pid not in pids]:
            self.forget(pid)

    def forget(self, pid: int) -> None:
        for fd in self._fds.pop(pid, ()):
            os.close(fd)

    def close(self) -> None:
        for pid in list(self._fds):
            self.forget(pid)
