"""The machine's files that are not kernel texts read every line (those are `early.py`'s): the directories'
`statvfs` and which of /sys/block's entries are whole disks. Every path comes from the roots given
(docs/behaviour.md §7).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from returns.result import Failure, Result, Success

from orca.sample.compute.snapshot import DiskReading
from orca.sample.parse import block
from orca.sample.parse.errors import ParseError
from orca.sample.shared.bounded import read_or_none
from orca.sample.shell.machine.fs import FS

KERNEL_FILES_KEPT_AT_MOST = 32
"""The kernel files read every line are kept open, at most this many: the host's own, a few."""


def read_block_links(fs: FS) -> dict[str, str] | None:
    """Name -> link target of each entry of `<sys>/block`; None when the directory cannot be listed."""
    directory = fs.sys_path("block")
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


def read_whole_disks(fs: FS) -> frozenset[str] | None:
    """The whole physical disks of `<sys>/block` (docs/behaviour.md §3.6); None without a list (the skip list
    applies then).

    A list with no physical disk at all (a container's partial /sys) is no list either: counting nothing would
    hide all disk traffic, while the skip list still leaves out loop, ram, zram, dm and md devices."""
    links = read_block_links(fs)
    disks = None if links is None else block.whole_disks(links)
    return disks or None


def read_device_numbers(fs: FS, disks: frozenset[str]) -> frozenset[str] | None:
    """The `MAJ:MIN` of each of `disks` (`<sys>/block/<disk>/dev`); None when none can be read."""
    numbers: set[str] = set()
    for disk in disks:
        data = read_or_none(fs.sys_path("block", disk, "dev"))
        number = None if data is None else block.device_number(data.decode("ascii", errors="replace"))
        if number is not None:
            numbers.add(number)
    return frozenset(numbers) or None


def existing_ancestor(path: str) -> str:
    """`path` itself when it exists, else its nearest existing ancestor (docs/behaviour.md §3.5: a directory not
    made yet)."""
    current = os.path.abspath(path)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def read_disks(dirs: Sequence[str]) -> Result[tuple[DiskReading, ...], ParseError]:
    """`stat` and `statvfs` of each directory (or of its nearest existing ancestor), reported under its own path;
    one that cannot be measured is left out, and a failure is when there were directories and none could be."""
    readings: list[DiskReading] = []
    failure: ParseError | None = None
    for path in dirs:
        try:
            try:
                st_dev, measured = os.stat(path).st_dev, path  # it exists: the usual case, one call fewer
            except OSError:
                measured = existing_ancestor(path)
                st_dev = os.stat(measured).st_dev
            vfs = os.statvfs(measured)
        except (OSError, ValueError) as error:  # ValueError: a NUL in the path
            failure = failure or ParseError.of(path, error)
            continue
        readings.append(DiskReading(path, st_dev, vfs.f_blocks, vfs.f_bfree, vfs.f_bavail, vfs.f_frsize))
    if failure is not None and not readings:
        return Failure(failure)
    return Success(tuple(readings))
