"""Properties of the quick path (compute/quick.py, README "Performance"): wherever it makes a line, the line is the
bytes the general path (the parsers' snapshots, `build_line`, `encode_line`) makes from the same files; and it does
make the line whenever every file reads as the kernel prints it, so the usual line never pays for both.

The general path's snapshots come from the sampler's own fallback (`Sampler._given`: the files given as bytes
instead of read), so both sides start from the same bytes.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import string

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute import quick
from orca.sample.compute.build import build_line
from orca.sample.compute.encode import encode_line
from orca.sample.compute.snapshot import DiskReading, Snapshot
from orca.sample.parse.diskstats import DiskIo, DiskStats
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.pressure import Pressure, PressureLine
from orca.sample.parse.proc_stat import CpuTimes, ProcStat
from orca.sample.shell.machine.early import RATE_FILES, EarlyReadings
from orca.sample.shell.sampler import Sampler
from tests.property import strategies_system as system
from tests.property.render_system import (
    render_diskstats,
    render_meminfo,
    render_net_dev,
    render_pressure,
    render_proc_stat,
)

PROC = "/nonexistent/quick-path-proc"
"""Never read: every file the lines need is given."""
STAT, DISKSTATS, NET_DEV, PRESSURE_CPU, PRESSURE_MEMORY, PRESSURE_IO, MEMINFO = (
    os.path.join(PROC, name) for name in (*RATE_FILES, "meminfo")
)
PRESSURE_FILES = (PRESSURE_CPU, PRESSURE_MEMORY, PRESSURE_IO)
Texts = dict[str, bytes | OSError]

_GENERAL: list[Sampler] = []


def general_sampler() -> Sampler:
    """One sampler for every example, whose files are always given (made on first use: its baseline finds none)."""
    if not _GENERAL:
        _GENERAL.append(Sampler(0, "", [], proc=PROC, sys=PROC, reader="proc", quick_lines=False))
    return _GENERAL[0]


@dataclasses.dataclass(frozen=True)
class Moment:
    """What a line reads besides the kernel files: the same for both paths."""

    wall: float
    host: str
    disks: tuple[DiskReading, ...]
    whole_disks: frozenset[str] | None
    rss: int
    self_cpu: float


def general_line(prev: Texts, cur: Texts, prev_ns: int, cur_ns: int, moment: Moment) -> bytes:
    sampler = general_sampler()
    before = with_moment(sampler._given(EarlyReadings(PROC, prev_ns, 0.0, prev)), moment)
    after = with_moment(sampler._given(EarlyReadings(PROC, cur_ns, moment.wall, cur)), moment)
    return encode_line(build_line(before, after))


def with_moment(snapshot: Snapshot, moment: Moment) -> Snapshot:
    return dataclasses.replace(
        snapshot, host=moment.host, disks=moment.disks, whole_disks=moment.whole_disks, rss_bytes=moment.rss,
        self_cpu=moment.self_cpu,
    )


def counters_of(texts: Texts, monotonic_ns: int) -> quick.Counters | None:
    missing = OSError(errno.ENOENT, "not given")
    return quick.counters(
        texts.get(STAT, missing),
        texts.get(DISKSTATS, missing),
        texts.get(NET_DEV, missing),
        tuple(texts.get(path, missing) for path in PRESSURE_FILES),
        monotonic_ns,
    )


def quick_line(prev: Texts, cur: Texts, prev_ns: int, cur_ns: int, moment: Moment) -> bytes | None:
    before, after = counters_of(prev, prev_ns), counters_of(cur, cur_ns)
    if before is None or after is None:
        return None
    return quick.line(
        before, after, cur.get(MEMINFO, OSError(errno.ENOENT, "not given")), wall=moment.wall, host=moment.host,
        disks=moment.disks, whole_disks=moment.whole_disks, rss=moment.rss, self_cpu=moment.self_cpu,
    )


# --- readings as the kernel prints them, the same cores, devices and pressure files on both lines ------------------
# Counters up to 10^12 and lines at least 10 ms apart: a rate (sectors × 512 / dt) then fits the 64-bit integer a
# line holds as a plain number; beyond that the quick path leaves the line to the general encoder (the last property).
ordinary = st.integers(0, 10**12)
elapsed = st.integers(10**7, 10**12)
times = st.builds(CpuTimes, *[ordinary] * 8)
core_numbers = st.lists(st.integers(0, 4095), unique=True, max_size=8).map(sorted)
device_names = st.lists(
    st.sampled_from(["sda", "sda1", "vda", "vda1", "nvme0n1", "nvme0n1p1", "loop0", "dm-0", "md127", "sr0", "xvdf"]),
    min_size=1, max_size=6, unique=True,
)
interfaces = st.dictionaries(
    st.text(alphabet=string.ascii_lowercase + string.digits + ".-", min_size=1, max_size=15).filter(
        lambda name: name != "lo"
    ),
    st.tuples(ordinary, ordinary),
    max_size=4,
)
kib = st.integers(0, 2**40).map(lambda k: k * 1024)
NEEDED_MEMINFO = ("MemTotal", "MemAvailable", "Active(file)", "Inactive(file)", "SwapTotal", "SwapFree")
pressure_totals = st.builds(
    Pressure, st.builds(PressureLine, system.shares, system.shares, system.shares, ordinary),
    st.none() | st.builds(PressureLine, system.shares, system.shares, system.shares, ordinary),
)


@st.composite
def disk_readings(draw: st.DrawFn) -> DiskReading:
    blocks = draw(st.integers(0, 2**40))
    free = draw(st.integers(0, blocks + 8))  # past `blocks` only in a broken statvfs: `used` is then 0, not negative
    available = draw(st.integers(0, free))
    path = "/" + draw(st.text(alphabet=string.ascii_lowercase + "/._-", max_size=20))
    return DiskReading(path, draw(st.integers(0, 3)), blocks, free, available, draw(st.sampled_from([512, 4096])))


moments = st.builds(
    Moment,
    wall=st.floats(0.0, 2.0**33),
    host=st.text(alphabet=string.printable, max_size=20),
    disks=st.lists(disk_readings(), max_size=3).map(tuple),
    whole_disks=st.none() | st.frozensets(st.sampled_from(["sda", "vda", "nvme0n1", "xvdf"])),
    rss=st.integers(0, 2**40),
    self_cpu=st.floats(0.0, 1e6),
)


@st.composite
def kernel_pairs(draw: st.DrawFn) -> tuple[Texts, Texts]:
    """Two readings of a host as its kernel prints them, one after the other: the same cores and disks."""
    numbers = draw(core_numbers)
    names = draw(device_names)
    field_count = draw(st.sampled_from([14, 18, 20]))
    with_psi = draw(st.booleans())
    pair: list[Texts] = []
    for _ in range(2):
        stat = ProcStat(draw(times), tuple((n, draw(times)) for n in numbers))
        disks = DiskStats(tuple(DiskIo(name, draw(ordinary), draw(ordinary)) for name in names))
        others = draw(st.dictionaries(st.sampled_from(["MemFree", "Buffers", "Cached", "Shmem", "Slab"]), kib))
        meminfo = MemInfo({**{key: draw(kib) for key in NEEDED_MEMINFO}, **others})
        texts: Texts = {
            STAT: render_proc_stat(stat, draw(st.tuples(ordinary, ordinary))).encode(),
            DISKSTATS: render_diskstats(disks, field_count).encode(),
            NET_DEV: render_net_dev(NetDev(draw(interfaces))).encode(),
            MEMINFO: render_meminfo(meminfo, no_space=draw(st.booleans())).encode(),
        }
        for path in PRESSURE_FILES:
            texts[path] = (
                render_pressure(draw(pressure_totals)).encode() if with_psi else OSError(errno.ENOENT, "no PSI")
            )
        pair.append(texts)
    return pair[0], pair[1]


@given(kernel_pairs(), moments, st.integers(0, 2**62), elapsed)
def test_a_kernel_shaped_line_is_made_quickly_with_the_general_paths_bytes(
    pair: tuple[Texts, Texts], moment: Moment, prev_ns: int, elapsed_ns: int
) -> None:
    prev, cur = pair
    made = quick_line(prev, cur, prev_ns, prev_ns + elapsed_ns, moment)
    assert made is not None
    assert made == general_line(prev, cur, prev_ns, prev_ns + elapsed_ns, moment)


# --- anything: files that fail, change shape or hold nonsense; cores, devices and pressure files that come and go ---
def errors() -> st.SearchStrategy[OSError]:
    return st.sampled_from([errno.ENOENT, errno.EOPNOTSUPP, errno.EACCES, errno.EIO]).map(
        lambda code: OSError(code, os.strerror(code))
    )


EXTRA_LINES = [
    b" ", b"\n", b"cpu0 1 2 3 4\n", b"    lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", b"MemTotal:  5 kB\n",
    b" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n",
]


def mangled(texts: Texts, draw: st.DrawFn) -> Texts:
    """`texts` with some files swapped for a failure or other text, or their own text cut or added to."""
    changed = dict(texts)
    for path in draw(st.lists(st.sampled_from(sorted(texts)), max_size=3, unique=True)):
        original = texts[path]
        raw = original if isinstance(original, bytes) else b""
        how = draw(st.sampled_from(["error", "hostile", "cut", "added"]))
        if how == "error":
            changed[path] = draw(errors())
        elif how == "hostile":
            changed[path] = draw(system.hostile_texts).encode()
        elif how == "cut":
            changed[path] = raw[: draw(st.integers(0, len(raw)))]
        else:
            changed[path] = raw + draw(st.sampled_from(EXTRA_LINES))
    return changed


@st.composite
def any_pairs(draw: st.DrawFn) -> tuple[Texts, Texts]:
    first, second = draw(kernel_pairs()), draw(kernel_pairs())
    # The second reading from another host's pair: other cores, devices, interfaces and pressure files.
    prev = first[0]
    cur = draw(st.sampled_from([first[1], second[1]]))
    return mangled(prev, draw), mangled(cur, draw)


@given(any_pairs(), moments, st.integers(0, 2**62), st.integers(-(10**9), 10**12))
def test_wherever_the_quick_path_makes_a_line_it_is_the_general_paths(
    pair: tuple[Texts, Texts], moment: Moment, prev_ns: int, elapsed_ns: int
) -> None:
    prev, cur = pair
    made = quick_line(prev, cur, prev_ns, prev_ns + elapsed_ns, moment)
    if made is not None:
        assert made == general_line(prev, cur, prev_ns, prev_ns + elapsed_ns, moment)


@given(kernel_pairs(), moments, st.integers(0, 2**62), st.sampled_from(
    [2**64 - 1, 10**19, 2**63]
))
def test_a_value_beyond_a_plain_number_is_left_to_the_general_path(
    pair: tuple[Texts, Texts], moment: Moment, prev_ns: int, huge: int
) -> None:
    """A counter of 20 digits, or a value the line cannot hold as a 64-bit integer: the general encoder writes it."""
    prev, cur = pair
    raw = cur[MEMINFO]
    assert isinstance(raw, bytes)
    cur = {**cur, MEMINFO: raw.replace(b"MemTotal:", f"MemTotal: {huge} kB\nOld:".encode(), 1)}
    assert quick_line(prev, cur, prev_ns, prev_ns + 10**9, moment) is None
    assert general_line(prev, cur, prev_ns, prev_ns + 10**9, moment)
