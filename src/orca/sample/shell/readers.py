"""The machine's files, read into the parsers' snapshots. Every reader takes its root (SPEC 7) and returns None when
its source cannot be read or parsed (SPEC 3.10): one misbehaving source only nulls its own section."""

from __future__ import annotations

import os
from collections.abc import Sequence

from orca.sample.compute.snapshot import DiskReading
from orca.sample.parse import block, diskstats, meminfo, net_dev, proc_stat
from orca.sample.parse.diskstats import DiskStats
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.proc_stat import ProcStat

_CHUNK = 1 << 16
_LIMIT = 16 << 20
"""No kernel file read here comes near this; a bound so a fixture or a strange mount cannot exhaust memory."""


def read_text(path: str) -> str | None:
    """The whole text of a small file, with plain `os.open`/`os.read` (these run every line); None if unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    chunks: list[bytes] = []
    total = 0
    try:
        # /proc files report size 0: read until the end rather than trusting fstat.
        while total <= _LIMIT:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    if total > _LIMIT:
        return None
    return b"".join(chunks).decode("utf-8", errors="replace")


def read_proc_stat(proc: str = "/proc") -> ProcStat | None:
    text = read_text(os.path.join(proc, "stat"))
    return None if text is None else proc_stat.parse(text).value_or(None)


def read_meminfo(proc: str = "/proc") -> MemInfo | None:
    text = read_text(os.path.join(proc, "meminfo"))
    return None if text is None else meminfo.parse(text).value_or(None)


def read_diskstats(proc: str = "/proc") -> DiskStats | None:
    text = read_text(os.path.join(proc, "diskstats"))
    return None if text is None else diskstats.parse(text).value_or(None)


def read_net_dev(proc: str = "/proc") -> NetDev | None:
    text = read_text(os.path.join(proc, "net", "dev"))
    return None if text is None else net_dev.parse(text).value_or(None)


def read_block_links(sys: str = "/sys") -> dict[str, str] | None:
    """Name -> link target of each entry of `<sys>/block`; None when the directory cannot be listed."""
    directory = os.path.join(sys, "block")
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    links: dict[str, str] = {}
    for name in names:
        try:
            links[name] = os.readlink(os.path.join(directory, name))
        except OSError:
            continue  # vanished, or not a link: it names no device
    return links


def read_whole_disks(sys: str = "/sys") -> frozenset[str] | None:
    """The whole physical disks of `<sys>/block` (SPEC 3.6); None without a list (the skip list applies then).

    A list with no physical disk at all (a container's partial /sys) is no list either: counting nothing would
    hide all disk traffic, while the skip list still leaves out loop, ram, zram, dm and md devices."""
    links = read_block_links(sys)
    disks = None if links is None else block.whole_disks(links)
    return disks or None


def existing_ancestor(path: str) -> str:
    """`path` itself when it exists, else its nearest existing ancestor (SPEC 3.5: a directory not made yet)."""
    current = os.path.abspath(path)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def read_disk(path: str) -> DiskReading | None:
    """`stat` and `statvfs` of `path` (or of its nearest existing ancestor), reported under `path`."""
    measured = existing_ancestor(path)
    try:
        st_dev = os.stat(measured).st_dev
        vfs = os.statvfs(measured)
    except OSError:
        return None
    return DiskReading(path, st_dev, vfs.f_blocks, vfs.f_bfree, vfs.f_bavail, vfs.f_frsize)


def read_disks(dirs: Sequence[str]) -> tuple[DiskReading, ...] | None:
    """One reading per directory that can be measured; None when there were directories and none could be."""
    readings = tuple(reading for path in dirs if (reading := read_disk(path)) is not None)
    return None if dirs and not readings else readings
