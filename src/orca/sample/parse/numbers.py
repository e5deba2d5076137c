"""The one way every parser reads a kernel counter, and the units the kernel counts in."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

U64_MAX = (1 << 64) - 1
"""The largest counter the kernel prints (an unsigned 64-bit value)."""
U64_DIGITS = 20
"""The most digits a u64 has: a longer run of digits is refused before `int`, which raises on over 4300."""

USEC_PER_SECOND = 1_000_000
"""Pressure totals and cgroup CPU usage are printed in microseconds."""


def u64(field: str | bytes) -> int | None:
    """An unsigned 64-bit decimal as the kernel prints it; None for anything else (`-5`, `+5`, `1_0`, `٣`, `1e3`).

    Text or the raw bytes of a /proc file (the per-process hot path reads bytes): ASCII digits only, either way.

    >>> u64("18446744073709551615"), u64("18446744073709551616"), u64("-5"), u64("٣"), u64(b"42"), u64(b"")
    (18446744073709551615, None, None, None, 42, None)
    """
    if len(field) > U64_DIGITS or not field.isdigit() or not field.isascii():
        return None
    value = int(field)
    return value if value <= U64_MAX else None


def all_counters(fields: Sequence[str]) -> bool:
    """Whether `u64` takes every one of `fields`: checked in one pass over their joined text, the general `u64` left
    to a rare field of 20 digits or more.

    >>> all_counters(["1", "22", "333"]), all_counters(["1", "-2"]), all_counters(["1", ""])
    (True, False, False)
    >>> all_counters(["18446744073709551615"]), all_counters(["18446744073709551616"]), all_counters([])
    (True, False, True)
    """
    if not fields:
        return True
    joined = "".join(fields)
    if not (joined.isdigit() and joined.isascii()) or "" in fields:
        return False
    return max(map(len, fields)) < U64_DIGITS or all(u64(field) is not None for field in fields)


def all_u64(fields: Iterable[str | bytes]) -> bool:
    """Whether `u64` takes every one of `fields`, without converting those shorter than 20 digits (they are all
    below the limit): the per-process hot path checks seven statm fields and needs the value of one.

    >>> all_u64([b"730", b"448", b"0"]), all_u64([b"1", b"-2"]), all_u64([b"18446744073709551616"]), all_u64([])
    (True, False, False, True)
    """
    for field in fields:
        if len(field) < U64_DIGITS:
            if not (field.isdigit() and field.isascii()):
                return False
        elif u64(field) is None:
            return False
    return True
