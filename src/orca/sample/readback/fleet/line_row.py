"""Runs of one line as their table rows (docs/metrics.md, "A file of many runs"), made from the lines themselves:
what cron's `orca sample --count 1` writes is a file of such runs, and a fold of eleven sections made and read for
each would cost tens of times the line's own figures. The rows are made a column at a time over many lines (a
comprehension a figure), not a row at a time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import attrgetter

from orca.sample.line_format import Sample
from orca.sample.readback.fleet.fields import (
    BEGIN,
    BYTES_AVAILABLE,
    BYTES_USED,
    CORES_AVAILABLE,
    CORES_USED,
    CPU,
    CPUS,
    DISK,
    DURATION,
    FIRST_T,
    HOST_CPU,
    HOST_MEMORY,
    IO,
    LAST_T,
    LINES,
    MEMORY_BYTES,
    MEMORY_PEAK,
    MEMORY_PERCENT,
    NET,
    P95,
    PRESSURE,
    RSS,
    START,
    USAGE_BIT,
)
from orca.sample.readback.fleet.flags import (
    FULL_MEMORY_PERCENT,
    IDLE,
    IDLE_MEMORY_PERCENT,
    MEMORY_PRESSURE_PERCENT,
    Flag,
    idle_said,
)
from orca.sample.readback.fleet.rows import NONE, Columns
from orca.sample.readback.fleet.usage import IDLE_CPU, SATURATED_CPU

_OOM_KILL = attrgetter("oom_kill")
"""A container's OOM kills: `map` of it over a line's containers makes no frame a container, as a generator does."""


def plain(line: Sample) -> bool:
    """Whether a run of this one line can be its row without its fold: the line is of the kind most runs of one line
    are (the host's figures: no `run`, no `cgroup`, its CPU, memory and cores, `dt` over 0) and could be flagged
    idle at most (neither saturated, under memory pressure, nor with an OOM kill)."""
    cpu, mem, containers = line.cpu, line.mem, line.containers
    if line.run is not None or line.cgroup is not None or cpu is None or mem is None or not line.cores \
            or not mem.total or not line.dt > 0 or (containers and any(map(_OOM_KILL, containers))):
        return False
    share = cpu.user + cpu.system + cpu.steal
    peak = 100 * mem.used / mem.total
    pressure = None if line.pressure is None else line.pressure.memory
    return not (share >= SATURATED_CPU or peak >= FULL_MEMORY_PERCENT
                or (pressure is not None and pressure >= MEMORY_PRESSURE_PERCENT))


def _fullest(lines: Sequence[Sample]) -> list[float]:
    """Each line's first fullest disk's percentage, as `gather/host.py`'s DiskSection takes it; NaN without one (a
    loop over all the lines' disks, not a call a line)."""
    nan = math.nan
    each = []
    for line in lines:
        fullest = -1.0
        for disk in line.disk or ():
            used = disk.used
            if (size := used + disk.free) > 0 and (percent := 100 * used / size) > fullest:
                fullest = percent
        each.append(nan if fullest < 0 else fullest)
    return each


def line_rows(lines: Sequence[Sample]) -> Columns:
    """The rows of runs of these lines, one each (every one `plain`), in columns: each figure as the line's fold
    computes it from this one line (`fleet/usage.py`, `gather/`), a sum of one term being that term. Raises
    OverflowError or ValueError for a rate too large to round (then its run is said as the fold says it)."""
    nan = math.nan
    t = [line.t for line in lines]
    dt = [line.dt for line in lines]
    cores = [line.cores or 0 for line in lines]  # none is 0: `plain`
    cpus = [line.cpu for line in lines]
    share = [cpu.user + cpu.system + cpu.steal for cpu in cpus]  # type: ignore[union-attr]
    mems = [line.mem for line in lines]
    used = [mem.used for mem in mems]  # type: ignore[union-attr]
    total = [mem.total for mem in mems]  # type: ignore[union-attr]
    # `round` to some digits is slow, and the lines' `dt`s and shares are few values: each rounded once.
    duration = list(map({each: round(each, 3) for each in set(dt)}.__getitem__, dt))  # none is 0: `plain`
    tenths = {part: round(part, 1) for part in set(share)}
    cores_available = [each * seconds for each, seconds in zip(cores, dt, strict=True)]
    cores_used = [part * each * seconds / 100 for part, each, seconds in zip(share, cores, dt, strict=True)]
    bytes_available = [each * seconds for each, seconds in zip(total, dt, strict=True)]
    bytes_used = [each * seconds for each, seconds in zip(used, dt, strict=True)]
    peak = [100 * part / whole for part, whole in zip(used, total, strict=True)]
    ios = [line.io for line in lines]
    nets = [line.net for line in lines]
    floats = {
        START: [nan if (start := line.start) is None else start for line in lines],
        BEGIN: [end - length for end, length in zip(t, duration, strict=True)],
        FIRST_T: t,
        LAST_T: t,
        DURATION: duration,
        CPU: [100 * part / whole for part, whole in zip(cores_used, cores_available, strict=True)],
        P95: [tenths[part] if part else round(part, 1) for part in share],  # 0.0 and -0.0 are one key
        MEMORY_PEAK: peak,
        MEMORY_PERCENT: [100 * part / whole for part, whole in zip(bytes_used, bytes_available, strict=True)],
        CPUS: [whole / seconds for whole, seconds in zip(cores_available, dt, strict=True)],
        MEMORY_BYTES: [whole / seconds for whole, seconds in zip(bytes_available, dt, strict=True)],
        DISK: _fullest(lines),
        CORES_USED: cores_used,
        CORES_AVAILABLE: cores_available,
        BYTES_USED: bytes_used,
        BYTES_AVAILABLE: bytes_available,
        HOST_CPU: [0.0] * len(lines),  # no line at `SATURATED_CPU` or more is plain
        HOST_MEMORY: peak,
        PRESSURE: [nan if (pressure := line.pressure) is None or (memory := pressure.memory) is None else memory
                   for line in lines],
    }
    ints = {
        LINES: [1] * len(lines),
        RSS: [NONE] * len(lines),
        IO: [NONE if io is None else round(io.read * seconds) + round(io.write * seconds)
             for io, seconds in zip(ios, dt, strict=True)],
        NET: [NONE if net is None else round(net.received * seconds) + round(net.sent * seconds)
              for net, seconds in zip(nets, dt, strict=True)],
    }
    # Idle: its CPU never over `IDLE_CPU` (0% of its time over it) and its memory's peak at most `IDLE_MEMORY_PERCENT`.
    flags: dict[int, tuple[Flag, ...]] = {
        place: (Flag(IDLE, idle_said(0.0, memory, own=False)),)
        for place, (part, memory) in enumerate(zip(share, peak, strict=True))
        if part <= IDLE_CPU and memory <= IDLE_MEMORY_PERCENT}
    return Columns([line.host for line in lines], floats, ints, USAGE_BIT, flags)
