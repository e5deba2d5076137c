"""/proc/stat: the `cpu` lines (proc(5))."""

from __future__ import annotations

import functools
from typing import NamedTuple

import msgspec
from returns.result import Failure, Result, Success

from orca.sample.parse.errors import ParseError
from orca.sample.parse.numbers import U64_DIGITS, all_counters, u64

# proc(5): user, nice, system and idle are printed by every kernel; iowait (2.5.41), irq, softirq (2.6.0) and
# steal (2.6.11) came later, so a line may stop after the fourth. Fewer than four is not a kernel line.
_FEWEST_FIELDS = 4
_FIELDS = 8


class CpuTimes(NamedTuple):
    """The first eight counters of one `cpu` line, in USER_HZ ticks; guest time is already inside `user`.

    A tuple, so that a core's increases are taken by `map` in C: one is made per core every line."""

    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int


class ProcStat(msgspec.Struct, frozen=True, gc=False):
    total: CpuTimes
    """The aggregate `cpu` line."""
    cores: tuple[tuple[int, CpuTimes], ...]
    """`(N, times)` for each `cpuN` line, in file order."""
    forks: int | None = None
    """`processes`: the tasks (processes and threads) created since boot; None without the line. While it stands
    still, no process has been made anywhere: the run's tree is walked again only when it moved
    (`shell/procs/tree_files.py`)."""


_FORKS = "\nprocesses "
_times = functools.partial(tuple.__new__, CpuTimes)
"""`CpuTimes` of eight counters, made in C (what the named tuple's own `_make` does, without its Python frame): one
is made per core every line."""


def parse(text: str) -> Result[ProcStat, ParseError]:
    """The aggregate `cpu` line, every `cpuN` line and the `processes` count; other lines are ignored.

    A `cpu` line whose first eight fields are not all unsigned decimals (a `-5`, a cut-off line with fewer than
    four counters) is skipped, never read as a negative or partial counter. No valid aggregate line is a failure.

    >>> parse("cpu  10 0 5 100\\ncpu0 10 0 5 100\\nintr 1 2\\n").unwrap().cores[0]
    (0, CpuTimes(user=10, nice=0, system=5, idle=100, iowait=0, irq=0, softirq=0, steal=0))
    >>> parse("cpu  1 2 3 4\\nintr 5 6\\nctxt 7\\nprocesses 12345\\nprocs_running 2\\n").unwrap().forks
    12345
    >>> parse("intr 1 2\\n").failure().reason
    'no aggregate `cpu` line'
    """
    total: CpuTimes | None = None
    cores: list[tuple[int, CpuTimes]] = []
    # No line after the last place `cpu` appears can be a `cpu` line: the kernel prints them first, and the long
    # `intr` line after them is never split.
    last = text.rfind("cpu")
    end = text.find("\n", last) if last >= 0 else 0
    for line in (text if end < 0 else text[:end]).splitlines():
        if not line.startswith("cpu"):
            continue
        fields = line.split()
        label, counters = fields[0], fields[1 : _FIELDS + 1]
        joined = "".join(counters)
        # The kernel's own line, eight counters of fewer than 20 digits, checked at once; anything else one by one.
        if len(counters) == _FIELDS and joined.isdigit() and joined.isascii() and max(map(len, counters)) < U64_DIGITS:
            times = _times(map(int, counters))
        elif len(counters) >= _FEWEST_FIELDS and all_counters(counters):
            times = CpuTimes(*map(int, counters), *[0] * (_FIELDS - len(counters)))
        else:
            continue
        if label == "cpu":
            if total is None:
                total = times
        else:
            number = label[3:]
            # u64's checks, written out for the usual number of a few digits.
            if number.isdigit() and number.isascii() and (len(number) < U64_DIGITS or u64(number) is not None):
                cores.append((int(number), times))
    if total is None:
        return Failure(ParseError("/proc/stat", "no aggregate `cpu` line"))
    # `processes` after the `cpu` lines: found by one search, as it comes after the long `intr` line; a count cut
    # before its newline may be cut short, and is none.
    at = text.find(_FORKS, max(end, 0))
    stop = -1 if at < 0 else text.find("\n", at + 1)
    count = text[at + len(_FORKS) : stop] if stop >= 0 else ""
    # u64's checks, written out for the usual count of a few digits.
    forks = int(count) if count.isdigit() and count.isascii() and len(count) < U64_DIGITS else u64(count)
    return Success(ProcStat(total=total, cores=tuple(cores), forks=forks))


def _as_list(times: CpuTimes) -> list[int]:
    return [times.user, times.nice, times.system, times.idle, times.iowait, times.irq, times.softirq, times.steal]


def parse_proc_stat(text: str) -> list[list[int]]:
    """The documented API's adapter (docs/behaviour.md §6): aggregate first, then each core, eight counters each;
    missing fields are 0.

    >>> parse_proc_stat("cpu  4 0 2 90 1 0 0 3 0 0\\ncpu0 4 0 2 90 1 0 0 3 0 0\\n")
    [[4, 0, 2, 90, 1, 0, 0, 3], [4, 0, 2, 90, 1, 0, 0, 3]]
    >>> parse_proc_stat("")
    []
    """
    stat = parse(text).value_or(None)
    if stat is None:
        return []
    return [_as_list(stat.total), *(_as_list(times) for _, times in stat.cores)]
