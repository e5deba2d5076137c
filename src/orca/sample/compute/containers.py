"""Container entries of a line (docs/behaviour.md §3.8, with its extension fields), from two sets of cgroup readings."""

from __future__ import annotations

import math
from collections.abc import Mapping

from orca.sample.compute.line import ContainerEntry
from orca.sample.compute.snapshot import ContainerReading
from orca.sample.parse.cgroup import flat_keyed, memory_current
from orca.sample.parse.numbers import USEC_PER_SECOND


def container_entries(
    prev: tuple[ContainerReading, ...] | None, cur: tuple[ContainerReading, ...], dt: float
) -> tuple[ContainerEntry, ...]:
    """One entry per reading in `cur`, sorted by name; `prev` only gives the `cpu` deltas, matched by id.

    >>> r = ContainerReading("a" * 64, "pg", 1000, {"inactive_file": 300, "active_file": 200}, {"oom_kill": 2}, 50)
    >>> container_entries(None, (r,), 1.0)
    (ContainerEntry(name='pg', mem=700, cpu=0.0, mem_nocache=500, oom_kill=2),)
    """
    previous_usage = {reading.container_id: reading.cpu_usage_usec for reading in prev or ()}
    # Sorted by name, the id breaking ties so that two containers with one name keep their order from line to line.
    ordered = sorted(cur, key=lambda reading: (reading.name, reading.container_id))
    return tuple(
        ContainerEntry(
            name=reading.name,
            mem=_mem(reading.memory_current, reading.memory_stat),
            cpu=_cpu_percent(previous_usage.get(reading.container_id), reading.cpu_usage_usec, dt),
            mem_nocache=_mem_nocache(reading.memory_current, reading.memory_stat),
            oom_kill=None if reading.memory_events is None else reading.memory_events.get("oom_kill"),
        )
        for reading in ordered
    )


def container_mem(current: str, stat: str) -> int:
    """The documented API's `container_mem`: an entry's `mem` from the texts of `memory.current` and `memory.stat`;
    -1 when `current` is not a number of bytes. A missing `inactive_file` (or a `memory.stat` that does not parse)
    subtracts nothing.

    >>> container_mem("10000\\n", "anon 6000\\ninactive_file 3000\\n")
    7000
    >>> container_mem("1000", "inactive_file 3000")
    0
    >>> container_mem("max", "")
    -1
    """
    memory_stat = flat_keyed(stat, "memory.stat").value_or({})
    return memory_current(current).map(lambda used: _mem(used, memory_stat)).value_or(-1)


def _mem(memory_current: int, memory_stat: Mapping[str, int]) -> int:
    """docker stats' number: memory.current less the page cache's inactive files (docs/behaviour.md §3.8)."""
    return max(0, memory_current - memory_stat.get("inactive_file", 0))


def _mem_nocache(memory_current: int, memory_stat: Mapping[str, int]) -> int:
    """memory.current less all the file cache, active and inactive: what reclaim cannot free (docs/behaviour.md
    §3.8)."""
    return max(0, memory_current - memory_stat.get("active_file", 0) - memory_stat.get("inactive_file", 0))


def _cpu_percent(previous_usec: int | None, current_usec: int | None, dt: float) -> float:
    """Percent of one core over `dt`: 0.0 without a previous reading, after a reset, or for a dt that isn't > 0."""
    if previous_usec is None or current_usec is None or not dt > 0 or current_usec < previous_usec:
        return 0.0
    share = 100.0 * (current_usec - previous_usec) / (dt * USEC_PER_SECOND)
    # A vanishingly small dt can overflow to inf, which JSON cannot carry.
    return share if math.isfinite(share) else 0.0
