"""Container entries of a line (docs/behaviour.md §3.8, with its extension fields), from two sets of cgroup readings."""

from __future__ import annotations

import math
from collections.abc import Mapping

from orca.sample.compute.rates import net_rate, pair_rates
from orca.sample.compute.snapshot import ContainerNet, ContainerReading
from orca.sample.line_format import ContainerSample, IoRate, NetRate
from orca.sample.parse.cgroup import CpuPeriods, DeviceIo, flat_keyed, memory_current
from orca.sample.parse.numbers import USEC_PER_SECOND


def container_entries(
    prev: tuple[ContainerReading, ...] | None,
    cur: tuple[ContainerReading, ...],
    dt: float,
    disks: frozenset[str] | None = None,
) -> tuple[ContainerSample, ...]:
    """One entry per reading in `cur`, sorted by name; `prev` only gives the deltas, matched by id.

    `disks` is the `MAJ:MIN` of each whole disk: a container's `io` counts those devices only, so a dm or md device
    and the disks under it are counted once; without it there is no `io`.

    >>> r = ContainerReading("a" * 64, "pg", 1000, {"inactive_file": 300, "active_file": 200}, {"oom_kill": 2}, 50)
    >>> [entry] = container_entries(None, (r,), 1.0)
    >>> entry.name, entry.mem, entry.cpu, entry.mem_nocache, entry.oom_kill, entry.throttled, entry.io
    ('pg', 700, 0.0, 500, 2, None, None)
    """
    previous = {reading.container_id: reading for reading in prev or ()}
    # Sorted by name, the id breaking ties so that two containers with one name keep their order from line to line.
    ordered = sorted(cur, key=lambda reading: (reading.name, reading.container_id))
    return tuple(_entry(previous.get(reading.container_id), reading, dt, disks) for reading in ordered)


def _entry(before: ContainerReading | None, reading: ContainerReading, dt: float,
           disks: frozenset[str] | None) -> ContainerSample:
    return ContainerSample(
        name=reading.name,
        mem=_mem(reading.memory_current, reading.memory_stat),
        cpu=_cpu_percent(None if before is None else before.cpu_usage_usec, reading.cpu_usage_usec, dt),
        mem_nocache=_mem_nocache(reading.memory_current, reading.memory_stat),
        oom_kill=None if reading.memory_events is None else reading.memory_events.get("oom_kill"),
        throttled=_throttled(None if before is None else before.cpu_periods, reading.cpu_periods),
        mem_max=reading.memory_max,
        pids=reading.pids,
        io=_io(None if before is None else before.io, reading.io, disks, dt),
        net=_net(None if before is None else before.net, reading.net, dt),
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


def _throttled(before: CpuPeriods | None, now: CpuPeriods | None) -> float | None:
    """100 × Δnr_throttled / Δnr_periods, within 0-100; 0.0 on a first reading or when no period elapsed.

    >>> _throttled(CpuPeriods(1000, 100), CpuPeriods(1050, 130)), _throttled(CpuPeriods(7, 0), CpuPeriods(7, 0))
    (60.0, 0.0)
    """
    if now is None:
        return None
    if before is None or now.periods <= before.periods:
        return 0.0
    throttled = max(0, now.throttled - before.throttled)
    return min(100.0, 100.0 * throttled / (now.periods - before.periods))


def _io(before: Mapping[str, DeviceIo] | None, now: Mapping[str, DeviceIo] | None, disks: frozenset[str] | None,
        dt: float) -> IoRate | None:
    """Bytes per second over the whole disks; a device with no earlier reading (or a first line) counts 0."""
    if now is None or disks is None:
        return None
    read, write = pair_rates(_byte_pairs(before or {}, disks), _byte_pairs(now, disks), dt)
    return IoRate(read=read, write=write)


def _byte_pairs(devices: Mapping[str, DeviceIo], disks: frozenset[str]) -> dict[str, tuple[int, int]]:
    return {device: (io.read_bytes, io.written_bytes) for device, io in devices.items() if device in disks}


def _net(before: ContainerNet | None, now: ContainerNet | None, dt: float) -> NetRate | None:
    """Bytes per second in the container's namespace; 0 on its first reading there (a restart makes a new one)."""
    if now is None:
        return None
    if before is None or before.namespace != now.namespace:
        return NetRate(received=0, sent=0)
    return net_rate(before.dev, now.dev, dt)
