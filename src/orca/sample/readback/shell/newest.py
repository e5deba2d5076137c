"""The newest minute of an instance's lines, read from the end of its file: a long `--keep` file or a big one is
not read whole, only back to the first line older than the minute."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

from returns.result import Success

from orca.sample.line_format import Sample
from orca.sample.readback.lines import LONGEST_LINE_BYTES
from orca.sample.readback.minute import Now, newest_minute, newest_window
from orca.sample.readback.sample_line import parse
from orca.sample.shared.backwards import ReadAt, line_start_before
from orca.sample.shared.bounded import open_regular
from orca.sample.shared.s3_location import SCHEME

BLOCK_BYTES = 64 * 1024
"""Read from the end in blocks of this size; a minute at the default interval is a few kilobytes."""
LAST_LINE_SEARCH_BYTES = 2**30
"""How far back the last newline is looked for: a last line being written longer than that (no sampler writes one)
is taken as no samples, rather than reading a file of any size through."""


def lines_backwards(read_at: ReadAt, size: int, block: int = BLOCK_BYTES) -> Iterator[bytes]:
    """The complete lines of a `size`-byte file, last first, without their newlines. A last line without its
    newline is left out (the sampler may be writing it), however long; a line over `LONGEST_LINE_BYTES` is left
    out too, and not kept while it is read."""
    # The offset of the last newline; -1 without one.
    end = line_start_before(read_at, size, block, give_up_after=LAST_LINE_SEARCH_BYTES) - 1
    if end < 0:
        return
    tail: list[bytes] = []
    """The end of the line being read, its blocks last first; nothing of it once it is too long."""
    length = 0
    while end > 0:
        start = max(0, end - block)
        chunk = read_at(start, end - start)
        if len(chunk) != end - start:
            return  # the file shrank (rewritten by --keep): what was read is all there is
        end = start
        cut = chunk.rfind(b"\n")
        if cut < 0:
            length += len(chunk)
            if length <= LONGEST_LINE_BYTES:
                tail.append(chunk)
            else:
                tail = []
            continue
        pieces = chunk.split(b"\n")
        if length + len(pieces[-1]) <= LONGEST_LINE_BYTES:
            yield b"".join([pieces[-1], *reversed(tail)])
        yield from reversed(pieces[1:-1])
        tail, length = [pieces[0]], len(pieces[0])
    if length <= LONGEST_LINE_BYTES:
        yield b"".join(reversed(tail))


def samples_backwards(read_at: ReadAt, size: int) -> Iterator[Sample]:
    """The sample lines of a file, last first; other lines are passed over."""
    for line in lines_backwards(read_at, size):
        result = parse(line)
        if isinstance(result, Success):
            yield result.unwrap()


def read_newest_minute(path: str, now: float | None = None) -> Now | None:
    """`newest_minute` of the file (or `s3://BUCKET/KEY` object) at `path` at Unix time `now` (default: the clock),
    reading it from its end.

    A file that does not exist or cannot be read is no samples: None, as for samples that are missing; so is what is
    not a regular file (a named pipe, a device, a directory), which is not opened, so nothing can make this wait.
    """
    at = time.time() if now is None else now
    if path.startswith(SCHEME):
        return _object_newest_minute(path, at)
    try:
        descriptor, size = open_regular(path)
    except OSError:
        return None
    try:
        window = newest_window(samples_backwards(lambda offset, length: os.pread(descriptor, length, offset), size))
    except OSError:
        return None
    finally:
        os.close(descriptor)
    return newest_minute(window, at)


def _object_newest_minute(location: str, now: float) -> Now | None:
    """The same for an S3 object, read from its end by ranged requests."""
    from orca.sample.readback.shell.s3_objects import reader_client
    from orca.sample.shared.s3_location import parse_location

    parsed = parse_location(location)
    if parsed is None:
        return None
    bucket, key = parsed

    try:
        client = reader_client()
        size = int(client.head_object(Bucket=bucket, Key=key)["ContentLength"])

        def read_at(offset: int, length: int) -> bytes:
            reply = client.get_object(Bucket=bucket, Key=key, Range=f"bytes={offset}-{offset + length - 1}")
            data: bytes = reply["Body"].read()
            return data

        window = newest_window(samples_backwards(read_at, size))
    except Exception:
        return None  # no object, no credentials, no endpoint: missing samples, which hold nothing
    return newest_minute(window, now)
