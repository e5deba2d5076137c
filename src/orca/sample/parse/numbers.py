"""The one way every parser reads a kernel counter."""

from __future__ import annotations

_U64_LIMIT = 1 << 64
# A u64 has at most 20 digits; int() raises on over 4300, so longer runs are refused before converting.
_MAX_DIGITS = 20


def u64(field: str) -> int | None:
    """An unsigned 64-bit decimal as the kernel prints it; None for anything else (`-5`, `+5`, `1_0`, `٣`, `1e3`).

    >>> u64("18446744073709551615"), u64("18446744073709551616"), u64("-5"), u64("٣")
    (18446744073709551615, None, None, None)
    """
    if not (field.isascii() and field.isdigit()) or len(field) > _MAX_DIGITS:
        return None
    value = int(field)
    return value if value < _U64_LIMIT else None
