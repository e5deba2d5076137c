"""orca.sample: the machine-metrics sampler of the orca pipeline platform.

Every function of the seed's API is importable from here (SPEC 1.4). Names are resolved on first use, so that
`import orca.sample` stays cheap for the command and for other orca modules that need one parser.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orca.sample.compute.cpu import cpu_share
    from orca.sample.compute.encode import fixed1
    from orca.sample.compute.line import CpuShare, Disk, Mem
    from orca.sample.compute.minute import Now, newest_minute
    from orca.sample.compute.names import PREFIX, machine_name
    from orca.sample.parse.cgroup import container_mem, container_name
    from orca.sample.parse.diskstats import parse_diskstats
    from orca.sample.parse.meminfo import parse_meminfo
    from orca.sample.parse.net_dev import parse_net_dev
    from orca.sample.parse.pid_stat import PidUsage, parse_pid_stat, parse_pid_usage
    from orca.sample.parse.proc_stat import parse_proc_stat
    from orca.sample.parse.sample_line import ContainerSample, Sample, parse_sample_line
    from orca.sample.shell.cli import sample_main
    from orca.sample.shell.containers import container_ids
    from orca.sample.shell.env import default_dirs, metrics_location, sample_seconds
    from orca.sample.shell.files import append_line
    from orca.sample.shell.newest import read_newest_minute
    from orca.sample.shell.procs import alive, tree_rss, tree_usage
    from orca.sample.shell.s3 import stage_of
    from orca.sample.shell.sampler import Sampler
    from orca.sample.shell.sources import SourceError, read_samples

_HOMES = {
    "cpu_share": "orca.sample.compute.cpu",
    "fixed1": "orca.sample.compute.encode",
    "CpuShare": "orca.sample.compute.line",
    "Disk": "orca.sample.compute.line",
    "Mem": "orca.sample.compute.line",
    "Now": "orca.sample.compute.minute",
    "newest_minute": "orca.sample.compute.minute",
    "PREFIX": "orca.sample.compute.names",
    "machine_name": "orca.sample.compute.names",
    "container_mem": "orca.sample.parse.cgroup",
    "container_name": "orca.sample.parse.cgroup",
    "parse_diskstats": "orca.sample.parse.diskstats",
    "parse_meminfo": "orca.sample.parse.meminfo",
    "parse_net_dev": "orca.sample.parse.net_dev",
    "PidUsage": "orca.sample.parse.pid_stat",
    "parse_pid_stat": "orca.sample.parse.pid_stat",
    "parse_pid_usage": "orca.sample.parse.pid_stat",
    "parse_proc_stat": "orca.sample.parse.proc_stat",
    "ContainerSample": "orca.sample.parse.sample_line",
    "Sample": "orca.sample.parse.sample_line",
    "parse_sample_line": "orca.sample.parse.sample_line",
    "sample_main": "orca.sample.shell.cli",
    "container_ids": "orca.sample.shell.containers",
    "default_dirs": "orca.sample.shell.env",
    "metrics_location": "orca.sample.shell.env",
    "sample_seconds": "orca.sample.shell.env",
    "append_line": "orca.sample.shell.files",
    "read_newest_minute": "orca.sample.shell.newest",
    "alive": "orca.sample.shell.procs",
    "tree_rss": "orca.sample.shell.procs",
    "tree_usage": "orca.sample.shell.procs",
    "stage_of": "orca.sample.shell.s3",
    "SourceError": "orca.sample.shell.sources",
    "read_samples": "orca.sample.shell.sources",
    "Sampler": "orca.sample.shell.sampler",
}

__all__ = [
    "PREFIX",
    "ContainerSample",
    "CpuShare",
    "Disk",
    "Mem",
    "Now",
    "PidUsage",
    "Sample",
    "Sampler",
    "SourceError",
    "alive",
    "append_line",
    "container_ids",
    "container_mem",
    "container_name",
    "cpu_share",
    "default_dirs",
    "fixed1",
    "machine_name",
    "metrics_location",
    "newest_minute",
    "parse_diskstats",
    "parse_meminfo",
    "parse_net_dev",
    "parse_pid_stat",
    "parse_pid_usage",
    "parse_proc_stat",
    "parse_sample_line",
    "read_newest_minute",
    "read_samples",
    "sample_main",
    "sample_seconds",
    "stage_of",
    "tree_rss",
    "tree_usage",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'orca.sample' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
