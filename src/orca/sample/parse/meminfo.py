"""/proc/meminfo (proc(5))."""

from __future__ import annotations

from collections.abc import Collection, Container, Mapping

import msgspec
from returns.result import Failure, Result, Success

from orca.sample.parse.errors import ParseError
from orca.sample.parse.numbers import U64_DIGITS, U64_MAX


class MemInfo(msgspec.Struct, frozen=True, gc=False):
    bytes_by_key: Mapping[str, int]
    """Key → bytes: `kB` values × 1024, values without a unit as they are."""


class _EveryKey:
    def __contains__(self, key: object) -> bool:
        return True


_EVERY_KEY = _EveryKey()
"""`keys` not given: every key is wanted."""


def parse(text: str, keys: Collection[str] | None = None) -> Result[MemInfo, ParseError]:
    """Every `Key: value [kB]` line, in bytes; only those of `keys` when given (a line needs 6 of the ~60).

    Split on the first `:`, not on spaces, because some kernels print `Key:12345 kB`. A line that does not parse
    (no key, a key with spaces, a value that is not an unsigned decimal such as `-5`, a unit other than `kB`, extra
    words) is skipped; a key seen twice keeps its last value. Nothing parsable at all is a failure.

    >>> parse("MemTotal:       16 kB\\nHugePages_Total:       3\\nSwapTotal:1 kB\\n").unwrap().bytes_by_key
    {'MemTotal': 16384, 'HugePages_Total': 3, 'SwapTotal': 1024}
    >>> parse("MemTotal:       16 kB\\nHugePages_Total:       3\\n", keys={"MemTotal"}).unwrap().bytes_by_key
    {'MemTotal': 16384}
    """
    wanted: Container[str] = _EVERY_KEY if keys is None else keys
    bytes_by_key: dict[str, int] = {}
    if keys is not None:
        # No line after the last place a wanted key appears at all can be wanted, and the kernel prints the few keys
        # `mem` needs in its first lines: most lines are never split.
        end = text.find("\n", max(map(text.rfind, keys), default=-1))
        text = text if end < 0 else text[:end]
    for line in text.splitlines():
        key, colon, rest = line.partition(":")
        # Most lines are not wanted: the key as the kernel prints it (no white space) is enough to pass them over.
        if key not in wanted and key.strip() not in wanted:
            continue
        key = key.strip()
        if not colon or not key or len(key.split()) != 1:
            continue
        words = rest.split()
        count = len(words)
        if count == 2 and words[1] == "kB":
            unit = 1024
        elif count == 1:
            unit = 1
        else:
            continue  # no value, extra words, or a unit other than kB
        digits = words[0]
        # u64's checks, written out: this runs for each wanted key every line.
        if not (digits.isdigit() and digits.isascii() and len(digits) <= U64_DIGITS):
            continue
        value = int(digits)
        if value <= U64_MAX:
            bytes_by_key[key] = value * unit
    if not bytes_by_key:
        return Failure(ParseError("/proc/meminfo", "no `Key: value` line"))
    return Success(MemInfo(bytes_by_key=bytes_by_key))


def parse_meminfo(text: str) -> dict[str, int]:
    """The documented API's adapter (docs/behaviour.md §6): key → bytes; {} when nothing parses.

    >>> parse_meminfo("MemFree:123 kB\\nbroken line\\n")
    {'MemFree': 125952}
    """
    return dict(parse(text).map(lambda info: info.bytes_by_key).value_or({}))
