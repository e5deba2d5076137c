"""One line from two snapshots (docs/behaviour.md §3): every section computed from the readings it needs, by one
function per section, into the records `line_format` declares. The one way a line is made."""

from __future__ import annotations

from orca.sample.compute.containers import container_entries
from orca.sample.compute.cpu import cpu_share_between
from orca.sample.compute.disks import disks_by_filesystem
from orca.sample.compute.memory import memory_section
from orca.sample.compute.own_cgroup import cgroup_section
from orca.sample.compute.pressure import pressure_share
from orca.sample.compute.rates import io_rate, net_rate
from orca.sample.compute.run import run_section
from orca.sample.compute.snapshot import Snapshot
from orca.sample.line_format import FORMAT_VERSION, UNSET, Sample

NS_PER_SECOND = 1_000_000_000
SHORTEST_DT = 0.001
"""The shortest `dt` a line has: the millisecond it is written to (docs/line.md)."""


def build_line(prev: Snapshot, cur: Snapshot) -> Sample:
    """The line covering `prev` to `cur`: `t` is `cur`'s wall clock, `dt` the monotonic time between them.

    A section is None (`null` in the line, docs/behaviour.md §3.10) when a reading it needs is None in either
    snapshot; the sections that are point-in-time readings (`mem`, `disk`, `cores`) need only `cur`'s. `run` is
    there only with a run, its `cpu` null without both readings of the run's processes.
    """
    # At least the millisecond `dt` is written to: a shorter line (the last, as COMMAND ends just after another)
    # would be written as 0 and whatever it carries would weigh nothing.
    dt = max((cur.monotonic_ns - prev.monotonic_ns) / NS_PER_SECOND, SHORTEST_DT)
    # A difference section needs both readings: written out rather than through a helper, as this runs every line.
    return Sample(
        v=FORMAT_VERSION,
        start=cur.start,
        t=cur.wall,
        dt=dt,
        host=cur.host,
        cores=None if cur.stat is None else len(cur.stat.cores),
        cpu=None if prev.stat is None or cur.stat is None else cpu_share_between(prev.stat, cur.stat),
        mem=None if cur.meminfo is None or cur.rss_bytes is None else memory_section(cur.meminfo, cur.rss_bytes),
        run=(
            None if not cur.run_enabled
            else run_section(prev.run, cur.run, None if cur.stat is None else len(cur.stat.cores), cur.command,
                             cur.ended, round(dt, 3))
        ),
        disk=None if cur.disks is None else disks_by_filesystem(cur.disks),
        io=(
            None if prev.diskstats is None or cur.diskstats is None
            else io_rate(prev.diskstats, cur.diskstats, cur.whole_disks, dt)
        ),
        net=None if prev.net is None or cur.net is None else net_rate(prev.net, cur.net, dt),
        # A container's first line has no previous reading to diff against: container_entries gives it cpu 0.0, so
        # a `prev` without readings is passed as None rather than making the whole section null.
        containers=(
            UNSET if not cur.containers_enabled else None if cur.containers is None
            else container_entries(prev.containers, cur.containers, dt, cur.container_disks)
        ),
        self_cpu=cur.self_cpu,
        pressure=pressure_share(prev.pressure, cur.pressure, dt),
        cgroup=None if cur.own_cgroup is None else cgroup_section(prev.own_cgroup, cur.own_cgroup, dt),
    )

