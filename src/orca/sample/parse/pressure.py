"""/proc/pressure/{cpu,memory,io} (Documentation/accounting/psi.rst)."""

from __future__ import annotations

import errno
import functools
import re

import msgspec
from returns.result import Failure, Result, Success

from orca.sample.parse.errors import ParseError
from orca.sample.parse.numbers import U64_MAX, u64

NO_PSI_ERRNOS = frozenset({errno.ENOENT, errno.EOPNOTSUPP})
"""How a kernel without pressure stall information answers a read of a pressure file: no file (built without it),
or a read that fails (`psi=0` at boot)."""
_KEYS = ("avg10", "avg60", "avg300", "total")
# psi.c's own format, `%s avg10=%lu.%02lu avg60=%lu.%02lu avg300=%lu.%02lu total=%llu\n`: read by one match, much
# cheaper than the word-by-word parse, which stays for every other text.
_KERNEL_LINE = r"avg10=(\d{1,20}\.\d\d) avg60=(\d{1,20}\.\d\d) avg300=(\d{1,20}\.\d\d) total=(\d{1,20})\n"
_KERNEL_TEXT = re.compile(f"some {_KERNEL_LINE}(?:full {_KERNEL_LINE})?", re.ASCII)
# `some ` and `full ` each with their longest line of that format: 123 characters.
_KERNEL_TEXT_AT_MOST = 2 * (5 + 6 + 23 + 7 + 23 + 8 + 23 + 7 + 20 + 1)


class PressureLine(msgspec.Struct, frozen=True, gc=False):
    avg10: float
    avg60: float
    avg300: float
    total_us: int
    """Total stall time so far, in microseconds."""


class Pressure(msgspec.Struct, frozen=True, gc=False):
    some: PressureLine
    full: PressureLine | None
    """Missing from `cpu` on older kernels."""


def _average(field: str) -> float | None:
    """A share as psi.c prints it (`%lu.%02lu`): digits, optionally `.` and digits; not `nan`, `1e3`, `-1.0`."""
    whole, dot, fraction = field.partition(".")
    if u64(whole) is None or (dot and u64(fraction) is None):
        return None
    return float(field)


def _line(words: list[str]) -> PressureLine | None:
    """`avg10=.. avg60=.. avg300=.. total=..` after the `some`/`full` word; None unless all four parse."""
    values = dict(word.partition("=")[::2] for word in words)
    avg10, avg60, avg300 = (_average(values.get(key, "")) for key in _KEYS[:3])
    total_us = u64(values.get("total", ""))
    if avg10 is None or avg60 is None or avg300 is None or total_us is None:
        return None
    return PressureLine(avg10=avg10, avg60=avg60, avg300=avg300, total_us=total_us)


def parse(text: str) -> Result[Pressure, ParseError]:
    """The `some` line (required) and the `full` line (None when missing or not parsable).

    A line missing one of the four values, or with a value that is not unsigned (`total=-5`), does not parse;
    the first parsable line of each kind counts.

    >>> parse("some avg10=1.50 avg60=0.25 avg300=0.00 total=1234\\n").unwrap()
    Pressure(some=PressureLine(avg10=1.5, avg60=0.25, avg300=0.0, total_us=1234), full=None)
    """
    pressure = as_printed(text)
    if pressure is not None:
        return Success(pressure)
    return parse_words(text)


def as_printed(text: str) -> Pressure | None:
    """The text exactly as psi.c prints it, read by one match; None for anything else, including a total over
    2^64 - 1 (then `parse` reads it word by word). The shell's usual case, with no `Result` made for it.

    >>> as_printed("some avg10=1.50 avg60=0.25 avg300=0.00 total=1234\\n").some.total_us
    1234
    """
    # No text longer than psi.c's two lines can match: it is not looked up, so the cache stays small.
    return printed_exactly(text) if len(text) <= _KERNEL_TEXT_AT_MOST else None


@functools.lru_cache(maxsize=16)  # an idle resource prints the same text line after line: read once
def printed_exactly(text: str) -> Pressure | None:
    """`as_printed` for a text no longer than psi.c prints, through a small cache: an idle resource prints the same
    text line after line."""
    match = _KERNEL_TEXT.fullmatch(text)
    if match is None:
        return None
    groups: tuple[str | None, ...] = match.groups()  # a line's four groups match together or not at all
    some10, some60, some300, some_total, full10, full60, full300, full_total = groups
    if some_total is None or int(some_total) > U64_MAX:
        return None
    some = PressureLine(float(some10 or 0), float(some60 or 0), float(some300 or 0), int(some_total))
    if full_total is None:
        return Pressure(some=some, full=None)
    if int(full_total) > U64_MAX:
        return None
    full = PressureLine(float(full10 or 0), float(full60 or 0), float(full300 or 0), int(full_total))
    return Pressure(some=some, full=full)


def parse_words(text: str) -> Result[Pressure, ParseError]:
    """`parse` word by word, for any text: what `as_printed` must agree with where it reads a text."""
    lines: dict[str, PressureLine] = {}
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] not in ("some", "full") or words[0] in lines:
            continue
        parsed = _line(words[1:])
        if parsed is not None:
            lines[words[0]] = parsed
    some = lines.get("some")
    if some is None:
        return Failure(ParseError("/proc/pressure", "no `some` line"))
    return Success(Pressure(some=some, full=lines.get("full")))
