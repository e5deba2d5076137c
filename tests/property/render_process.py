"""Renderers for round trips: a record drawn from the kernel's ranges, written out as the kernel writes it.

Formats: fs/proc/array.c (`do_task_stat`, `proc_pid_statm`) and proc(5) for /proc/<pid>/{stat,statm,cmdline};
Documentation/admin-guide/cgroup-v2.rst for the cgroup v2 files; Docker's config.v2.json for a container's name.
Each strategy draws from the ranges those documents give, so a round trip covers what a real machine can show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import orjson
from hypothesis import strategies as st

from orca.sample.parse.pid_stat import PidStat
from orca.sample.parse.statm import Statm

PID_MAX = 4_194_304  # PID_MAX_LIMIT on 64-bit kernels (proc(5), /proc/sys/kernel/pid_max)
U64 = 2**64 - 1
S64 = 2**63 - 1
TASK_COMM_LEN = 16  # comm is at most 15 bytes and its NUL
STATES = "RSDTtXZPI"  # fs/proc/array.c task_state_array

pids = st.integers(1, PID_MAX)
parents = st.integers(0, PID_MAX)  # 0 for init and kthreadd
u64s = st.integers(0, U64)
child_ticks = st.integers(0, S64)  # cutime/cstime: printed signed (seq_put_decimal_ll), from unsigned counters
comm_bytes = st.binary(max_size=TASK_COMM_LEN - 1).map(lambda raw: raw.replace(b"\0", b"\x01"))
# Bytes a command cannot do without in these tests: the ones that have broken other parsers.
tricky_comm_bytes = st.lists(st.sampled_from([b"(", b")", b" ", b"\n", b") S 1 ", b"(", b"9"]), max_size=5).map(
    lambda parts: b"".join(parts)[: TASK_COMM_LEN - 1]
)


@dataclass(frozen=True, slots=True)
class StatLine:
    """A whole /proc/<pid>/stat line of 52 fields, as 6.18 writes it: those the parser reads, and the others."""

    comm: bytes
    """The raw 15 bytes at most; the parser sees them decoded with replacement."""
    stat: PidStat
    """What the parser should give (comm decoded with replacement)."""
    priority: int
    nice: int
    others: tuple[int, ...]
    """Fields 5-13, 20, 21, 23 and 25-52, in order: not read by the parser."""


_OTHERS = 9 + 2 + 1 + 28  # fields 5-13, 20-21, 23, 25-52


@st.composite
def stat_lines(draw: st.DrawFn) -> StatLine:
    comm = draw(st.one_of(comm_bytes, tricky_comm_bytes))
    stat = PidStat(
        pid=draw(pids),
        comm=comm.decode("utf-8", "replace"),
        state=draw(st.sampled_from(STATES)),
        ppid=draw(parents),
        utime=draw(u64s),
        stime=draw(u64s),
        cutime=draw(child_ticks),
        cstime=draw(child_ticks),
        starttime=draw(u64s),
        rss_pages=draw(u64s),
    )
    # priority: 0..39 for normal tasks, -2..-100 for real-time ones; nice -20..19.
    priority = draw(st.one_of(st.integers(0, 39), st.integers(-100, -2)))
    nice = draw(st.integers(-20, 19))
    # pgrp, session, tty_nr, tpgid (-1 without a terminal), flags, 4 fault counters; threads, itrealvalue; vsize;
    # then 28 more (addresses, signals, wchan, exit_signal, processor, policies, ... exit_code).
    others = tuple(draw(st.lists(st.one_of(u64s, st.integers(-1, 0)), min_size=_OTHERS, max_size=_OTHERS)))
    return StatLine(comm=comm, stat=stat, priority=priority, nice=nice, others=others)


def render_stat(line: StatLine) -> bytes:
    """The line as do_task_stat writes it: `pid (comm) state` then single-space-separated numbers and a newline."""
    s, o = line.stat, line.others
    numbers = [
        s.ppid, *o[0:9],  # fields 4; 5-13
        s.utime, s.stime, s.cutime, s.cstime,  # 14-17
        line.priority, line.nice, o[9], o[10],  # 18-21
        s.starttime, o[11], s.rss_pages,  # 22-24
        *o[12:],  # 25-52
    ]  # fmt: skip
    tail = " ".join(str(number) for number in numbers)
    return b"%d (%s) %s %s\n" % (s.pid, line.comm, s.state.encode(), tail.encode())


def rss_field_offset(rendered: bytes) -> int:
    """Where field 24 (rss) starts in a rendered line: after the last `)` and 21 more fields."""
    offset = rendered.rindex(b")") + 1
    for _ in range(22):  # past the space before each of fields 3..24: then offset is where field 24 starts
        offset = rendered.index(b" ", offset) + 1
    return offset


# statm ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatmLine:
    statm: Statm
    text_pages: int
    data_pages: int


statm_lines = st.builds(
    StatmLine,
    statm=st.builds(Statm, size_pages=u64s, resident_pages=u64s, shared_pages=u64s),
    text_pages=u64s,
    data_pages=u64s,
)


def render_statm(line: StatmLine) -> bytes:
    """proc_pid_statm: size resident shared text lib data dt; lib and dt are always 0 since 2.6."""
    s = line.statm
    return b"%d %d %d %d 0 %d 0\n" % (s.size_pages, s.resident_pages, s.shared_pages, line.text_pages, line.data_pages)


# cmdline -------------------------------------------------------------------------------------------------------

arguments = st.lists(st.binary(max_size=40).map(lambda raw: raw.replace(b"\0", b"")), min_size=1, max_size=5)


def render_cmdline(argv: list[bytes]) -> bytes:
    """Each argument followed by a NUL, as execve lays them out."""
    return b"".join(argument + b"\0" for argument in argv)


# cgroup v2 -----------------------------------------------------------------------------------------------------

flat_keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=30)
flat_files = st.dictionaries(flat_keys, u64s, min_size=1, max_size=60)


def render_flat_keyed(values: Mapping[str, int]) -> str:
    """cgroup-v2.rst "flat keyed": `KEY VALUE` per line."""
    return "".join(f"{key} {value}\n" for key, value in values.items())


def render_memory_current(value: int) -> str:
    return f"{value}\n"


container_ids = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)

# A dev_t: 12 bits of major, 20 of minor (include/linux/kdev_t.h), printed `%u:%u`.
device_numbers = st.builds(lambda major, minor: f"{major}:{minor}", st.integers(0, 4095), st.integers(0, 2**20 - 1))
# Keys io.stat may print beside rbytes and wbytes: the base counters, io.latency's and iocost's (cgroup-v2.rst).
IO_STAT_OTHER_KEYS = ("rios", "wios", "dbytes", "dios", "depth", "avg_lat", "win", "cost.vrate", "cost.usage")


@dataclass(frozen=True, slots=True)
class IoStatLine:
    device: str
    read_bytes: int
    written_bytes: int
    others: tuple[tuple[str, int], ...]
    """Other `key=value` pairs, placed among rbytes and wbytes at `position`."""
    position: int


io_stat_lines = st.builds(
    IoStatLine,
    device=device_numbers,
    read_bytes=u64s,
    written_bytes=u64s,
    others=st.lists(st.tuples(st.sampled_from(IO_STAT_OTHER_KEYS), u64s), max_size=6, unique_by=lambda kv: kv[0])
    .map(tuple),
    position=st.integers(0, 8),
)
io_stat_files = st.lists(io_stat_lines, max_size=12, unique_by=lambda line: line.device)


def render_io_stat(lines: list[IoStatLine]) -> str:
    """cgroup-v2.rst "nested keyed": `MAJ:MIN key=value ...` per device; blkcg prints rbytes, wbytes first, but a
    reader should not rely on the order."""
    rendered = []
    for line in lines:
        pairs = [f"{key}={value}" for key, value in line.others]
        for pair in (f"wbytes={line.written_bytes}", f"rbytes={line.read_bytes}"):
            pairs.insert(min(line.position, len(pairs)), pair)
        rendered.append(f"{line.device} {' '.join(pairs)}\n")
    return "".join(rendered)


def render_config(name: str, secret: str) -> str:
    """A config.v2.json as Docker writes it: `Name` with its leading `/`, the environment beside it."""
    document = {
        "ID": "0" * 64,
        "Config": {"Env": [f"SECRET={secret}"], "Image": "postgres:16"},
        "Name": "/" + name,
        "State": {"Running": True, "Pid": 1},
    }
    return orjson.dumps(document).decode()
