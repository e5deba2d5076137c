"""Hypothesis strategies for the pure core's inputs: the snapshots' readings, as the parsers and the shell give them.

Shared by the property tests of each section and of `build_line`; the bounds are the kernel's (proc(5), statvfs(3),
iostats.rst).
"""

from __future__ import annotations

from hypothesis import strategies as st

from orca.sample.compute.snapshot import DiskReading
from orca.sample.parse.diskstats import DiskIo, DiskStats
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.proc_stat import CpuTimes, ProcStat

# /proc/stat times, /proc/net/dev bytes and diskstats sectors are unsigned 64-bit counters that may wrap.
U64_MAX = 2**64 - 1
counters = st.integers(min_value=0, max_value=U64_MAX)

# --- /proc/stat ------------------------------------------------------------------------------------------------------
cpu_times = st.builds(CpuTimes, *[counters] * 8)


@st.composite
def proc_stats(draw: st.DrawFn, times: st.SearchStrategy[CpuTimes] = cpu_times) -> ProcStat:
    numbers = draw(st.lists(st.integers(min_value=0, max_value=511), unique=True, max_size=6))
    # proc(5): `processes` counts forks since boot (an unsigned long).
    forks = draw(st.none() | st.integers(min_value=0, max_value=U64_MAX))
    return ProcStat(total=draw(times), cores=tuple((n, draw(times)) for n in numbers), forks=forks)


# --- /proc/meminfo: kB (unsigned long), given by the parser × 1024; up to 2^44 kB (16 PiB) ----------------------------
kilobytes = st.integers(min_value=0, max_value=2**44).map(lambda kb: kb * 1024)
MEMINFO_KEYS = ["MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "Active(file)", "Inactive(file)",
                "SwapTotal", "SwapFree", "Shmem", "Slab"]
meminfos = st.builds(MemInfo, st.dictionaries(st.sampled_from(MEMINFO_KEYS), kilobytes))

# --- statvfs(3): f_bavail <= f_bfree <= f_blocks; fragment sizes are powers of two ----------------------------------
# A handful of st_dev values makes directories share file systems often.
block_counts = st.integers(min_value=0, max_value=2**48)
paths = st.text(alphabet="abcdefghijklmnopqrstuvwxyz/._-", min_size=1, max_size=30).map(lambda p: "/" + p)


@st.composite
def disk_readings(draw: st.DrawFn) -> DiskReading:
    blocks = draw(block_counts)
    free = draw(st.integers(min_value=0, max_value=blocks))
    available = draw(st.integers(min_value=0, max_value=free))
    fragment = draw(st.sampled_from([512, 1024, 2048, 4096, 65536]))
    return DiskReading(draw(paths), draw(st.integers(0, 5)), blocks, free, available, fragment)


# --- /proc/net/dev and /proc/diskstats ------------------------------------------------------------------------------
# Interface names are at most 15 characters (IFNAMSIZ - 1) and never hold ':' or whitespace.
interface_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=15)
device_names = st.one_of(
    st.sampled_from(["sda", "sda1", "vda", "vda2", "nvme0n1", "nvme0n1p1", "loop0", "ram0", "zram0", "dm-0", "md127",
                     "sr0", "fd0", "mmcblk0"]),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12),
)
net_devs = st.builds(NetDev, st.dictionaries(interface_names, st.tuples(counters, counters), max_size=6))
disk_stats = st.builds(
    DiskStats, st.lists(st.builds(DiskIo, device_names, counters, counters), max_size=8, unique_by=lambda d: d.name)
    .map(tuple),
)
