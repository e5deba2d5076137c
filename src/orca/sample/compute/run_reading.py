"""The run's processes at one moment, as the shell read them, and what one process used between two readings: the
records `compute/run.py` and `compute/top.py` both take (docs/behaviour.md §3.12)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import msgspec

ProcessCounters = tuple[int, int, int, int, "tuple[int, int] | None"]
"""(start, parent, own ticks, children's ticks, I/O) of one process: its `stat`'s fields 22, 4, 14 + 15 (utime +
stime) and 16 + 17 (cutime + cstime, the children it waited for); its `io`'s (`read_bytes`, `write_bytes`), None
when that could not be read. The start tells a process from another that got its pid."""
NO_PROCESSES: Mapping[int, ProcessCounters] = MappingProxyType({})
NO_FIGURES: Mapping[int, int] = MappingProxyType({})
NO_NAMES: Mapping[int, str] = MappingProxyType({})

ProcessUse = tuple[int, "tuple[int, int] | None"]
"""(ticks, (bytes read, bytes written)) one process used between two readings; the bytes None when unknown."""


class RunReading(msgspec.Struct, frozen=True, gc=False):
    """The run's processes at one moment, as the shell read them (`/proc/<pid>/stat` and `io`, or psutil)."""

    at_ns: int
    """`time.monotonic_ns()` of the reading: the host's readings' beside which the processes were read, so the CPU
    and the bytes are over the line's `dt`."""
    clock: int
    """The moment of the reading on the clock the processes' start is counted on, in the same ticks (the boot
    clock for /proc, whose starts are ticks after boot), read before the processes: a process that started at or
    after it is new since. 0 for the reading COMMAND's run starts from (`started`): all of its processes are new."""
    ticks_per_second: int
    """The unit of the times and of `clock`: USER_HZ for /proc, microseconds for psutil."""
    processes: Mapping[int, ProcessCounters]
    """pid -> the counters of each of the run's processes."""
    procs: int
    """The processes that have not ended (zombies not counted)."""
    left: Mapping[int, ProcessCounters] = NO_PROCESSES
    """The processes of the previous reading that are not the run's any more but still exist, read now."""
    rss_bytes: int | None = None
    """Their resident bytes (docs/behaviour.md §3.4); None when not read (the baseline)."""
    resident: Mapping[int, int] = NO_FIGURES
    """pid -> resident bytes, of those whose `statm` read (empty when not read: the baseline)."""
    names: Mapping[int, str] = NO_NAMES
    """pid -> the name a person knows the process by (`compute/top.py`'s `process_name`)."""


def started(at_ns: int, ticks_per_second: int) -> RunReading:
    """The reading COMMAND's run starts from: no process yet, at the moment just before COMMAND was started. Every
    process the first line finds is COMMAND or one it started, so all of its time and bytes are the run's."""
    return RunReading(at_ns, 0, ticks_per_second, NO_PROCESSES, 0)
