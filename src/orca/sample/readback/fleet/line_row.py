"""A run of one line as its table row (docs/metrics.md, "A file of many runs"), made from the line itself: what
cron's `orca sample --count 1` writes is a file of such runs, and a fold of eleven sections made and read for each
would cost tens of times the line's own figures."""

from __future__ import annotations

from orca.sample.line_format import Sample
from orca.sample.readback.fleet.flags import (
    FULL_MEMORY_PERCENT,
    IDLE_MEMORY_PERCENT,
    MEMORY_PRESSURE_PERCENT,
)
from orca.sample.readback.fleet.rows import USAGE_BIT, Compact
from orca.sample.readback.fleet.usage import IDLE_CPU, SATURATED_CPU


def line_row(line: Sample) -> Compact | None:
    """The row of a run of this one line, as `compact` gives it from the line's fold, when the line is of the kind
    most runs of one line are (the host's figures: no `run`, no `cgroup`, its CPU, memory and cores, `dt` over 0) and
    could not be flagged (neither idle, saturated, nor with an OOM kill); else None, and the line is folded."""
    cpu, mem, cores, dt = line.cpu, line.mem, line.cores, line.dt
    if line.run is not None or line.cgroup is not None or cpu is None or mem is None or not cores or not mem.total \
            or not dt > 0 or any(container.oom_kill for container in line.containers or ()):
        return None
    share = cpu.user + cpu.system + cpu.steal
    peak = 100 * mem.used / mem.total
    pressure = None if line.pressure is None else line.pressure.memory
    if (share <= IDLE_CPU and peak <= IDLE_MEMORY_PERCENT) or share >= SATURATED_CPU or peak >= FULL_MEMORY_PERCENT \
            or (pressure is not None and pressure >= MEMORY_PRESSURE_PERCENT):
        return None  # flagged, or may be: said as the fold says it
    fullest = -1.0
    for disk in line.disk or ():
        size = disk.used + disk.free
        if size > 0 and 100 * disk.used / size > fullest:  # the first fullest, as `gather/host.py`'s DiskSection
            fullest = 100 * disk.used / size
    io, net = line.io, line.net
    # Each figure as the line's fold computes it from this one line (`fleet/usage.py`, `gather/`): a sum of one term
    # is that term.
    cores_available = cores * dt
    bytes_available = mem.total * dt
    duration = round(dt, 3)
    saturated = 100 * dt / dt if share >= SATURATED_CPU else 0.0
    return (
        line.host, line.start, line.t - duration, line.t, line.t, duration, 1,
        100 * (share * cores * dt / 100) / cores_available, round(share, 1), peak,
        100 * (mem.used * dt) / bytes_available, cores_available / dt, bytes_available / dt,
        None, None if fullest < 0 else fullest,
        None if io is None else round(io.read * dt) + round(io.write * dt),
        None if net is None else round(net.received * dt) + round(net.sent * dt),
        share * cores * dt / 100, cores_available, mem.used * dt, bytes_available, saturated, peak, pressure,
        USAGE_BIT, None, (),
    )
