"""/proc/diskstats (Documentation/admin-guide/iostats.rst): 14, 18 or 20 fields, or 7 for old partition lines."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from returns.result import Result

from orca.sample.parse.errors import ParseError


@dataclass(frozen=True, slots=True)
class DiskIo:
    name: str
    sectors_read: int
    """Field 3 of the counters (512-byte sectors, whatever the device's own sector size)."""
    sectors_written: int
    """Field 7 of the counters (field 4 of a 7-field partition line)."""


@dataclass(frozen=True, slots=True)
class DiskStats:
    devices: tuple[DiskIo, ...]
    """Every parsable line, in file order."""


def parse(text: str) -> Result[DiskStats, ParseError]:
    raise NotImplementedError  # issue 2: being written


def parse_diskstats(text: str, disks: Collection[str]) -> tuple[int, int]:
    """The seed's adapter (SPEC 3.6): bytes read and written over `disks`, or all but skipped ones if empty."""
    raise NotImplementedError  # issue 2: being written
