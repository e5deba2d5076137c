"""The readings of a line through psutil, for platforms without /proc (macOS, the BSDs).

It fills the same `Snapshot` the /proc readers fill, so the line is computed and encoded by the same pure code: the
same keys, units and meanings wherever it was written. Where psutil has no such counter on a platform (macOS has no
`iowait`, `steal` or irq time) the counter is 0, and a section psutil cannot give is `null` (see the README's
"Platforms" section for each field's source).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import psutil

from orca.sample.compute.snapshot import Snapshot
from orca.sample.parse.diskstats import DiskIo, DiskStats
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.proc_stat import CpuTimes, ProcStat
from orca.sample.shell.psutil_procs import RunRss
from orca.sample.shell.readers import read_disks, read_whole_disks
from orca.sample.shell.sampler import _guarded, _host, _self_cpu  # the Sampler's own, shared

MICROSECONDS = 1_000_000
"""CPU times are kept as whole microseconds: the shares are ratios, so the unit only has to be fine enough."""
SECTOR_BYTES = 512
"""The /proc readers count 512-byte sectors; psutil gives bytes."""
LOOPBACK = frozenset({"lo", "lo0"})
"""Linux's and the BSDs' (macOS's) loopback interface names."""
_CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


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
    swap = _guarded(psutil.swap_memory)
    return MemInfo(bytes_by_key=memory_keys(psutil.virtual_memory(), swap))


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

    def __init__(self, root: int | None, argv0: str, dirs: Sequence[str], cgroup: str = "", *, sys: str = "/sys"):
        self.root = root
        self.argv0 = argv0
        self.dirs = tuple(dirs)
        self.cgroup = cgroup
        self.sys = sys
        self.host = _host()
        self._run = RunRss()
        # Where a /sys/block lists the whole disks (Linux), partitions are not counted twice; it is read again only
        # when the disks psutil names change. Elsewhere psutil names whole disks only (macOS: IOMedia "Whole").
        self._disk_names: frozenset[str] | None = None
        self._whole_disks: frozenset[str] | None = None

    def snapshot(self) -> Snapshot:
        """Everything one line needs, read now. Never raises."""
        at_ns = time.monotonic_ns()
        wall = time.time()
        diskstats = _guarded(lambda: disk_devices(psutil.disk_io_counters(perdisk=True)))
        return Snapshot(
            monotonic_ns=at_ns,
            wall=wall,
            host=self.host,
            stat=_guarded(read_cpu),
            meminfo=_guarded(read_memory),
            rss_bytes=_guarded(lambda: self._run.run_rss(self.root, self.argv0)),
            disks=_guarded(lambda: read_disks(self.dirs).value_or(None)),
            diskstats=diskstats,
            whole_disks=self._current_whole_disks(diskstats),
            net=_guarded(lambda: interface_bytes(psutil.net_io_counters(pernic=True))),
            containers_enabled=bool(self.cgroup),
            containers=None,
            pressure=None,
            self_cpu=_guarded(_self_cpu) or 0.0,
        )

    def _current_whole_disks(self, diskstats: DiskStats | None) -> frozenset[str] | None:
        names = None if diskstats is None else frozenset(device.name for device in diskstats.devices)
        if names is None or names != self._disk_names:
            self._whole_disks = _guarded(lambda: read_whole_disks(self.sys))
            self._disk_names = names
        return self._whole_disks
