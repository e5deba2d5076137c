"""The readings of a line through psutil, for platforms without /proc (macOS, the BSDs).

It gives the same readings the /proc readers give (the host's counters, then a table of readers), so the line is
computed and encoded by the same pure code: the same keys, units and meanings wherever it was written. Where psutil
has no such counter on a platform (macOS has no `iowait`, `steal` or irq time) the counter is 0, and a section
psutil cannot give is `null` (see docs/platforms.md for each field's source).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import psutil
from returns.result import Result, Success

from orca.sample.compute.snapshot import HostReadings, value_of
from orca.sample.parse.diskstats import DiskIo, DiskStats
from orca.sample.parse.errors import ParseError
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.proc_stat import CpuTimes, ProcStat
from orca.sample.shell.machine.early import clocks
from orca.sample.shell.machine.fs import FS
from orca.sample.shell.machine.readers import MachineReaders, WholeDisks, disk_readers, run_readers
from orca.sample.shell.machine.source import attempt, self_cpu_seconds
from orca.sample.shell.procs.psutil_procs import PsutilScanner

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


def psutil_host() -> HostReadings:
    """The host's counters through psutil, now: CPU times, memory, disks and interfaces, each read through `attempt`,
    as the /proc readers are, so a psutil call that raises (a permission refused, a platform call that failed) makes
    its section null and is told once until it reads again. No pressure: that is Linux's PSI files."""
    at_ns, wall = clocks()
    failures: dict[str, ParseError] = {}
    stat = value_of(attempt("the CPU times through psutil", _succeeding(read_cpu)), "stat", failures)
    memory = value_of(attempt("the memory figures through psutil", _succeeding(read_memory)), "meminfo", failures)
    devices = value_of(attempt("the disk counters through psutil", _succeeding(read_disk_devices)), "diskstats",
                     failures)
    net = value_of(attempt("the network counters through psutil", _succeeding(read_interfaces)), "net", failures)
    return HostReadings(at_ns, wall, stat, memory, devices, net, None, self_cpu_seconds(), failures)


def psutil_readers(
    fs: FS, dirs: Sequence[str], root: int | None, argv0: str, *, run: bool, from_start: bool = False
) -> MachineReaders:
    """The readers where there is no /proc: the host's counters and the sampler's own CPU through psutil, the run's
    processes (with `run`), the directories.

    `containers` and `pressure` come from Linux's cgroup and PSI files: with this reader `containers` is `null`
    when `--cgroup` was given, and `pressure` is absent. Where a /sys/block lists the whole disks (Linux),
    partitions are not counted twice; elsewhere psutil names whole disks only (macOS: IOMedia "Whole")."""
    table, baseline = [], []
    if run:
        scanner = PsutilScanner()
        every, first = run_readers(scanner, "the run's processes through psutil", root, argv0, from_start=from_start)
        table.append(every)
        baseline.append(first)
    others = disk_readers(dirs, WholeDisks(fs))
    return MachineReaders(psutil_host, (*table, *others), (*baseline, *others))
