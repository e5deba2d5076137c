"""The run's processes, read from /proc (SPEC 2.3, 3.4, 6): `alive`, `tree_rss`, `tree_usage`, `ProcessScanner`.

A line's cost must not grow with the host's processes when only the run's tree is wanted (issue 5: thousands of
processes, and an open/read/close of a /proc file costs 5-10 µs here). So the tree is walked downwards from the
root through `/proc/<pid>/task/<tid>/children` (every thread's, since a child belongs to the thread that forked
it): files are read only for the run's own processes. A kernel without those files (CONFIG_PROC_CHILDREN off), or
a fixture tree without them, gets the portable way: one pass over every /proc/<pid>/stat, parents from `ppid`.

`--match` has to look at every process; there a line reads one small file per process, `comm`, and reads
`cmdline` only for a process it has not seen with that comm (argv[0] changes only on exec, which changes comm).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from orca.sample.compute.tree import run_of, total, trees_of
from orca.sample.parse.cmdline import argv0 as cmdline_argv0
from orca.sample.parse.pid_stat import stat_fields
from orca.sample.parse.statm import resident_pages
from orca.sample.shell.readers import read_bytes, read_from

# proc(5): `Z` zombie, `X` dead; `x` is how 2.6.33-3.13 kernels printed dead.
_DEAD_STATES = frozenset({"Z", "X", "x"})
# kthreadd is pid 2 and the parent of every other kernel thread: their cmdline is empty for good.
_KTHREADD = 2
# One argument is at most MAX_ARG_STRLEN (32 pages) long: a bound on what is read to find argv[0]'s end.
_CMDLINE_LIMIT = 32 * 4096
_READ_SIZE = 4096


@functools.cache
def _sysconf(name: str, fallback: int) -> int:
    """`os.sysconf(name)`, read once; `fallback` where the platform has no such value (SPEC 1.3)."""
    try:
        value = os.sysconf(name)
    except (AttributeError, ValueError, OSError):
        return fallback
    return value if value > 0 else fallback


def page_size() -> int:
    return _sysconf("SC_PAGE_SIZE", 4096)


def clock_ticks() -> int:
    """Clock ticks per second (USER_HZ), the unit of /proc/<pid>/stat's times."""
    return _sysconf("SC_CLK_TCK", 100)


def _read(path: str, size: int = _READ_SIZE) -> bytes | None:
    """The first `size` bytes of a file; None when it cannot be read (the process vanished, no permission)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:  # ESRCH: the process exited between open and read
        return None
    finally:
        os.close(fd)


def _read_argv0(path: str) -> bytes | None:
    """/proc/<pid>/cmdline up to the end of argv[0] (its first NUL), bounded by `_CMDLINE_LIMIT`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = b""
        while b"\0" not in data and len(data) < _CMDLINE_LIMIT:
            chunk = os.read(fd, _READ_SIZE)
            if not chunk:
                break
            data += chunk
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def _pid_names(proc: str) -> list[str]:
    """The process directories of `proc` (thread group leaders); none when it cannot be listed (no /proc)."""
    try:
        names = os.listdir(proc)
    except OSError:
        return []
    return [name for name in names if name.isdigit() and name.isascii()]


def _stats(proc: str) -> Iterator[tuple[int, bytes]]:
    """(pid, raw /proc/<pid>/stat) for each process still there when its turn comes."""
    for name in _pid_names(proc):
        data = _read(f"{proc}/{name}/stat")
        if data is not None:
            yield int(name), data


def _statm_pages(proc: str, pid: int) -> int | None:
    """statm's resident pages of one process (SPEC 3.4); None when it is gone or the file does not parse."""
    data = _read(f"{proc}/{pid}/statm")
    return None if data is None else resident_pages(data)


def _resident_pages(proc: str, pids: Iterable[int]) -> dict[int, int]:
    """pid -> statm's resident pages, for those of `pids` still there."""
    return {pid: pages for pid in pids if (pages := _statm_pages(proc, pid)) is not None}


def _pids_in(data: bytes) -> list[int]:
    return [int(field) for field in data.split() if field.isdigit()]


def has_children_files(proc: str) -> bool:
    """Whether `proc` lists each task's children (Linux 3.5+ with CONFIG_PROC_CHILDREN; not a fixture tree)."""
    return os.path.exists(f"{proc}/thread-self/children")


def _children(proc: str, pid: int) -> list[int]:
    """The pids of `pid`'s children, from every one of its threads' `children` files; none if it vanished."""
    task = f"{proc}/{pid}/task"
    try:
        # A task directory's link count is 2 + its threads: a single-threaded process (most of a run's tree) needs
        # no listing, one stat instead of five system calls.
        single = os.stat(task).st_nlink == 3
        tids = [str(pid)] if single else os.listdir(task)
    except OSError:
        return []
    kids: list[int] = []
    for tid in tids:
        data = read_bytes(f"{proc}/{pid}/task/{tid}/children")
        if data:
            kids.extend(_pids_in(data))
    return kids


def walk_tree(proc: str, root: int, children_of: Callable[[int], list[int]] | None = None) -> frozenset[int]:
    """`root` and its descendants, walking `children` files down from it; empty when `root` does not exist."""
    if not os.path.isdir(f"{proc}/{root}"):
        return frozenset()
    children = children_of or functools.partial(_children, proc)
    tree = {root}
    frontier = [root]
    while frontier:
        for child in children(frontier.pop()):
            if child not in tree:  # a pid seen twice (reused mid-walk) is walked once, so the walk ends
                tree.add(child)
                frontier.append(child)
    return frozenset(tree)


class _TreeFiles:
    """Open descriptors of the run's processes' files, kept from line to line (issue 5).

    Each line reads, for every process of the tree, whether it has more than one thread, its children and its
    resident pages. By path that is eight system calls and three /proc lookups a process; through descriptors kept
    open it is three `fstat`/`pread`s. A descriptor is bound to its process, not to the pid: once the process is
    gone, reads fail and the pid's files are opened afresh, so a reused pid never reads as the old process."""

    KEPT_AT_MOST = 128
    """Processes whose files are kept (three descriptors each); a larger tree reads the rest by path."""

    def __init__(self, proc: str) -> None:
        self._proc = proc
        # pid -> descriptors of /proc/<pid>/task, its main thread's `children`, and its `statm`.
        self._fds: dict[int, tuple[int, int, int]] = {}

    def _files(self, pid: int) -> tuple[int, int, int] | None:
        kept = self._fds.get(pid)
        if kept is not None or len(self._fds) >= self.KEPT_AT_MOST:
            return kept
        base = f"{self._proc}/{pid}"
        opened: list[int] = []
        try:
            for path in (f"{base}/task", f"{base}/task/{pid}/children", f"{base}/statm"):
                opened.append(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            for fd in opened:
                os.close(fd)
            return None
        task, children, statm = opened
        self._fds[pid] = (task, children, statm)
        return task, children, statm

    def children(self, pid: int) -> list[int]:
        files = self._files(pid)
        if files is not None:
            try:
                if os.fstat(files[0]).st_nlink == 3:  # one thread: its own `children` file is all of them
                    return _pids_in(read_from(files[1]) or b"")
            except OSError:
                self.forget(pid)
        return _children(self._proc, pid)

    def resident_pages(self, pid: int) -> int | None:
        files = self._fds.get(pid)
        if files is None:
            return _statm_pages(self._proc, pid)
        try:
            data = os.pread(files[2], _READ_SIZE, 0)
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

    def __del__(self) -> None:
        for pid in list(self._fds):
            self.forget(pid)


@dataclass(slots=True)
class _Seen:
    """What `_Argv0Files` knows of one process."""

    fd: int
    """Its `comm`, kept open; -1 when read by path (beyond `KEPT_AT_MOST`)."""
    comm: bytes | None
    """`comm` when `argv0` was read; None to read `cmdline` again next line (an empty one, not yet settled)."""
    argv0: str
    kernel_thread: bool


class _Argv0Files:
    """argv[0] of every process on the host, for `--match` (SPEC 3.4; issue 5: at most 10 µs a host process).

    argv[0] changes only on exec, and exec changes `comm`: a line reads each process's `comm`, and its `cmdline`
    only when `comm` changed. `comm` is read through a descriptor kept open from line to line (1.4 µs a read here,
    against 6.5 µs to open, read and close it). A descriptor is bound to its process, not its pid: once the
    process is gone the read fails, so a reused pid is never taken for the old process. Kernel threads
    (kthreadd's children) never exec, though a kworker's `comm` names its current work: their empty `cmdline`
    is read once.

    Descriptors are kept for at most `KEPT_AT_MOST` processes, and a quarter of the open-files limit: each holds a
    page of kernel memory for its buffer. The others are read by path, remembered by pid and `comm`.
    """

    KEPT_AT_MOST = 1024

    def __init__(self, proc: str) -> None:
        self._proc = proc
        self._seen: dict[int, _Seen] = {}
        self._kept = 0
        self._keep_at_most = min(self.KEPT_AT_MOST, _open_files_limit() // 4)

    def matching(self, argv0: str) -> list[int]:
        """The pids of the processes whose argv[0] is `argv0` now."""
        listed = {int(name): name for name in _pid_names(self._proc)}
        for pid in [pid for pid in self._seen if pid not in listed]:
            self._forget(self._seen.pop(pid))
        matched: list[int] = []
        for pid, name in listed.items():
            seen = self._look(pid, name)
            if seen is not None and seen.argv0 == argv0:
                matched.append(pid)
        return matched

    def _look(self, pid: int, name: str) -> _Seen | None:
        """The process `pid` as it is now, read as little as its last reading allows; None when it is gone."""
        seen = self._seen.get(pid)
        comm = self._read_kept(seen)
        if comm is None or seen is None:
            fd, comm = self._open_comm(name)
            if comm is None:
                self._forget(self._seen.pop(pid, None))
                return None  # it exited
            # New; or its old process is gone and the pid names another one; or there is room to keep it now.
            if seen is None or seen.fd >= 0 or fd >= 0:
                self._forget(seen)
                seen = self._seen[pid] = _Seen(fd=fd, comm=None, argv0="", kernel_thread=False)
        if comm == seen.comm or (seen.kernel_thread and seen.fd >= 0):
            return seen
        raw = _read_argv0(f"{self._proc}/{name}/cmdline")
        seen.argv0 = "" if raw is None else cmdline_argv0(raw)
        # An empty argv0 is a kernel thread for good, or a zombie or a process caught mid-exec: read it again.
        seen.kernel_thread = not seen.argv0 and self._is_kernel_thread(pid)
        seen.comm = comm if seen.argv0 or seen.kernel_thread else None
        return seen

    def _read_kept(self, seen: _Seen | None) -> bytes | None:
        """`comm` through the kept descriptor; None without one, or when its process is gone (ESRCH)."""
        if seen is None or seen.fd < 0:
            return None
        try:
            return os.pread(seen.fd, _READ_SIZE, 0)
        except OSError:
            return None

    def _open_comm(self, name: str) -> tuple[int, bytes | None]:
        """(descriptor or -1, `comm`) of a process; a descriptor kept only while there is room."""
        path = f"{self._proc}/{name}/comm"
        if self._kept >= self._keep_at_most:
            return -1, _read(path)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:  # gone; or out of descriptors (EMFILE), when reading by path still may work
            return -1, _read(path)
        try:
            comm = os.pread(fd, _READ_SIZE, 0)
        except OSError:
            os.close(fd)
            return -1, None
        self._kept += 1
        return fd, comm

    def _is_kernel_thread(self, pid: int) -> bool:
        fields = _stat_fields_of(self._proc, pid)
        return pid == _KTHREADD or (fields is not None and fields[1] == _KTHREADD)

    def _forget(self, seen: _Seen | None) -> None:
        if seen is not None and seen.fd >= 0:
            os.close(seen.fd)
            self._kept -= 1
            seen.fd = -1

    def __del__(self) -> None:
        for seen in self._seen.values():
            self._forget(seen)


def _open_files_limit() -> int:
    """The soft limit on open descriptors; 0 (keep none) where it cannot be read."""
    try:
        import resource  # POSIX only (SPEC 1.3)

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        return soft if soft != resource.RLIM_INFINITY else 1 << 20
    except (ImportError, OSError, ValueError):
        return 0


def alive(pid: int, proc: str = "/proc") -> bool:
    """Whether process `pid` is running (SPEC 2.3, 6): one that does not exist, or shows state Z or X, is dead.

    A zombie counts as dead: a shell running the sampler in front does not reap the job it watches until the
    sampler ends. Without a `proc` directory (not Linux), `os.kill(pid, 0)`, which cannot tell a zombie.
    """
    if pid <= 0:  # 0 and negatives name process groups to kill(2), never one process
        return False
    if not os.path.isdir(proc):
        try:
            os.kill(pid, 0)
        except PermissionError:  # it exists, owned by someone else
            return True
        except (OSError, OverflowError):
            return False
        return True
    data = _read(f"{proc}/{pid}/stat")
    if data is None:
        return False
    fields = stat_fields(data)
    # A stat that exists but does not parse is still a process: ending the sampler early would lose the run's tail.
    return fields is None or fields[0] not in _DEAD_STATES


class ProcessScanner:
    """Reads the run's resident bytes (SPEC 3.4 `rss`) once per line, remembering argv[0] between lines."""

    def __init__(self, proc: str = "/proc", *, walk_children: bool | None = None) -> None:
        self._proc = proc
        self._page_size = page_size()
        self._walk = has_children_files(proc) if walk_children is None else walk_children
        self._tree_files = _TreeFiles(proc)
        # Scan mode: pid -> (starttime, stat up to comm's `)`, argv0): the same start time and comm, the same image.
        self._argv0s: dict[int, tuple[int, bytes, str]] = {}
        self._argv0_files = _Argv0Files(proc)

    def run_rss(self, root: int | None, argv0: str) -> int:
        """Resident bytes of `root`'s tree plus the processes whose argv[0] is `argv0`, each once; 0 with neither."""
        if root is None and not argv0:
            return 0
        if not self._walk:
            return self._scan_run_rss(root, argv0)
        files = self._tree_files
        tree = frozenset() if root is None else walk_tree(self._proc, root, files.children)
        files.keep_only(tree)
        pids = set(tree)
        if argv0:
            pids.update(self._argv0_files.matching(argv0))
        pages = [pages for pid in pids if (pages := files.resident_pages(pid)) is not None]
        return sum(pages) * self._page_size

    def _scan_run_rss(self, root: int | None, argv0: str) -> int:
        """The portable way: one pass over every /proc/<pid>/stat for the parents (and identities for argv0)."""
        parents: dict[int, int] = {}
        matched: list[int] = []
        known = self._argv0s
        seen: dict[int, tuple[int, bytes, str]] = {}
        proc = self._proc
        for pid, data in _stats(proc):
            fields = stat_fields(data)
            if fields is None:
                continue
            state, ppid, _, starttime = fields
            parents[pid] = ppid
            if not argv0:
                continue
            identity = data[: data.rfind(b")")]
            cached = known.get(pid)
            if cached is not None and cached[0] == starttime and cached[1] == identity:
                seen[pid] = cached
                command = cached[2]
            else:
                raw = _read_argv0(f"{proc}/{pid}/cmdline")
                command = "" if raw is None else cmdline_argv0(raw)
                # An empty argv0 is final only for kernel threads and the dead; a process caught mid-exec shows
                # one too, and must be read again once its new image is in place.
                if command or pid == _KTHREADD or ppid == _KTHREADD or state in _DEAD_STATES:
                    seen[pid] = (starttime, identity, command)
            if command == argv0:
                matched.append(pid)
        self._argv0s = seen  # forget the processes that are gone
        pids = run_of(parents, root, matched)
        return total(_resident_pages(proc, pids), pids) * self._page_size


def tree_rss(root: int, argv0: str = "", *, proc: str = "/proc") -> int:
    """SPEC 6: resident bytes of `root`'s tree and of the processes whose argv[0] is `argv0`, each counted once."""
    return ProcessScanner(proc).run_rss(root if root > 0 else None, argv0)


def tree_usage(roots: Iterable[int], *, proc: str = "/proc") -> dict[int, tuple[int, float]]:
    """SPEC 6: root -> (resident bytes, CPU seconds) of each root's tree.

    CPU seconds include what each process's waited-for children used (cutime + cstime), so a child's time stays
    counted after it ends. A root that does not exist is absent; without /proc the answer is empty. The trees are
    walked down from the roots (reading only their processes' files), or found in one pass over `proc` where the
    kernel has no `children` files.
    """
    wanted = list(roots)
    if not wanted:
        return {}
    if has_children_files(proc):
        trees = {root: tree for root in wanted if (tree := walk_tree(proc, root))}
        members = frozenset().union(*trees.values())
        member_ticks = {pid: fields[2] for pid in members if (fields := _stat_fields_of(proc, pid)) is not None}
        return _usage_of(trees, member_ticks, _resident_pages(proc, members))
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for pid, data in _stats(proc):
        fields = stat_fields(data)
        if fields is not None:
            parents[pid] = fields[1]
            ticks[pid] = fields[2]
    trees = trees_of(parents, wanted)
    return _usage_of(trees, ticks, _resident_pages(proc, frozenset().union(*trees.values())))


def _stat_fields_of(proc: str, pid: int) -> tuple[str, int, int, int] | None:
    data = _read(f"{proc}/{pid}/stat")
    return None if data is None else stat_fields(data)


def _usage_of(
    trees: dict[int, frozenset[int]], ticks: dict[int, int], pages: dict[int, int]
) -> dict[int, tuple[int, float]]:
    bytes_per_page, ticks_per_second = page_size(), clock_ticks()
    return {
        root: (total(pages, tree) * bytes_per_page, total(ticks, tree) / ticks_per_second)
        for root, tree in trees.items()
    }
