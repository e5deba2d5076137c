"""The readings of a line through psutil, for platforms without /proc (macOS, the BSDs).

It fills the same `Snapshot` the /proc readers fill, so the line is computed and encoded by the same pure code: the
same keys, units and meanings wherever it was written. Where psutil has no such counter on a platform (macOS has no
`iowait`, `steal` or irq time) the counter is 0, and a section psutil cannot give is `null` (see docs/platforms.md
for each field's source).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import psutil
from returns.result import Failure, Result, Success

from orca.sample.compute.snapshot import Snapshot
from orca.sample.parse.diskstats import DiskIo, DiskStats
from orca.sample.parse.errors import ParseError
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.proc_stat import CpuTimes, ProcStat
from orca.sample.shell.machine.fs import FS
from orca.sample.shell.machine.kernel import read_disks, read_whole_disks
from orca.sample.shell.machine.source import attempt, host_name, self_cpu_seconds
from orca.sample.shell.procs.psutil_procs import RunRss

T = TypeVar("T")

MICROSECONDS = 1_000_000
"""CPU times are kept as whole microseconds: the shares are ratios, so the unit only has to be fine enough."""
SECTOR_BYTES = 512
"""The /proc readers count 512-byte sectors; psutil gives bytes."""
LOOPBACK = frozenset({"lo", "lo0"})
"""Linux's and the BSDs' (macOS's) loopback interface names."""
_CPU_FIELDS = CpuTimes._fields
"""psutil's names for the CPU times are /proc/stat's, as `CpuTimes` has them."""


def _field(record: object, name: str) -> int:
    """A whole-number field of one of psutil's records, looked up by name: their fields differ per platform."""
    return int(getattr(record, name))


def cpu_times(times: object) -> CpuTimes:
    """psutil's seconds as whole microseconds, a counter the platform does not have being 0.

    >>> from collections import namedtuple
    >>> mac = namedtuple("scputimes", "user nice system idle")(1.5, 0.25, 0.5, 10.0)
    >>> cpu_times(mac)
    CpuTimes(user=1500000, nice=250000, system=500000, idle=10000000, iowait=0, irq=0, softirq=0, steal=0)
    """
    counters = [round(float(getattr(times, name, 0.0)) * MICROSECONDS) for name in _CPU_FIELDS]
    return CpuTimes(*(max(0, counter) for counter in counters))


def read_cpu() -> ProcStat:
    """The aggregate and per-core CPU times; cores are numbered in psutil's order (the platform's)."""
    total = psutil.cpu_times()
    cores = psutil.cpu_times(percpu=True)
    return ProcStat(total=cpu_times(total), cores=tuple((n, cpu_times(times)) for n, times in enumerate(cores)))


def memory_keys(memory: object, swap: object | None) -> dict[str, int]:
    """psutil's memory and swap figures under the /proc/meminfo names the `mem` section is computed from.

    `Cached` is psutil's `cached` where the platform has a file cache figure (Linux: page cache and reclaimable
    slab; the BSDs), else its `inactive` pages (macOS: the part of `available` beyond free memory, which the system
    reclaims first). Without swap figures there is no SwapTotal, which the section reads as no swap.

    >>> from collections import namedtuple
    >>> mac = namedtuple("svmem", "total available percent used free active inactive wired")
    >>> swap = namedtuple("sswap", "total used free percent sin sout")
    >>> memory_keys(mac(100, 60, 40.0, 30, 20, 25, 40, 5), swap(10, 4, 6, 40.0, 0, 0))
    {'MemTotal': 100, 'MemAvailable': 60, 'Cached': 40, 'SwapTotal': 10, 'SwapFree': 6}
    >>> linux = namedtuple("svmem", "total available inactive cached")
    >>> memory_keys(linux(100, 60, 30, 20), None)
    {'MemTotal': 100, 'MemAvailable': 60, 'Cached': 20}
    """
    keys = {"MemTotal": _field(memory, "total"), "MemAvailable": _field(memory, "available")}
    cache = getattr(memory, "cached", None)
    if cache is None:
        cache = getattr(memory, "inactive", None)
    if cache is not None:
        keys["Cached"] = int(cache)
    if swap is not None:
        keys["SwapTotal"] = _field(swap, "total")
        keys["SwapFree"] = _field(swap, "free")
    return keys


def read_memory() -> MemInfo:
    # No swap figures: no swap, not a failure of the section.
    swap = attempt("swap", _succeeding(psutil.swap_memory)).value_or(None)
    return MemInfo(bytes_by_key=memory_keys(psutil.virtual_memory(), swap))


def read_disk_devices() -> DiskStats | None:
    return disk_devices(psutil.disk_io_counters(perdisk=True))


def read_interfaces() -> NetDev | None:
    return interface_bytes(psutil.net_io_counters(pernic=True))


def _succeeding(read: Callable[[], T]) -> Callable[[], Result[T, ParseError]]:
    """`read` as `attempt` takes it: what it returns is the reading; what it raises, the failure."""

    def reading() -> Result[T, ParseError]:
        return Success(read())

    return reading


def disk_devices(counters: Mapping[str, object]) -> DiskStats | None:
    """Per-disk byte counters as 512-byte sectors; None when the platform lists no disk.

    A remainder under one sector is dropped from each reading, never accumulated: a rate is off by under 512
    bytes per interval.

    >>> from collections import namedtuple
    >>> io = namedtuple("sdiskio", "read_count write_count read_bytes write_bytes")
    >>> disk_devices({"disk0": io(1, 2, 1024, 1535)})
    DiskStats(devices=(DiskIo(name='disk0', sectors_read=2, sectors_written=2),))
    >>> disk_devices({}) is None
    True
    """
    devices = tuple(
        DiskIo(
            name=name,
            sectors_read=_field(io, "read_bytes") // SECTOR_BYTES,
            sectors_written=_field(io, "write_bytes") // SECTOR_BYTES,
        )
        for name, io in counters.items()
    )
    return DiskStats(devices=devices) if devices else None


def interface_bytes(counters: Mapping[str, object]) -> NetDev | None:
    """Bytes received and sent per interface, loopback (`lo`, `lo0`) left out; None when there is no interface.

    >>> from collections import namedtuple
    >>> nic = namedtuple("snetio", "bytes_sent bytes_recv")
    >>> interface_bytes({"lo0": nic(5, 5), "en0": nic(300, 1200)})
    NetDev(bytes_by_interface={'en0': (1200, 300)})
    """
    if not counters:
        return None
    return NetDev(
        bytes_by_interface={
            name: (_field(nic, "bytes_recv"), _field(nic, "bytes_sent"))
            for name, nic in counters.items()
            if name not in LOOPBACK
        }
    )


class PsutilReader:
    """Takes a `Snapshot` through psutil: what `Sampler.snapshot()` gives where there is no /proc.

    `containers` and `pressure` come from Linux's cgroup and PSI files: with this reader `containers` is `null`
    when `--cgroup` was given, and `pressure` is absent."""

    def __init__(
        self, root: int | None, argv0: str, dirs: Sequence[str], cgroup: str = "", *, fs: FS | None = None,
        run: bool | None = None,
    ):
        self.root = root
        self.run = root is not None or bool(argv0) if run is None else run
        """The line has a `run` (--pid, --match, or a COMMAND)."""
        self.argv0 = argv0
        self.dirs = tuple(dirs)
        self.cgroup = cgroup
        self.fs = FS() if fs is None else fs
        self.host = host_name()
        self._run = RunRss()
        # Where a /sys/block lists the whole disks (Linux), partitions are not counted twice; it is read again only
        # when the disks psutil names change. Elsewhere psutil names whole disks only (macOS: IOMedia "Whole").
        self._disk_names: frozenset[str] | None = None
        self._whole_disks: frozenset[str] | None = None

    def snapshot(self, start: float | None = None) -> Snapshot:
        """Everything one line needs, read now (`start`: the sampler's, None for the baseline itself). Never raises:
        each section is read through `attempt`, as the /proc readers are, so a psutil call that raises (a permission
        refused, a platform call that failed) makes its section null and is told once until it reads again."""
        at_ns = time.monotonic_ns()
        wall = time.time()
        failures: dict[str, ParseError] = {}
        diskstats = _value(attempt("the disk counters through psutil", _succeeding(read_disk_devices)), "diskstats",
                           failures)
        run_reading = functools.partial(self._run.reading, self.root, self.argv0)
        run = _value(attempt("the run's processes through psutil", _succeeding(run_reading)), "rss", failures)
        return Snapshot(
            monotonic_ns=at_ns,
            wall=wall,
            host=self.host,
            stat=_value(attempt("the CPU times through psutil", _succeeding(read_cpu)), "stat", failures),
            meminfo=_value(attempt("the memory figures through psutil", _succeeding(read_memory)), "meminfo",
                           failures),
            rss_bytes=None if run is None else run.rss_bytes,
            disks=_value(attempt("--dirs", functools.partial(read_disks, self.dirs)), "disks", failures),
            diskstats=diskstats,
            whole_disks=self._current_whole_disks(diskstats),
            net=_value(attempt("the network counters through psutil", _succeeding(read_interfaces)), "net",
                       failures),
            containers_enabled=bool(self.cgroup),
            containers=None,
            pressure=None,
            self_cpu=attempt("the sampler's CPU", _succeeding(self_cpu_seconds)).value_or(0.0),
            start=wall if start is None else start,
            run_enabled=self.run,
            run=run if self.run else None,
            failures=failures,
        )

    def _current_whole_disks(self, diskstats: DiskStats | None) -> frozenset[str] | None:
        names = None if diskstats is None else frozenset(device.name for device in diskstats.devices)
        if names is None or names != self._disk_names:
            self._whole_disks = attempt("/sys/block", _succeeding(lambda: read_whole_disks(self.fs))).value_or(None)
            self._disk_names = names
        return self._whole_disks


def _value(reading: Result[T, ParseError], source: str, failures: dict[str, ParseError]) -> T | None:
    """The reading, or None with why in `failures`."""
    if isinstance(reading, Failure):
        failures[source] = reading.failure()
        return None
    return reading.unwrap()
