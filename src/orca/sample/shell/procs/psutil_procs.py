"""The run's processes through psutil, for platforms without /proc: the API's readings (`PsutilReadings`, what
`portable.py` computes `alive`, `tree_rss` and `tree_usage` from there) and the sampler's run reader
(`PsutilScanner`).

The same answers as the /proc readers: a tree is `root` and its descendants, `--match` counts the processes whose
argv[0] (first element of the command line) is the given one, each process is counted once, and a zombie counts as
ended. psutil reads the platform's own calls (on macOS `sysctl(KERN_PROC)` and `proc_pidinfo`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import psutil
from returns.result import Result, Success

from orca.sample.compute.run_reading import NO_PROCESSES, ProcessCounters, RunReading, started
from orca.sample.compute.top import needs_arguments, process_name
from orca.sample.parse.errors import ParseError

MICROSECONDS = 1_000_000
"""The run's CPU times and starts are whole microseconds here (`RunReading.ticks_per_second`)."""
START_SLACK = 1.0
"""Seconds by which psutil may place a start early: on Linux it adds the boot time in whole seconds (`btime`) to
the start after boot. A process new to the run counts all its time when it started after the previous reading less
this."""
STATES = {psutil.STATUS_ZOMBIE: "Z", psutil.STATUS_DEAD: "X"}
"""psutil's states that proc(5) letters tell apart from a running process: the ended ones."""
_RUNNING = "R"


class PsutilReadings:
    """The API's readings through psutil."""

    ticks_per_second = MICROSECONDS

    def state(self, pid: int) -> str | None:
        """`Z` or `X` for an ended process, another letter for one that runs, "" for one owned by someone else
        (it exists); None when there is no such process."""
        try:
            return STATES.get(psutil.Process(pid).status(), _RUNNING)
        except psutil.AccessDenied:
            return ""
        except (psutil.Error, OverflowError, ValueError):
            return None

    def run_resident(self, root: int | None, argv0: str) -> Mapping[int, int]:
        """pid -> resident bytes of `root`'s tree and of the processes whose argv[0] is `argv0`, each once."""
        return {pid: _rss(process) for pid, process in PsutilScanner().members(root, argv0).items()}

    def tree_figures(self, roots: list[int]) -> tuple[dict[int, frozenset[int]], dict[int, int], dict[int, int]]:
        """Each present root's tree; and pid -> resident bytes, pid -> CPU microseconds (own and, where the
        platform counts them, waited-for children's: psutil's `children_user` and `children_system`, 0 on macOS)."""
        trees: dict[int, frozenset[int]] = {}
        resident: dict[int, int] = {}
        used: dict[int, int] = {}
        for root in roots:
            members = tree_members(root)
            if not members:
                continue
            trees[root] = frozenset(members)
            for pid, process in members.items():
                try:
                    with process.oneshot():
                        memory, times = process.memory_info(), process.cpu_times()
                except psutil.Error:
                    continue  # ended between the listing and this read
                resident[pid] = int(memory.rss)
                seconds = times.user + times.system + times.children_user + times.children_system
                used[pid] = round(seconds * MICROSECONDS)
        return trees, resident, used


def tree_members(root: int) -> dict[int, psutil.Process]:
    """pid -> process for `root` and its descendants; empty when `root` does not exist."""
    if root <= 0:
        return {}
    try:
        top = psutil.Process(root)
        descendants = top.children(recursive=True)
    except (psutil.Error, OverflowError, ValueError):
        return {}
    return {process.pid: process for process in (top, *descendants)}


def _rss(process: psutil.Process) -> int:
    try:
        return int(process.memory_info().rss)
    except psutil.Error:  # gone meanwhile, or not ours to read
        return 0


def _arguments(process: psutil.Process) -> list[str]:
    """`process`'s arguments; none when they cannot be read."""
    try:
        return list(process.cmdline())
    except psutil.Error:
        return []


def _argv0(process: psutil.Process) -> str | None:
    """argv[0] of `process`: "" when it has none or cannot be read for good; None to try again next line."""
    try:
        command = process.cmdline()
    except psutil.AccessDenied:
        return ""  # another user's process on macOS: it stays unreadable
    except psutil.Error:
        return None
    return command[0] if command else ""


def _reading(process: psutil.Process) -> tuple[bool, int, str, ProcessCounters] | None:
    """(whether it has ended, its resident bytes, its `name()`, its counters: times in microseconds, I/O in bytes
    where psutil reads it) of one process; None when gone."""
    try:
        with process.oneshot():
            memory, times, ended = process.memory_info(), process.cpu_times(), process.status() in STATES
            start, parent, name = process.create_time(), process.ppid(), process.name()
            io = _io(process)
    except psutil.Error:  # gone meanwhile (its I/O's reading included), or not ours to read
        return None
    own = round((times.user + times.system) * MICROSECONDS)
    children = round((getattr(times, "children_user", 0.0) + getattr(times, "children_system", 0.0)) * MICROSECONDS)
    return ended, int(memory.rss), name, (round(start * MICROSECONDS), parent, own, children, io)


def _io(process: psutil.Process) -> tuple[int, int] | None:
    """(bytes read, bytes written) where psutil has them (`io_counters`: Linux's `/proc/<pid>/io`, the BSDs'); None
    where it has not (macOS) or cannot read them (another user's process); `psutil.NoSuchProcess` when it was
    reaped meanwhile."""
    counters = getattr(process, "io_counters", None)
    if counters is None:
        return None
    try:
        io = counters()
    except psutil.ZombieProcess:
        return None
    except psutil.NoSuchProcess:  # reaped since its times were read: gone, as if they had failed
        raise
    except psutil.Error:
        return None
    read, written = int(io.read_bytes), int(io.write_bytes)
    return None if read < 0 or written < 0 else (read, written)


class PsutilScanner:
    """Resident bytes and CPU times of the run's processes once per line, remembering each process's argv[0]
    between lines, and the last reading's processes (docs/behaviour.md §3.12).

    argv[0] changes only on exec, and exec changes the process's name: a process's command line is read again only
    when its name changed (the same rule as the /proc reader's `comm`). Processes are told apart by pid and start
    time (psutil's identity), so a reused pid is read afresh."""

    def __init__(self) -> None:
        # pid -> (process, its name when argv[0] was read, argv[0]); a name of None reads the command line again.
        self._known: dict[int, tuple[psutil.Process, str | None, str]] = {}
        self._last: Mapping[int, ProcessCounters] = NO_PROCESSES
        self._names: dict[int, tuple[psutil.Process, str, str]] = {}
        """pid -> (process, its `name()`, the name made of it)."""

    def reading(
        self, root: int | None, argv0: str, forks: int | None = None, at_ns: int | None = None
    ) -> Result[RunReading, ParseError]:
        """The run's processes now (`root`'s tree and the `argv0` matches, each once): their resident bytes, CPU
        times, I/O and names, and those of the last reading's that left the run but still exist. `at_ns`: the moment
        of the host's readings beside which they are read (by default, now). (`forks` is the /proc reader's.)"""
        at_ns = time.monotonic_ns() if at_ns is None else at_ns
        clock = round((time.time() - START_SLACK) * MICROSECONDS)
        members = self.members(root, argv0)
        processes: dict[int, ProcessCounters] = {}
        resident: dict[int, int] = {}
        names: dict[int, str] = {}
        procs = 0
        for pid, process in members.items():
            read = _reading(process)
            if read is not None:
                ended, resident[pid], comm, processes[pid] = read
                procs += not ended
                names[pid] = self._name(process, comm)
        left: dict[int, ProcessCounters] = {}
        for pid in self._last.keys() - processes.keys():
            try:
                read = _reading(psutil.Process(pid))
            except (psutil.Error, OverflowError, ValueError):
                continue
            if read is not None and read[3][0] == self._last[pid][0]:
                left[pid] = read[3]
        self._last = processes
        if len(self._names) > len(names):  # forget the processes that are gone
            self._names = {pid: named for pid, named in self._names.items() if pid in names}
        return Success(RunReading(at_ns, clock, MICROSECONDS, processes, procs, left or NO_PROCESSES,
                                  sum(resident.values()), resident, names))

    def baseline(self, root: int | None, argv0: str, at_ns: int | None = None) -> Result[RunReading, ParseError]:
        """The first reading: a reading as every line's."""
        return self.reading(root, argv0, at_ns=at_ns)

    def started(self, at_ns: int) -> RunReading:
        """The reading COMMAND's run starts from, at `at_ns`, just before it was started: no process yet."""
        return started(at_ns, MICROSECONDS)

    def _name(self, process: psutil.Process, comm: str) -> str:
        """The name of `process` (compute/top.py), its arguments read once per process and name."""
        known = self._names.get(process.pid)
        if known is not None and known[0] == process and known[1] == comm:
            return known[2]
        arguments = _arguments(process) if needs_arguments(comm) else []
        name = process_name(comm, arguments)
        self._names[process.pid] = (process, comm, name)
        return name

    def members(self, root: int | None, argv0: str) -> dict[int, psutil.Process]:
        """pid -> process of `root`'s tree and of the processes whose argv[0] is `argv0`."""
        members = {} if root is None else tree_members(root)
        if argv0:
            members.update(self._matching(argv0))
        return members

    def _matching(self, argv0: str) -> dict[int, psutil.Process]:
        seen: dict[int, tuple[psutil.Process, str | None, str]] = {}
        matched: dict[int, psutil.Process] = {}
        for process in psutil.process_iter(["name"]):
            name = process.info.get("name")
            known = self._known.get(process.pid)
            if known is None or known[0] != process or known[1] is None or known[1] != name:
                command = _argv0(process)
                known = (process, None if command is None else name, command or "")
            seen[process.pid] = known
            if known[2] == argv0:
                matched[process.pid] = process
        self._known = seen  # forget the processes that are gone
        return matched
