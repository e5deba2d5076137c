"""Finding a line's start by reading a file backwards, a block at a time: the newest lines of a long file, the
whole lines of a staging file being appended to, and the cuts of a file read in parts."""

from __future__ import annotations

from collections.abc import Callable

ReadAt = Callable[[int, int], bytes]
"""`read_at(offset, length)`: that many bytes from that offset (fewer only at the end)."""


def line_start_before(read_at: ReadAt, offset: int, block: int = 64 * 1024, give_up_after: int | None = None) -> int:
    r"""Where the line holding the byte at `offset` starts: just after the last newline before `offset`, or 0 when
    there is none, or none within `give_up_after` bytes before `offset` (a line that long is not looked through).

    >>> text = b"ab\ncd\nef"
    >>> [line_start_before(lambda at, length: text[at:at + length], offset, 2) for offset in range(len(text) + 1)]
    [0, 0, 0, 3, 3, 3, 6, 6, 6]
    >>> line_start_before(lambda at, length: text[at:at + length], 8, 1, give_up_after=1)
    0
    """
    end = offset
    while end > 0:
        begin = max(0, end - block)
        found = read_at(begin, end - begin).rfind(b"\n")
        if found >= 0:
            return begin + found + 1
        if give_up_after is not None and offset - begin > give_up_after:
            return 0
        end = begin
    return 0
