"""Hypothesis strategies for the system-file snapshots, drawn from the ranges the kernel documents.

Counters are u64 (proc(5): /proc/stat times and /proc/net/dev counters are unsigned long long; iostats.rst:
diskstats counters are unsigned long, 64-bit here; psi.rst: `total` is microseconds as u64). Pressure shares are
percentages printed with two decimals. meminfo values are unsigned long kB, or plain counts (HugePages_*).
"""

from __future__ import annotations

import string

from hypothesis import strategies as st

from orca.sample.parse.diskstats import DiskIo, DiskStats
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.pressure import Pressure, PressureLine
from orca.sample.parse.proc_stat import CpuTimes, ProcStat

U64_MAX = 2**64 - 1
u64 = st.integers(0, U64_MAX)
# Small values are the common case on a real machine; the edges are where parsers break.
counters = st.one_of(st.integers(0, 10**7), u64, st.sampled_from([0, 1, 2**32 - 1, 2**32, 2**63, U64_MAX]))

cpu_times = st.builds(CpuTimes, counters, counters, counters, counters, counters, counters, counters, counters)
# NR_CPUS is at most 8192 on x86_64; an offline core leaves a gap in the numbering.
core_numbers = st.lists(st.integers(0, 8191), unique=True, max_size=12).map(sorted)


@st.composite
def proc_stats(draw: st.DrawFn) -> ProcStat:
    numbers = draw(core_numbers)
    cores = tuple((number, draw(cpu_times)) for number in numbers)
    return ProcStat(total=draw(cpu_times), cores=cores)


# fs/proc/meminfo.c keys: letters, digits, `_` and parentheses (`Active(file)`), never white space or `:`.
meminfo_keys = st.one_of(
    st.sampled_from(["MemTotal", "MemFree", "MemAvailable", "Active(file)", "Inactive(file)", "HugePages_Total"]),
    st.from_regex(r"[A-Za-z][A-Za-z0-9_()]{0,24}", fullmatch=True),
)
# A kB value (unsigned long kB, so bytes up to 2**64 KiB) or a plain count.
meminfo_values = st.one_of(u64.map(lambda kib: kib * 1024), u64)
meminfo_snapshots = st.dictionaries(meminfo_keys, meminfo_values, min_size=1, max_size=60).map(
    lambda bytes_by_key: MemInfo(bytes_by_key=bytes_by_key)
)

# genhd.c prints disk_name(): no white space (`sda`, `nvme0n1p2`, `dm-0`, `cciss/c0d0`, `md127`).
disk_names = st.text(alphabet=string.ascii_letters + string.digits + "-_./!:", min_size=1, max_size=32)
disk_ios = st.builds(DiskIo, name=disk_names, sectors_read=counters, sectors_written=counters)
diskstats_snapshots = st.lists(disk_ios, min_size=1, max_size=20).map(lambda devices: DiskStats(tuple(devices)))

# dev_valid_name(): 1 to 15 bytes (IFNAMSIZ 16 with the NUL), not `.` or `..`, no `/`, `:` or white space.
# `lo` is the one name the parser leaves out, so a snapshot never holds it.
_NAME_ALPHABET = "".join(c for c in string.printable if c not in string.whitespace + "/:")
interface_names = st.text(alphabet=_NAME_ALPHABET, min_size=1, max_size=15).filter(
    lambda name: name not in {".", "..", "lo"}
)
net_dev_snapshots = st.dictionaries(interface_names, st.tuples(counters, counters), max_size=12).map(
    lambda bytes_by_interface: NetDev(bytes_by_interface=bytes_by_interface)
)

# psi.c prints each share as LOAD_INT.LOAD_FRAC of a percentage: 0.00 to 100.00.
shares = st.integers(0, 10000).map(lambda hundredths: hundredths / 100)
pressure_lines = st.builds(PressureLine, avg10=shares, avg60=shares, avg300=shares, total_us=counters)
pressure_snapshots = st.builds(Pressure, some=pressure_lines, full=st.none() | pressure_lines)

# Text that is almost a kernel file: the words these parsers look for, numbers of every sign and size, and the
# separators they split on, shuffled together. Arbitrary text rarely reaches the inner branches; this does.
_WORDS = [
    "cpu", "cpu0", "cpu12", "cpux", "intr", "MemTotal:", "Key:", "kB", "MB", ":", "some", "full", "avg10=",
    "avg60=1.5", "avg300=nan", "total=", "total=-5", "lo:", "eth0:", "eth0:123", "sda", "loop0", "-5", "+5", "1_0",
    "1e3", "٣", "²", "0x10", "nan", "inf", "-0", "=", "|", "\x00", "\ufffd",
]
_SEPARATORS = [" ", " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x1c", "\u2028", ":", "="]
near_miss_tokens = st.one_of(
    st.sampled_from(_WORDS),
    st.integers(-(10**25), 10**25).map(str),
    st.text(max_size=4),
)


@st.composite
def near_miss_texts(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(near_miss_tokens, max_size=60))
    return "".join(token + draw(st.sampled_from(_SEPARATORS)) for token in tokens)


hostile_texts = st.one_of(
    st.text(),
    st.binary().map(lambda raw: raw.decode("utf-8", errors="replace")),
    near_miss_texts(),
)
