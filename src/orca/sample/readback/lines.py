"""A stream's complete lines, from its bytes a chunk at a time, in memory that stays bounded whatever the stream
holds: a line longer than any sample's is passed over (and counted) rather than kept, so a file without a newline,
a device that never ends or a file system's hole cost no more memory than a line of samples.

A chunk is bytes read, or an `int`: that many zero bytes the stream holds but that were not read (a sparse file's
hole, found by `sources.py` with `SEEK_DATA`). Zeros hold no newline, so a hole only makes the line it is in longer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from io import BytesIO

LONGEST_LINE_BYTES = 16 * 2**20
"""A line longer than this is not a sample (hundreds of containers make a line of tens of kilobytes)."""


@dataclass(frozen=True, slots=True)
class Batch:
    """What one chunk completed."""

    lines: list[bytes]
    """The complete lines, each with its newline, in order."""
    overlong: int = 0
    """Lines longer than the longest a sample can be that ended in this chunk, passed over (not in `lines`)."""
    given_up: bool = False
    """The stream went on for more than the bytes `line_batches` was given without a newline: it is read no more."""


def line_batches(
    chunks: Iterable[bytes | int], give_up_after: int | None = None, longest: int = LONGEST_LINE_BYTES
) -> Iterator[Batch]:
    """The complete lines of a stream, a batch per chunk that ends one (or an over-long one); what follows the last
    newline (a line being written) is left out; a line longer than `longest` is counted, not kept. After
    `give_up_after` bytes without a newline, one last batch says so and nothing more is read (a device such as
    `/dev/zero` never ends).

    >>> [batch.lines for batch in line_batches([b"ab\\ncd", b"e\\nf", 3, b"g\\nh"])]
    [[b'ab\\n'], [b'cde\\n'], [b'f\\x00\\x00\\x00g\\n']]
    >>> [(batch.lines, batch.overlong) for batch in line_batches([b"a\\n", LONGEST_LINE_BYTES, b"\\nb\\n"])]
    [([b'a\\n'], 0), ([b'b\\n'], 1)]
    >>> [batch.given_up for batch in line_batches([b"x" * 10, b"y" * 10], give_up_after=15)]
    [True]
    """
    pieces: list[bytes] = []
    """The line being read so far, unless it is over-long: then nothing of it is kept, and `length` says how long."""
    length = 0
    for chunk in chunks:
        if isinstance(chunk, int):  # zeros: no newline
            length += chunk
            pieces.append(bytes(chunk) if length <= longest else b"")
        elif (end := chunk.find(b"\n")) >= 0:
            overlong = int(length + end + 1 > longest)
            # `readlines` finds the newlines with memchr: several times faster than `bytes.split`, which looks at
            # every byte in Python's own loop.
            text = chunk[end + 1:] if overlong else b"".join(pieces) + chunk if pieces else chunk
            lines = BytesIO(text).readlines()
            pieces = [lines.pop()] if lines and not lines[-1].endswith(b"\n") else []
            length = len(pieces[0]) if pieces else 0
            if len(chunk) > longest:  # then lines within the chunk can be too long too
                kept = [line for line in lines if len(line) <= longest]
                overlong, lines = overlong + len(lines) - len(kept), kept
                if length > longest:
                    pieces = []
            if lines or overlong:
                yield Batch(lines, overlong)
            continue
        else:
            length += len(chunk)
            pieces.append(chunk)
        if length > longest:
            pieces = []
        if give_up_after is not None and length > give_up_after:
            yield Batch([], given_up=True)
            return
