"""`run`: the run's CPU and processes between two readings of them, and what ran and how it ended
(docs/behaviour.md §3.12).

The CPU is the time the kernel charged to the run's processes (utime + stime) and to the children they waited for
(cutime + cstime, which take in a child's whole time when it is reaped), taken per process: each process is known by
its pid and its start, so a pid the kernel gave to another process is another process. Between two readings:

- a process in both counts what its two counters grew by (never less than 0);
- a process new to the run counts all its time when it started since the previous reading (forked meanwhile), none
  when it is older (it joined the run: a `--match` process that exec'd, a process adopted into the tree), since its
  time before is not the run's;
- a process that left the run but still exists (an orphan given to init, a daemon that forked away) counts what it
  used up to the new reading, then no more;
- a process that is gone was reaped. Its children's counters went to its parent when the parent waited for it: the
  parent's `cutime + cstime` jumps by the whole life of the child (and of what the child had waited for), of which
  the part up to the previous reading was counted already, then. So what each such process had used at the previous
  reading is taken off the jump of the nearest of its ancestors still in the run, never below 0 (a parent that
  ignored SIGCHLD got no jump: nothing to take off). A process reaped by something outside the run (its parent
  left, or the run's root reaped by whoever started it) counted up to the previous reading.

`procs` is how many processes the run had at the reading, zombies (ended, not yet waited for) not counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

import msgspec

from orca.sample.line_format import CommandExit, RunSample
from orca.sample.parse.pid_stat import ProcessTimes

COMMAND_ARGS_AT_MOST = 32
"""The arguments of COMMAND the first line holds (argv[0] the first): `argc` says how many there were beyond."""
COMMAND_ARG_CHARS_AT_MOST = 256
"""The characters of each argument the first line holds; a longer one is cut and ends with `…`."""
_CUT = "…"
NO_PROCESSES: Mapping[int, ProcessTimes] = MappingProxyType({})
_ANCESTORS_AT_MOST = 64
"""How far up the departed processes' last known parents a reaper is looked for: a cycle (pid reuse) ends."""


class RunReading(msgspec.Struct, frozen=True, gc=False):
    """The run's processes at one moment, as the shell read them (`/proc/<pid>/stat`, or psutil)."""

    at_ns: int
    """`time.monotonic_ns()` when they were read: the CPU is over the time between two readings."""
    clock: int
    """The moment of the reading on the clock the processes' start is counted on, in the same ticks (the boot
    clock for /proc, whose starts are ticks after boot): a process that started at or after it is new since."""
    ticks_per_second: int
    """The unit of the times and of `clock`: USER_HZ for /proc, microseconds for psutil."""
    processes: Mapping[int, ProcessTimes]
    """pid -> (start, parent, own ticks, children's ticks) of each of the run's processes."""
    procs: int
    """The processes that have not ended (zombies not counted)."""
    left: Mapping[int, ProcessTimes] = NO_PROCESSES
    """The processes of the previous reading that are not the run's any more but still exist, read now."""
    rss_bytes: int | None = None
    """Their resident bytes (docs/behaviour.md §3.4); None when not read (the baseline)."""


class CommandEnd(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """How `-- COMMAND` ended, as the shell learnt it from `wait4` (or from the start that failed)."""

    returncode: int
    """Its exit status; -N when signal N ended it (as `subprocess` gives it)."""
    error: str | None = None
    """Why it could not be started; the rest is then None."""
    wall_seconds: float | None = None
    user_seconds: float | None = None
    system_seconds: float | None = None
    max_rss_bytes: int | None = None


def run_ticks(prev: RunReading, cur: RunReading) -> int:
    """The ticks the run used from `prev` to `cur`, per process as the module docstring says; never negative.

    >>> parent, child = (100, 1, 50, 0), (140, 7, 30, 0)
    >>> before = RunReading(0, 150, 100, {7: parent, 8: child}, 2)
    >>> # the child used 5 ticks more, ended, and its parent, which used 10 more, waited for it: its children's
    >>> # counter took in all 35, of which 30 were counted before.
    >>> run_ticks(before, RunReading(10**9, 250, 100, {7: (100, 1, 60, 35)}, 1))
    15
    """
    before, now = prev.processes, cur.processes
    if before is now and not cur.left:  # the same readings handed out again (every `stat` read the same): idle
        return 0
    used = 0
    counted_before: dict[int, int] = {}
    """pid of a process in both readings -> the ticks of its reaped descendants counted at `prev`."""
    for pid, was in before.items():
        still = now.get(pid)
        if still is not None and still[0] == was[0]:
            continue
        left = cur.left.get(pid)
        if left is not None and left[0] == was[0]:
            used += max(0, left[2] - was[2]) + max(0, left[3] - was[3])
            continue
        reaper = _reaper(was[1], before, now)
        if reaper is not None:
            counted_before[reaper] = counted_before.get(reaper, 0) + was[2] + was[3]
    since = prev.clock
    for pid, (start, _, own, children) in now.items():
        then = before.get(pid)
        if then is None or then[0] != start:
            if start >= since:
                used += own + children
            continue
        grown = children - then[3]
        if counted_before:
            grown -= counted_before.get(pid, 0)
        used += max(0, own - then[2]) + max(0, grown)
    return used


def _reaper(parent: int, before: Mapping[int, ProcessTimes], now: Mapping[int, ProcessTimes]) -> int | None:
    """The nearest ancestor, by the last known parents, that is the same process in both readings; None when the
    line of ancestors leaves the run first."""
    for _ in range(_ANCESTORS_AT_MOST):
        was = before.get(parent)
        if was is None:
            return None
        still = now.get(parent)
        if still is not None and still[0] == was[0]:
            return parent
        parent = was[1]
    return None


def run_cpu(prev: RunReading, cur: RunReading, cores: int) -> float:
    """Percent of all `cores`' time between the two readings that the run used, clamped to 0..100 (the readings'
    own times are rounded to whole ticks); 0.0 without time between them or without cores.

    >>> before = RunReading(0, 0, 100, {7: (0, 1, 100, 0)}, 1)
    >>> run_cpu(before, RunReading(2 * 10**9, 200, 100, {7: (0, 1, 250, 0)}, 1), 4)
    18.75
    """
    seconds = (cur.at_ns - prev.at_ns) / 1e9
    if seconds <= 0 or cores <= 0 or cur.ticks_per_second <= 0:
        return 0.0
    return min(100.0, 100.0 * run_ticks(prev, cur) / (cur.ticks_per_second * seconds * cores))


def run_section(
    prev: RunReading | None,
    cur: RunReading | None,
    cores: int | None,
    command: Sequence[str] | None = None,
    ended: CommandEnd | None = None,
) -> RunSample:
    """The line's `run`: `cpu` None without both readings or the cores, `procs` None without the current reading;
    the bounded `command` when given (the first line), the `exit` of `ended` (the last)."""
    if prev is None or cur is None or cores is None:
        cpu = None
    elif prev.processes is cur.processes and not cur.left:  # every `stat` read as before: idle (`run_ticks`)
        cpu = 0.0
    else:
        cpu = run_cpu(prev, cur, cores)
    procs = None if cur is None else cur.procs
    if command is None and ended is None:  # every line but a COMMAND's first and last
        return RunSample(cpu=cpu, procs=procs)
    bounded, argc = (None, None) if command is None else bounded_command(command)
    how = None if ended is None else command_exit(ended)
    return RunSample(cpu=cpu, procs=procs, command=bounded, argc=argc, exit=how)


def bounded_command(argv: Sequence[str]) -> tuple[tuple[str, ...], int | None]:
    """`argv` as the first line holds it: at most `COMMAND_ARGS_AT_MOST` arguments, each at most
    `COMMAND_ARG_CHARS_AT_MOST` characters (a cut one ends with `…`); and the count, when some were left out.

    >>> bounded_command(["make", "-j4"])
    (('make', '-j4'), None)
    >>> held, argc = bounded_command(["rm", *map(str, range(99))])
    >>> len(held), held[-1], argc
    (32, '30', 100)
    >>> bounded_command(["echo", "x" * 300])[0][1] == "x" * 255 + "…"
    True
    """
    held = tuple(
        arg if len(arg) <= COMMAND_ARG_CHARS_AT_MOST else arg[: COMMAND_ARG_CHARS_AT_MOST - 1] + _CUT
        for arg in argv[:COMMAND_ARGS_AT_MOST]
    )
    return held, None if len(argv) <= COMMAND_ARGS_AT_MOST else len(argv)


def command_exit(end: CommandEnd) -> CommandExit:
    """The line's `run.exit` of how COMMAND ended: `code` for an exit status, `signal` for a signal's end.

    >>> command_exit(CommandEnd(returncode=-9, wall_seconds=1.5, user_seconds=0.25, system_seconds=0.0,
    ...                         max_rss_bytes=4096))
    CommandExit(code=None, signal=9, error=None, wall=1.5, user=0.25, system=0.0, max_rss=4096)
    """
    code = end.returncode
    return CommandExit(
        code=code if code >= 0 else None,
        signal=-code if code < 0 else None,
        error=end.error,
        wall=end.wall_seconds,
        user=end.user_seconds,
        system=end.system_seconds,
        max_rss=end.max_rss_bytes,
    )
