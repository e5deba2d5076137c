"""orca.sample: the machine-metrics sampler of the orca pipeline platform.

Every name of the documented API (docs/behaviour.md §6) is importable from here. Names are resolved on first use, so
that `import orca.sample` stays cheap for the command and for other orca modules that need one parser.

`_HOMES` is the one list of those names. The imports under TYPE_CHECKING give the type checker each name's type
(`as` marks them re-exported); a test checks that they name exactly `_HOMES`, each from its home.
"""

# No `from __future__ import annotations`: it is an import, time in which a signal to a starting sampler kills it.
import sys

if getattr(sys, "argv", [])[1:2] == ["sample"] or getattr(sys, "argv", [])[:1] == ["-m"]:
    # Perhaps `orca sample` or `python -m orca.sample` starting (docs/behaviour.md §2.4): every signal is held from
    # this first moment, until `caught` has its handlers in place (when it is the sampler) and lets them through.
    # Only modules loaded already until then (`sys`, `_signal`): any other import would widen the window.
    import _signal

    _held = None  # a platform without signal masks (Windows) holds nothing
    if hasattr(_signal, "pthread_sigmask"):
        _held = _signal.pthread_sigmask(_signal.SIG_BLOCK, _signal.valid_signals())
    from orca.sample.shell.cli.caught import catch_at_start

    catch_at_start(_held)
    del _held

TYPE_CHECKING = False
"""`typing.TYPE_CHECKING` as the type checker sees it, without importing `typing` at every start."""
if TYPE_CHECKING:
    from orca.sample.compute.containers import container_mem as container_mem
    from orca.sample.compute.cpu import cpu_share as cpu_share
    from orca.sample.compute.encode import fixed1 as fixed1
    from orca.sample.compute.names import machine_name as machine_name
    from orca.sample.compute.rates import parse_diskstats as parse_diskstats
    from orca.sample.line_format import PREFIX as PREFIX
    from orca.sample.line_format import ContainerSample as ContainerSample
    from orca.sample.line_format import CpuShare as CpuShare
    from orca.sample.line_format import Disk as Disk
    from orca.sample.line_format import Mem as Mem
    from orca.sample.line_format import Sample as Sample
    from orca.sample.parse.cgroup import container_name as container_name
    from orca.sample.parse.meminfo import parse_meminfo as parse_meminfo
    from orca.sample.parse.net_dev import parse_net_dev as parse_net_dev
    from orca.sample.parse.pid_stat import PidUsage as PidUsage
    from orca.sample.parse.pid_stat import parse_pid_stat as parse_pid_stat
    from orca.sample.parse.pid_stat import parse_pid_usage as parse_pid_usage
    from orca.sample.parse.proc_stat import parse_proc_stat as parse_proc_stat
    from orca.sample.readback.minute import Now as Now
    from orca.sample.readback.minute import newest_minute as newest_minute
    from orca.sample.readback.sample_line import parse_sample_line as parse_sample_line
    from orca.sample.readback.shell.newest import read_newest_minute as read_newest_minute
    from orca.sample.readback.shell.sources import SourceError as SourceError
    from orca.sample.readback.shell.sources import read_samples as read_samples
    from orca.sample.shared.aws import aws_client as aws_client
    from orca.sample.shell.cli.env import default_dirs as default_dirs
    from orca.sample.shell.cli.env import metrics_location as metrics_location
    from orca.sample.shell.cli.env import sample_seconds as sample_seconds
    from orca.sample.shell.cli.sample import sample_main as sample_main
    from orca.sample.shell.machine.containers import container_ids as container_ids
    from orca.sample.shell.out.files import append_line as append_line
    from orca.sample.shell.out.s3 import stage_of as stage_of
    from orca.sample.shell.out.staging import open_private as open_private
    from orca.sample.shell.out.staging import stage_root as stage_root
    from orca.sample.shell.procs.portable import alive as alive
    from orca.sample.shell.procs.portable import tree_rss as tree_rss
    from orca.sample.shell.procs.portable import tree_usage as tree_usage
    from orca.sample.shell.procs.stats import process_stat as process_stat
    from orca.sample.shell.procs.stats import process_stats as process_stats
    from orca.sample.shell.sampler import Sampler as Sampler

_HOMES: dict[str, str] = {
    "container_mem": "orca.sample.compute.containers",
    "cpu_share": "orca.sample.compute.cpu",
    "fixed1": "orca.sample.compute.encode",
    "CpuShare": "orca.sample.line_format",
    "Disk": "orca.sample.line_format",
    "Mem": "orca.sample.line_format",
    "Now": "orca.sample.readback.minute",
    "newest_minute": "orca.sample.readback.minute",
    "PREFIX": "orca.sample.line_format",
    "machine_name": "orca.sample.compute.names",
    "parse_diskstats": "orca.sample.compute.rates",
    "container_name": "orca.sample.parse.cgroup",
    "parse_meminfo": "orca.sample.parse.meminfo",
    "parse_net_dev": "orca.sample.parse.net_dev",
    "PidUsage": "orca.sample.parse.pid_stat",
    "parse_pid_stat": "orca.sample.parse.pid_stat",
    "parse_pid_usage": "orca.sample.parse.pid_stat",
    "parse_proc_stat": "orca.sample.parse.proc_stat",
    "ContainerSample": "orca.sample.line_format",
    "Sample": "orca.sample.line_format",
    "parse_sample_line": "orca.sample.readback.sample_line",
    "sample_main": "orca.sample.shell.cli.sample",
    "container_ids": "orca.sample.shell.machine.containers",
    "default_dirs": "orca.sample.shell.cli.env",
    "metrics_location": "orca.sample.shell.cli.env",
    "sample_seconds": "orca.sample.shell.cli.env",
    "append_line": "orca.sample.shell.out.files",
    "read_newest_minute": "orca.sample.readback.shell.newest",
    "SourceError": "orca.sample.readback.shell.sources",
    "read_samples": "orca.sample.readback.shell.sources",
    "alive": "orca.sample.shell.procs.portable",
    "tree_rss": "orca.sample.shell.procs.portable",
    "tree_usage": "orca.sample.shell.procs.portable",
    "stage_of": "orca.sample.shell.out.s3",
    "open_private": "orca.sample.shell.out.staging",
    "stage_root": "orca.sample.shell.out.staging",
    "aws_client": "orca.sample.shared.aws",
    "process_stat": "orca.sample.shell.procs.stats",
    "process_stats": "orca.sample.shell.procs.stats",
    "Sampler": "orca.sample.shell.sampler",
}
"""Each exported name -> the module that defines it."""

__all__ = sorted(_HOMES)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


if not TYPE_CHECKING:
    # Only at run time: to the type checker the names are the imports above, so a misspelt name is an error there
    # rather than `Any`.

    def __getattr__(name: str) -> object:
        import importlib

        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'orca.sample' has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value
