"""The process functions of the API on every platform, and the few system calls that are Linux's alone.

`alive`, `tree_rss` and `tree_usage` read /proc where there is one (the `procs` module) and ask psutil where there
is none (macOS, the BSDs). Without either, `alive` falls back to `kill(pid, 0)` (which cannot tell a zombie) and
the trees are empty.

Light to import (the readers load on first use): the signal handling imports `nonblocking_pipe` before anything
of the sampler is loaded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from orca.sample.shell.machine.choice import PROC, psutil_installed


def _psutil_instead(proc: str) -> bool:
    """No /proc on this machine (a root given in its place is read as it is), and psutil to ask instead."""
    return proc == PROC and not os.path.isdir(proc) and psutil_installed()


def alive(pid: int, proc: str = "/proc") -> bool:
    """Whether process `pid` is running: one that does not exist, or is a zombie, is dead."""
    if not _psutil_instead(proc):
        from orca.sample.shell.procs import scanner as procs

        return procs.alive(pid, proc)
    from orca.sample.shell.procs import psutil_procs

    return psutil_procs.alive(pid)


def tree_rss(root: int, argv0: str = "", *, proc: str = "/proc") -> int:
    """Resident bytes of `root`'s tree and of the processes whose argv[0] is `argv0`, each counted once."""
    if not _psutil_instead(proc):
        from orca.sample.shell.procs import scanner as procs

        return procs.tree_rss(root, argv0, proc=proc)
    from orca.sample.shell.procs import psutil_procs

    return psutil_procs.tree_rss(root, argv0)


def tree_usage(roots: Iterable[int], *, proc: str = "/proc") -> dict[int, tuple[int, float]]:
    """root -> (resident bytes, CPU seconds) of each existing root's tree; CPU includes waited-for children."""
    if not _psutil_instead(proc):
        from orca.sample.shell.procs import scanner as procs

        return procs.tree_usage(roots, proc=proc)
    from orca.sample.shell.procs import psutil_procs

    return psutil_procs.tree_usage(list(roots))


def nonblocking_pipe() -> tuple[int, int]:
    """A pipe whose ends do not block and are not inherited: `pipe2` where there is one (Linux, the BSDs), else
    `pipe` made so afterwards (macOS; Python's `pipe` already makes both ends non-inheritable)."""
    pipe2 = getattr(os, "pipe2", None)
    if pipe2 is not None:
        read_fd, write_fd = pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        return int(read_fd), int(write_fd)
    read_fd, write_fd = os.pipe()
    for fd in (read_fd, write_fd):
        os.set_blocking(fd, False)
    return read_fd, write_fd
