"""`run`: the run's CPU, disk I/O and processes between two readings of them, the processes that used the most, and
what ran and how it ended (docs/behaviour.md §3.12).

The CPU is the time the kernel charged to the run's processes (utime + stime) and to the children they waited for
(cutime + cstime, which take in a child's whole time when it is reaped), taken per process: each process is known by
its pid and its start, so a pid the kernel gave to another process is another process. The disk I/O is each
process's `read_bytes` and `write_bytes`, which the kernel counts the same way, with one difference: a process's
figure holds the children it waited for (there is no separate children's count), so all of its growth is treated as
the children's is below. Between two readings:

- a process in both counts what its counters grew by (never less than 0);
- a process new to the run counts all its time and bytes when it started since the previous reading (forked
  meanwhile), none when it is older (it joined the run: a `--match` process that exec'd, a process adopted into the
  tree), since what it did before is not the run's;
- a process that left the run but still exists (an orphan given to init, a daemon that forked away) counts what it
  used up to the new reading, then no more;
- a process that is gone was reaped. Its children's counters went to its parent when the parent waited for it: the
  parent's `cutime + cstime` (and its I/O) jumps by the whole life of the child (and of what the child had waited
  for), of which the part up to the previous reading was counted already, then. So what each such process had used
  at the previous reading is taken off the jump of the nearest of its ancestors still in the run, never below 0 (a
  parent that ignored SIGCHLD got no jump: nothing to take off). A process reaped by something outside the run (its
  parent left, or the run's root reaped by whoever started it) counted up to the previous reading.

Where the time was used: what is left of a reaper's children's jump is charged to the processes it reaped that the
previous reading saw (`by_process` holds them, gone, their I/O unknown), in proportion to the ticks each had then, so
a compiler reaped by `make` counts under its own name rather than `make`'s; children forked and reaped between two
readings, never seen, are in that jump too and so counted under the seen ones' names (under the reaper's when it
reaped none that was seen). The run's total does not change.

The figures of a process whose I/O could not be read (another user's, a kernel without I/O accounting) are None,
and so are the run's: a part is not the whole. `procs` is how many processes the run had at the reading, zombies
(ended, not yet waited for) not counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

import msgspec

from orca.sample.compute.cpu import share_of_cores
from orca.sample.compute.rates import per_second
from orca.sample.compute.run_reading import ProcessCounters, ProcessUse, RunReading
from orca.sample.compute.top import top_processes
from orca.sample.line_format import CommandExit, IoRate, RunSample

COMMAND_ARGS_AT_MOST = 32
"""The arguments of COMMAND the first line holds (argv[0] the first): `argc` says how many there were beyond."""
COMMAND_ARG_CHARS_AT_MOST = 256
"""The characters of each argument the first line holds; a longer one is cut and ends with `…`."""
_CUT = "…"
_ANCESTORS_AT_MOST = 64
"""How far up the departed processes' last known parents a reaper is looked for: a cycle (pid reuse) ends."""

_NOTHING = (0, 0, 0)


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


class RunUse(NamedTuple):
    """What the run used between two readings (the module docstring says how)."""

    ticks: int
    io: tuple[int, int] | None
    """Bytes read from and written to storage; None when some process's could not be read."""
    by_process: Mapping[int, ProcessUse]
    """pid -> what each process of the later reading used; empty when none ran (every one used nothing)."""


NO_USE: Mapping[int, ProcessUse] = MappingProxyType({})


def run_use(prev: RunReading, cur: RunReading) -> RunUse:
    """What the run used from `prev` to `cur`, in all and per process, as the module docstring says; never negative.

    >>> parent, child = (100, 1, 50, 0, (0, 4096)), (140, 7, 30, 0, (8192, 0))
    >>> before = RunReading(0, 150, 100, {7: parent, 8: child}, 2)
    >>> # the child used 5 ticks and read 4096 bytes more, ended, and its parent, which used 10 ticks more, waited
    >>> # for it: its children's ticks took in all 35, and its I/O the child's 12288 bytes read, of which 30 ticks
    >>> # and 8192 bytes were counted before. The child's last 5 ticks are its own; its bytes stay its parent's.
    >>> use = run_use(before, RunReading(10**9, 250, 100, {7: (100, 1, 60, 35, (12288, 4096))}, 1))
    >>> use
    RunUse(ticks=15, io=(4096, 0), by_process={8: (5, None), 7: (10, (4096, 0))})
    """
    before, now, left = prev.processes, cur.processes, cur.left
    if before is now and not left:  # the same readings handed out again (every `stat` read the same): idle
        known = all(counters[4] is not None for counters in now.values())
        return RunUse(0, (0, 0) if known else None, NO_USE)
    ticks = read = written = 0
    io_known = True
    # pid of a process in both readings -> [ticks, bytes read, bytes written] of its reaped descendants counted at
    # `prev`; the bytes -1 when one of them had none.
    counted_before: dict[int, list[int]] = {}
    # pid of a reaper -> (pid, ticks at `prev`) of each process it reaped since (the children it was last seen with).
    reaped_by: dict[int, list[tuple[int, int]]] = {}
    for pid, was in before.items():
        still = now.get(pid)
        if still is not None and still[0] == was[0]:
            continue
        last = left.get(pid)
        if last is not None and last[0] == was[0]:
            ticks += max(0, last[2] - was[2]) + max(0, last[3] - was[3])
            if last[4] is None or was[4] is None:
                io_known = False
            else:
                read += max(0, last[4][0] - was[4][0])
                written += max(0, last[4][1] - was[4][1])
            continue
        reaper = _reaper(was[1], before, now)
        if reaper is not None:
            reaped_by.setdefault(reaper, []).append((pid, was[2] + was[3]))
            counted = counted_before.setdefault(reaper, [0, 0, 0])
            counted[0] += was[2] + was[3]
            if was[4] is None or counted[1] < 0:
                counted[1] = counted[2] = -1
            else:
                counted[1] += was[4][0]
                counted[2] += was[4][1]
    since = prev.clock
    by_process: dict[int, ProcessUse] = {}
    for pid, (start, _, own, children, io) in now.items():
        then = before.get(pid)
        use: ProcessUse
        if then is None or then[0] != start:
            # Forked since: all of it. Joined the run: none of what it did before.
            use = (own + children, io) if start >= since else (0, None if io is None else (0, 0))
        else:
            taken = counted_before.get(pid, _NOTHING)
            gained = max(0, children - then[3] - taken[0])
            reaped = reaped_by.get(pid)
            if reaped and gained:  # charged to the children it reaped, where they ran, not to the parent
                by_process.update(_split(gained, reaped))
                ticks += gained
                gained = 0
            used = max(0, own - then[2]) + gained
            was_io = then[4]
            if io is None or was_io is None or taken[1] < 0:
                use = (used, None)
            else:
                use = (used, (max(0, io[0] - was_io[0] - taken[1]), max(0, io[1] - was_io[1] - taken[2])))
        by_process[pid] = use
        ticks += use[0]
        if use[1] is None:
            io_known = False
        else:
            read += use[1][0]
            written += use[1][1]
    return RunUse(ticks, (read, written) if io_known else None, by_process)


def _split(ticks: int, reaped: list[tuple[int, int]]) -> dict[int, ProcessUse]:
    """`ticks` a reaper's children's time grew by, split among the processes it reaped (pid, ticks at the previous
    reading) in proportion to those ticks (evenly when all are 0), whole, the remainder to the first of the largest;
    their I/O unknown (it stays the reaper's).

    >>> _split(10, [(7, 30), (8, 10)]), _split(3, [(7, 0), (8, 0)])
    ({7: (8, None), 8: (2, None)}, {7: (2, None), 8: (1, None)})
    """
    weights = [weight for _, weight in reaped]
    total = sum(weights)
    if total == 0:
        weights, total = [1] * len(reaped), len(reaped)
    shares = [ticks * weight // total for weight in weights]
    shares[weights.index(max(weights))] += ticks - sum(shares)
    return {pid: (share, None) for (pid, _), share in zip(reaped, shares, strict=True)}


def _reaper(parent: int, before: Mapping[int, ProcessCounters], now: Mapping[int, ProcessCounters]) -> int | None:
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


def run_section(
    prev: RunReading | None,
    cur: RunReading | None,
    cores: int | None,
    command: Sequence[str] | None = None,
    ended: CommandEnd | None = None,
    seconds: float | None = None,
) -> RunSample:
    """The line's `run`: `cpu`, `io` and `top` None without both readings or the cores, `procs` None without the
    current reading; the bounded `command` when given (the first line), the `exit` of `ended` (the last).

    `seconds`: the line's `dt` as written, over which the CPU and the rates are taken, so that each times the `dt`
    a reader sees gives back what was used (by default, the time between the two readings)."""
    if prev is None or cur is None or cores is None:
        cpu = io = top = None
    else:
        use = run_use(prev, cur)
        if seconds is None:
            seconds = (cur.at_ns - prev.at_ns) / 1e9
        cpu = share_of_cores(use.ticks, seconds, cur.ticks_per_second, cores)
        io = None if use.io is None else IoRate(per_second(use.io[0], seconds), per_second(use.io[1], seconds))
        top = top_processes(cur, use.by_process, seconds, cores, prev.names)
    procs = None if cur is None else cur.procs
    if command is None and ended is None:  # every line but a COMMAND's first and last
        return RunSample(cpu=cpu, procs=procs, io=io, top=top)
    bounded, argc = (None, None) if command is None else bounded_command(command)
    how = None if ended is None else command_exit(ended)
    return RunSample(cpu=cpu, procs=procs, command=bounded, argc=argc, exit=how, io=io, top=top)


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
