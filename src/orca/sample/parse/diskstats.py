"""/proc/diskstats (Documentation/admin-guide/iostats.rst): 14, 18 or 20 fields, or 7 for old partition lines."""

from __future__ import annotations

import functools

import msgspec
from returns.result import Failure, Result, Success

from orca.sample.parse.errors import ParseError
from orca.sample.parse.kernel_lines import parsed_lines
from orca.sample.parse.numbers import U64_DIGITS, U64_MAX

SECTOR_BYTES = 512
"""/proc/diskstats counts 512-byte sectors whatever the device's own sector size (iostats.rst)."""
# Documentation/ABI/testing/procfs-diskstats: 14 fields, 18 from 4.18 (discards), 20 from 5.5 (flushes).
_FULL_LINE_FIELDS = frozenset({14, 18, 20})
# iostats.rst, 2.6.25 and older: a partition's line is major minor name reads sectors-read writes sectors-written.
_OLD_PARTITION_FIELDS = 7


class DiskIo(msgspec.Struct, frozen=True, gc=False):
    name: str
    sectors_read: int
    """Field 3 of the counters (512-byte sectors, whatever the device's own sector size)."""
    sectors_written: int
    """Field 7 of the counters (field 4 of a 7-field partition line)."""


class DiskStats(msgspec.Struct, frozen=True, gc=False):
    devices: tuple[DiskIo, ...]
    """Every parsable line, in file order."""


# An idle device (a loop device, zram, a disk nothing touches) prints the same line line after line: each line's
# record is made once and handed out again, as a frozen record can be, instead of the line being parsed anew.
@functools.lru_cache(maxsize=256)
def device_line(line: str) -> DiskIo | None:
    """One line's device; None for a line of another length or with anything but a decimal outside the name."""
    fields = line.split()
    count = len(fields)
    if count in _FULL_LINE_FIELDS:
        read_at, written_at = 5, 9
    elif count == _OLD_PARTITION_FIELDS:
        read_at, written_at = 4, 6
    else:
        return None
    name = fields[2]
    # Every field but the name is an unsigned decimal in every format: a line with anything else is not trusted.
    fields[2] = "0"
    numbers = "".join(fields)
    if not (numbers.isdigit() and numbers.isascii()):
        return None
    sectors_read, sectors_written = fields[read_at], fields[written_at]
    if len(sectors_read) > U64_DIGITS or len(sectors_written) > U64_DIGITS:
        return None  # past any u64, and `int` would refuse a long enough one
    read, written = int(sectors_read), int(sectors_written)
    if read > U64_MAX or written > U64_MAX:
        return None
    return DiskIo(name=name, sectors_read=read, sectors_written=written)


def parse(text: str) -> Result[DiskStats, ParseError]:
    """Every line of 14, 18 or 20 fields or an old 7-field partition line, all but the name unsigned decimals.

    Any other line (a cut-off line, a `-5`, garbage) is skipped. No parsable line at all is a failure.

    >>> parse("   8       0 sda 1 0 8 0 2 0 16 0 0 0 0 0 0 0 0\\n   8       1 sda1 1 8 2 16\\n").unwrap().devices
    (DiskIo(name='sda', sectors_read=8, sectors_written=16), DiskIo(name='sda1', sectors_read=8, sectors_written=16))
    """
    devices = tuple(filter(None, parsed_lines(text, device_line)))
    if not devices:
        return Failure(ParseError("/proc/diskstats", "no device line"))
    return Success(DiskStats(devices=devices))
