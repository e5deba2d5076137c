"""argv[0] of every process on the host, remembered between lines, for `--match` (docs/behaviour.md §3.4).

`--match` has to look at every process; a line reads as little as it can per process: argv[0] changes only on
exec, which changes `comm` (and the process's identity in `stat`), so `cmdline` is read again only when those did.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import NamedTuple

from orca.sample.shared.sysconf import kept_files_at_most
from orca.sample.shell.procs.kept import counts_io, open_io, read_io
from orca.sample.shell.procs.states import DEAD_STATES
from orca.sample.shell.procs.walk import KTHREADD, ProcRoot

_FLAGS = os.O_RDONLY | os.O_CLOEXEC
COMM_READ = 64
"""`comm` is at most 16 bytes (TASK_COMM_LEN): one `pread` of a kept descriptor reads it whole, the fast path
`--match` takes for every host process on every line."""
STAT_READ = 4096
UNREADABLE = -2
"""A kept `io` descriptor that cannot be had (another user's process; none on this kernel): not asked for again."""


@dataclass(slots=True)
class _Seen:
    """What `Argv0Files` knows of one process."""

    fd: int
    """Its `comm`, kept open; -1 when read by path (beyond `KEPT_AT_MOST`)."""
    comm: bytes | None
    """`comm` when `argv0` was read; None to read `cmdline` again next line (an empty one, not yet settled)."""
    argv0: str
    kernel_thread: bool
    stat_fd: int = -1
    """Its `stat`, kept open once the run's CPU asked for it (a matched process), while `fd` is kept."""
    io_fd: int = -1
    """Its `io`, kept open beside `stat_fd`; `UNREADABLE` once it proved to be another user's (or the kernel has
    none)."""


class Argv0Files:
    """The walk's matcher: each process's `comm` every line, its `cmdline` only when `comm` changed.

    `comm` is read through a descriptor kept open from line to line (a `pread` instead of an open, read and
    close). A descriptor is bound to its process, not its pid: once the process is gone the read fails, so a reused
    pid is never taken for the old process. Kernel threads (kthreadd's children) never exec, though a kworker's
    `comm` names its current work: their empty `cmdline` is read once.

    Descriptors are kept for at most `KEPT_AT_MOST` processes (each holds a page of kernel memory for its buffer),
    and within the open-files limit's share (`kept_files_at_most`, docs/behaviour.md §4.6). The others are read by
    path, remembered by pid and `comm`. Only under the kernel's procfs (`ProcRoot.trusted`): elsewhere every read
    goes by path, checked. `close()` closes them all.
    """

    KEPT_AT_MOST = 1024

    def __init__(self, root: ProcRoot, share: int | None = None) -> None:
        """`share`: the descriptors it may keep (by default, the open-files limit's share)."""
        self._root = root
        self._seen: dict[int, _Seen] = {}
        self._kept = 0
        share = kept_files_at_most() if share is None else share
        self._keep_at_most = min(self.KEPT_AT_MOST, share) if root.trusted else 0
        self._io_files = counts_io(root)

    def matching(self, argv0: str, keep: bool = True) -> list[int]:
        """The pids of the processes whose argv[0] is `argv0` now; without `keep`, every file read by path and
        nothing kept open (the baseline, read before the kernel files' descriptors are kept)."""
        listed = {int(name): name for name in self._root.pid_names()}
        for pid in [pid for pid in self._seen if pid not in listed]:
            self._forget(self._seen.pop(pid))
        matched: list[int] = []
        for pid, name in listed.items():
            seen = self._look(pid, name, keep)
            if seen is not None and seen.argv0 == argv0:
                matched.append(pid)
        return matched

    def _look(self, pid: int, name: str, keep: bool = True) -> _Seen | None:
        """The process `pid` as it is now, read as little as its last reading allows; None when it is gone."""
        seen = self._seen.get(pid)
        comm = self._read_kept(seen)
        if comm is None or seen is None:
            fd, comm = self._open_comm(name) if keep else (-1, self._root.read(name, "comm"))
            if comm is None:
                self._forget(self._seen.pop(pid, None))
                return None  # it exited
            if seen is not None and seen.fd < 0 and fd >= 0 and comm == seen.comm:
                seen.fd = fd  # read by path until now, remembered by pid and `comm`: kept from now on
            # New; or its old process is gone and the pid names another one; or there is room to keep it now.
            elif seen is None or seen.fd >= 0 or fd >= 0:
                self._forget(seen)
                seen = self._seen[pid] = _Seen(fd=fd, comm=None, argv0="", kernel_thread=False)
        if comm == seen.comm or (seen.kernel_thread and seen.fd >= 0):
            return seen
        seen.argv0 = self._root.argv0(name)
        # An empty argv0 is a kernel thread for good, or a zombie or a process caught mid-exec: read it again.
        seen.kernel_thread = not seen.argv0 and self._is_kernel_thread(pid)
        seen.comm = comm if seen.argv0 or seen.kernel_thread else None
        return seen

    def _read_kept(self, seen: _Seen | None) -> bytes | None:
        """`comm` through the kept descriptor; None without one, or when its process is gone (ESRCH)."""
        if seen is None or seen.fd < 0:
            return None
        try:
            return os.pread(seen.fd, COMM_READ, 0)
        except OSError:
            return None

    def _open_comm(self, name: str) -> tuple[int, bytes | None]:
        """(descriptor or -1, `comm`) of a process; a descriptor kept only while there is room."""
        if self._kept >= self._keep_at_most:
            return -1, self._root.read(name, "comm")
        try:
            fd = os.open(f"{self._root.path}/{name}/comm", _FLAGS)
        except OSError:  # gone; or out of descriptors (EMFILE), when reading by path still may work
            return -1, self._root.read(name, "comm")
        try:
            comm = os.pread(fd, COMM_READ, 0)
        except OSError:
            os.close(fd)
            return -1, None
        self._kept += 1
        return fd, comm

    def _is_kernel_thread(self, pid: int) -> bool:
        if pid == KTHREADD:
            return True
        fields = self._root.stat_fields(pid)
        if fields is None:
            return False
        _, ppid, _, _ = fields
        return ppid == KTHREADD

    def stat(self, pid: int) -> bytes | None:
        """The `stat` of process `pid` as this line's matching saw it: through a descriptor kept beside its kept
        `comm`, opened the first time and within the same bound (so a reused pid is never read as it); by path for
        a process whose `comm` is read by path. None when it is gone."""
        seen = self._seen.get(pid)
        if seen is None or seen.fd < 0:
            return self._root.read(pid, "stat")
        if seen.stat_fd < 0:
            if self._kept >= self._keep_at_most:
                return self._root.read(pid, "stat")
            try:
                seen.stat_fd = os.open(f"{self._root.path}/{pid}/stat", _FLAGS)
            except OSError:  # gone (then by path too); or out of descriptors, which the read by path tells
                return self._root.read(pid, "stat")
            self._kept += 1
        try:
            return os.pread(seen.stat_fd, STAT_READ, 0) or None
        except OSError:  # ESRCH: the process is gone
            return None

    def io(self, pid: int) -> bytes | None:
        """The `io` of process `pid`: through a descriptor kept beside its kept `stat` (opened with it the first time,
        within the same bound), else by path; None when it cannot be read (gone, another user's)."""
        seen = self._seen.get(pid)
        if seen is None or seen.stat_fd < 0:
            return self._root.read(pid, "io")
        if seen.io_fd == -1:
            if self._kept >= self._keep_at_most:
                return self._root.read(pid, "io")
            try:
                fd = open_io(f"{self._root.path}/{pid}/io", self._io_files)
            except OSError:  # gone; or out of descriptors, which the read by path tells
                return self._root.read(pid, "io")
            if fd < 0:  # another user's, which it stays while its `stat` is kept; or none on this kernel
                seen.io_fd = UNREADABLE
                return None
            seen.io_fd = fd
            self._kept += 1
        return read_io(seen.io_fd)

    def _forget(self, seen: _Seen | None) -> None:
        if seen is None:
            return
        for fd in (seen.io_fd, seen.stat_fd, seen.fd):
            if fd >= 0:
                os.close(fd)
                self._kept -= 1
        seen.io_fd = seen.stat_fd = seen.fd = -1

    def close(self) -> None:
        for seen in self._seen.values():
            self._forget(seen)
        self._seen.clear()


class _Image(NamedTuple):
    """A process image as one pass over every `stat` sees it: the same start time and comm, the same image."""

    starttime: int
    identity: bytes
    """`stat` up to comm's closing `)`: the pid and comm."""
    argv0: str


class Argv0ByImage:
    """The portable pass's matcher: a process's `cmdline` is read when its image is new, judged from its `stat`."""

    def __init__(self, root: ProcRoot) -> None:
        self._root = root
        self._images: dict[int, _Image] = {}
        self._next: dict[int, _Image] = {}

    def argv0(self, pid: int, data: bytes, state: str, ppid: int, starttime: int) -> str:
        """argv[0] of the process whose `stat` is `data` (its fields already parsed), in this pass."""
        identity = data[: data.rfind(b")")]
        known = self._images.get(pid)
        if known is not None and known.starttime == starttime and known.identity == identity:
            self._next[pid] = known
            return known.argv0
        argv0 = self._root.argv0(pid)
        # An empty argv0 is final only for kernel threads and the dead; a process caught mid-exec shows one too,
        # and must be read again once its new image is in place.
        if argv0 or pid == KTHREADD or ppid == KTHREADD or state in DEAD_STATES:
            self._next[pid] = _Image(starttime, identity, argv0)
        return argv0

    def pass_done(self) -> None:
        """Forget the processes this pass did not see: they are gone."""
        self._images, self._next = self._next, {}
