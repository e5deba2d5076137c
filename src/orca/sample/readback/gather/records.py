"""What one run did (docs/metrics.md, "The summary"): the records a summary is made of, one per section of the line
(each defined beside the section's fold in `readback/gather/`), and `InstanceSummary`, which holds them. Their field
names are the keys of `orca metrics --json`, and their number types (the line's, `line_format.py`, and `Hundredths`)
the decimals it writes each with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from msgspec import Meta

from orca.sample.line_format import Count, CpuSeconds, Seconds
from orca.sample.readback.gather.containers import ContainerSummary
from orca.sample.readback.gather.host import CpuSummary, DiskSummary, MemorySummary
from orca.sample.readback.gather.limits import CgroupSummary
from orca.sample.readback.gather.pressure import PressureSummary
from orca.sample.readback.gather.processes import ExitSummary, RunSummary
from orca.sample.readback.gather.top import ProcessSummary
from orca.sample.readback.gather.traffic import IoSummary, NetSummary

__all__ = ["CgroupSummary", "ContainerSummary", "CpuSummary", "DiskSummary", "ExitSummary", "InstanceSummary",
           "IoSummary", "MemorySummary", "NetSummary", "PressureSummary", "ProcessSummary", "RunSummary"]

Hundredths = Annotated[float, Meta(ge=0, extra={"places": 2})]
"""A figure said to two decimals: the sampler's overhead, a percent of one core, as the text prints it."""


@dataclass(frozen=True, slots=True)
class InstanceSummary:
    """One run: the lines of one host and one `start` in one file or object."""

    name: str
    """The file, `-` or object the lines came from."""
    host: str
    start: Seconds | None
    """The lines' `start` (Unix seconds): which run of that host they are; None for lines of an older sampler."""
    cores: Count | None
    """The newest line's `cores`."""
    first_t: Seconds
    """The first line's `t`, in the order written."""
    last_t: Seconds
    """The last line's `t`, in the order written."""
    duration: Seconds
    """Seconds from the run's start (with a COMMAND, the command's) to its last line: the sum of its lines' `dt`, the
    sampler's monotonic clock (`gather/times.py`), so a clock stepped inside the run is neither time nor a gap."""
    lines: Count
    gaps: Count
    """Lines after the first whose `dt` is over twice the median `dt`: the sampler was stopped, or starved."""
    median_dt: Seconds
    run: RunSummary | None
    """The run's own processes and, with `-- COMMAND`, what ran and how it ended; None without a `run` section."""
    cgroup: CgroupSummary | None
    """The run against its cgroup's limits; None without a `cgroup` section."""
    cpu: CpuSummary | None
    memory: MemorySummary | None
    disk: DiskSummary | None
    io: IoSummary | None
    net: NetSummary | None
    pressure: PressureSummary | None
    containers: tuple[ContainerSummary, ...]
    self_cpu_seconds: CpuSeconds
    """The sampler's own CPU over the run."""
    overhead_percent: Hundredths | None
    """`self_cpu_seconds` over the time the lines cover (the sum of `dt`), as a percent of one core; None when they
    cover less than a second."""
    containers_omitted: Count = 0
    """Containers not in `containers`, which holds those with the highest memory peak (at most 1,000)."""
    containers_omitted_estimated: bool = False
    """Whether `containers_omitted` is an estimate (off by about 1 %), as it is past thousands of names."""
    top: tuple[ProcessSummary, ...] | None = None
    """The run's processes that used the most, by name (`gather/top.py`): those of the highest memory peak, then
    those of the most CPU seconds; None when no line had a `run.top`."""
