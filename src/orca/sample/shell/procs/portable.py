"""The process functions of the documented API on every platform (docs/behaviour.md §2.3, §6): `alive`, `tree_rss`
and `tree_usage`, each written once, over the readings of the platform chosen when this module is imported (as
psutil chooses its `_pslinux` or `_psosx`): the kernel's /proc where there is one (`procfs.py`), psutil where there
is none (macOS, the BSDs: `psutil_procs.py`), else `kill(pid, 0)` alone, which cannot tell a zombie and finds no
tree. A root given in place of /proc (a fixture tree, docs/behaviour.md §7) is read as a /proc root.

Light to import (the readers load on first use): the signal handling imports `nonblocking_pipe`, and `-- COMMAND`
starts, before anything of the sampler is loaded.
"""

from __future__ import annotations

import functools
import os

from orca.sample.shared.sysconf import PROC, psutil_installed
from orca.sample.shell.procs.states import DEAD_STATES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Literal, Protocol

    class ProcessReadings(Protocol):
        """What a platform reads for the API."""

        @property
        def ticks_per_second(self) -> int:
            """The unit of `tree_figures`' CPU times."""

        def state(self, pid: int) -> str | None:
            """proc(5)'s state letter of `pid` ("" when it exists but cannot be told); None when there is no such
            process. `OSError` when no descriptor was left to tell."""

        def run_resident(self, root: int | None, argv0: str) -> Mapping[int, int]:
            """pid -> resident bytes of `root`'s tree and of the processes whose argv[0] is `argv0`, each once."""

        def tree_figures(self, roots: list[int]) -> tuple[dict[int, frozenset[int]], dict[int, int], dict[int, int]]:
            """Each present root's tree; pid -> resident bytes and pid -> CPU time (own and waited-for children's)
            of their processes."""


PLATFORM: Literal["proc", "psutil", "kill"] = (
    "proc" if os.path.isdir(PROC) else "psutil" if psutil_installed() else "kill"
)
"""Where this machine's processes are read from, decided once."""


class KillReadings:
    """The readings where there is neither /proc nor psutil: whether a process exists, nothing more."""

    ticks_per_second = 1

    def state(self, pid: int) -> str | None:
        try:
            os.kill(pid, 0)
        except PermissionError:  # it exists, owned by someone else
            return ""
        except (OSError, OverflowError):
            return None
        return ""

    def run_resident(self, root: int | None, argv0: str) -> Mapping[int, int]:
        return {}

    def tree_figures(self, roots: list[int]) -> tuple[dict[int, frozenset[int]], dict[int, int], dict[int, int]]:
        return {}, {}, {}


@functools.cache
def machine_readings() -> ProcessReadings:
    """This machine's process readings (`PLATFORM`'s), made on first use."""
    if PLATFORM == "proc":
        from orca.sample.shell.procs.procfs import ProcReadings

        return ProcReadings(PROC)
    if PLATFORM == "psutil":
        from orca.sample.shell.procs.psutil_procs import PsutilReadings

        return PsutilReadings()
    return KillReadings()


def _readings(proc: str) -> ProcessReadings:
    if proc == PROC:
        return machine_readings()
    from orca.sample.shell.procs.procfs import ProcReadings

    return ProcReadings(proc)


def alive(pid: int, proc: str = PROC) -> bool:
    """Whether process `pid` is running: one that does not exist, or shows state Z or X, is dead.

    A zombie counts as dead: a shell running the sampler in front does not reap the job it watches until the
    sampler ends. A process whose state cannot be read (its `stat` does not parse, or no descriptor was left to
    read it with) counts as running: ending the sampler early would lose the run's tail."""
    if pid <= 0:  # 0 and negatives name process groups to kill(2), never one process
        return False
    try:
        state = _readings(proc).state(pid)
    except OSError:
        return True
    return state is not None and state not in DEAD_STATES


def tree_rss(root: int, argv0: str = "", *, proc: str = PROC) -> int:
    """Resident bytes of `root`'s tree and of the processes whose argv[0] is `argv0`, each counted once
    (docs/behaviour.md §3.4); 0 with neither. `OSError` when no descriptor was left to read them with."""
    pid = root if root > 0 else None
    if pid is None and not argv0:
        return 0
    return sum(_readings(proc).run_resident(pid, argv0).values())


def tree_usage(roots: Iterable[int], *, proc: str = PROC) -> dict[int, tuple[int, float]]:
    """root -> (resident bytes, CPU seconds) of each existing root's tree (docs/behaviour.md §6).

    CPU seconds include what each process's waited-for children used (cutime + cstime), so a child's time stays
    counted after it ends. A root that does not exist is absent; where processes cannot be read, the answer is
    empty. `OSError` when no descriptor was left to read them with."""
    wanted = list(roots)
    if not wanted:
        return {}
    from orca.sample.compute.tree import total

    readings = _readings(proc)
    trees, resident, used = readings.tree_figures(wanted)
    per_second = readings.ticks_per_second
    return {root: (total(resident, tree), total(used, tree) / per_second) for root, tree in trees.items()}


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
