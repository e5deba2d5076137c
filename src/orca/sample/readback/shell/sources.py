"""Where lines are read back from: a file, a directory of them, standard input, an S3 object or every object under an
S3 prefix. Each is read as a stream of complete lines in bounded memory: it grows neither with the number of lines
nor with a line that never ends (`lines.py`)."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from orca.sample.line_format import Sample
from orca.sample.parse.errors import reason_of
from orca.sample.readback.lines import LONGEST_LINE_BYTES, Batch, line_batches
from orca.sample.readback.sample_line import decode_all, looks_like_sample
from orca.sample.shared.backwards import line_start_before
from orca.sample.shared.s3_location import SCHEME

READ_BYTES = 256 * 1024
"""Files, S3 objects and standard input are read this size at a time: the lines of one chunk are checked together."""
STREAM_GIVE_UP_BYTES = 2**30
"""Standard input, a named pipe or a device that gives this much without a newline is read no further: no sampler
writes that, and a device such as `/dev/zero` never ends. A regular file ends, and is read to its end."""
OVERLONG = f"longer than {LONGEST_LINE_BYTES >> 20} MiB"
"""The reason a line too long to be a sample is skipped for."""


class SourceError(Exception):
    """A location that does not exist or cannot be read; the message names it and says why."""


@dataclass(frozen=True, slots=True)
class Source:
    """One file or object of lines: one instance's lines, as `metrics_location` lays a run out."""

    name: str
    """The path, `-`, or `s3://BUCKET/KEY`."""
    batches: Callable[[], Iterator[Batch]]
    """Its complete lines (each with its newline), a chunk's worth at a time; a last line without its newline (being
    written) is left out. Reading raises `OSError` for a file that cannot be read."""
    path: str | None = None
    """A regular file's path: a file that can be read in parts (see `part_starts`)."""
    place: str | None = None
    """Where another process, or a cluster's worker, finds it again (`sources_at`): a file's absolute path, an
    object's `s3://BUCKET/KEY`; None for standard input and pipes, which only this process can read."""
    size: int = 0
    """Its bytes as found: a file's when it was opened, an object's when it was listed; 0 when not known."""


@dataclass(slots=True)
class Tally:
    """What a reading passed over, per source."""

    samples: int = 0
    skipped: int = 0
    """Lines meant as samples that are not (malformed, another `v`, a negative or non-finite number)."""
    other: int = 0
    """Other text, such as a pod log's own lines."""
    reasons: Counter[str] = field(default_factory=Counter)
    """How many skipped lines each reason had."""
    given_up: bool = False
    """The source went on too long without a newline to be read to its end (`STREAM_GIVE_UP_BYTES`)."""
    shrank: tuple[int, int] | None = None
    """A regular file's size when it was opened and when it had been read, if it was then smaller (truncated)."""

    def add(self, other: Tally) -> None:
        """Count what `other` (another part of the same source) passed over too."""
        self.samples += other.samples
        self.skipped += other.skipped
        self.other += other.other
        self.reasons.update(other.reasons)
        self.given_up = self.given_up or other.given_up
        self.shrank = self.shrank or other.shrank

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped += count
        self.reasons[reason] += count


def sources(location: str, unreadable: Callable[[str], None] = lambda _: None) -> list[Source]:
    """The sources at `location`: `-`, `s3://BUCKET/KEY`, `s3://BUCKET/PREFIX/`, a directory or a file. A directory
    or a prefix gives every `*.jsonl` under it, sorted; a file or object named is read whatever its name. Raises
    `SourceError` for one that does not exist or cannot be read; a directory under it that cannot be read is told to
    `unreadable` (its name and why), and the others are still found."""
    if location == "-":
        return [Source("-", lambda: line_batches(_chunks(sys.stdin.buffer), STREAM_GIVE_UP_BYTES))]
    if location.startswith(SCHEME):
        return _s3_sources(location)
    try:
        if os.path.isdir(location):
            files = _files_under(location, unreadable)
            if not files:
                raise SourceError(f"{location}: no *.jsonl file under this directory")
            return [_member_source(name) for name in files]
        return [_file_source(location)]
    except OSError as error:
        raise SourceError(f"{location}: {error.strerror or error}") from None


def _files_under(directory: str, unreadable: Callable[[str], None]) -> list[str]:
    """Every `*.jsonl` file under `directory`, sorted; each directory under it that cannot be listed told to
    `unreadable`. Raises `OSError` when `directory` itself cannot be."""
    failed: list[OSError] = []
    files = [os.path.join(root, name) for root, _, names in os.walk(directory, onerror=failed.append)
             for name in names if name.endswith(".jsonl") and os.path.isfile(os.path.join(root, name))]
    for error in failed:
        if error.filename == directory:
            raise error
        unreadable(f"{error.filename}: cannot list this directory: {error.strerror or error}")
    return sorted(files)


def decoded(batches: Iterator[Batch], tally: Tally) -> Iterator[list[Sample]]:
    """The samples of a stream's batches of lines, a chunk's lines at a time (see `decode_all`), counting what is
    passed over in `tally`."""
    for batch in batches:
        good, bad = decode_all(batch.lines)
        tally.samples += len(good)
        for raw, error in bad:
            if looks_like_sample(raw):
                tally.skip(error.reason)
            else:
                tally.other += 1
        if batch.overlong:
            tally.skip(OVERLONG, batch.overlong)
        tally.given_up = tally.given_up or batch.given_up
        yield good


def read_samples(location: str) -> Iterator[Sample]:
    """Every sample at `location` (see `sources`), source after source; lines that are not samples are passed over.
    Raises `SourceError` for a location that does not exist or cannot be read, before any sample; for a file under
    a directory that cannot be read, when it is reached."""
    for source in sources(location):
        try:
            yield from chain.from_iterable(decoded(source.batches(), Tally()))
        except OSError as error:
            raise SourceError(f"{source.name}: {error.strerror or error}") from None


def sources_at(places: Sequence[tuple[str, str]]) -> list[Source]:
    """The sources `sources` found, found again by their names and places (`Source.place`) in another process or on
    a cluster's worker, with its own settings: each file opened again, the objects fetched several at once by a
    client of this process's own (`s3_objects.named_chunks`). One that cannot be read is said when it is read."""
    objects = [place for _, place in places if place.startswith(SCHEME)]
    fetched: dict[str, Callable[[], Iterator[Batch]]] = {}
    if objects:
        from orca.sample.readback.shell.s3_objects import named_chunks

        fetched = {place: _object_batches(chunks) for place, chunks in
                   zip(objects, named_chunks(objects, READ_BYTES), strict=True)}
    return [Source(name, fetched[place], place=place) if place in fetched else _member_source(place, name)
            for name, place in places]


def read_failure(source: Source, error: Exception) -> SourceError:
    """Why reading `source` failed, naming it: the system's words for an `OSError`, else the exception's (an S3 read
    that broke off names its object already)."""
    if isinstance(error, SourceError):
        return error
    if isinstance(error, OSError):
        return SourceError(f"{source.name}: {error.strerror or error}")
    return SourceError(f"{source.name}: {reason_of(error)}")


def _member_source(path: str, name: str | None = None) -> Source:
    """A file found under a directory (named `name`, default its path): one that cannot be read is said when it is
    read, and the others are still read (an instance's file among many)."""
    try:
        return _file_source(path, name)
    except OSError as error:
        return Source(name or path, _failing(error), place=os.path.abspath(path))


def _failing(error: OSError) -> Callable[[], Iterator[Batch]]:
    def batches() -> Iterator[Batch]:
        raise error

    return batches


def _file_source(path: str, name: str | None = None) -> Source:
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory")
    status = os.stat(path)
    if not stat.S_ISREG(status.st_mode):
        # A named pipe or a device: opened once, when read (the open waits for a writer, as `cat` does); opening it
        # now to check it would take a waiting writer's lines and leave it writing to no one.
        if not os.access(path, os.R_OK):
            raise PermissionError(13, "Permission denied")
        return Source(name or path, lambda: _stream_batches(path))
    # Opened now, so that a missing or unreadable file is said at once rather than halfway through a summary.
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    os.close(descriptor)
    return Source(name or path, lambda: _file_batches(path), path, os.path.abspath(path), status.st_size)


def descriptor_batches(descriptor: int, start: int = 0, end: int | None = None,
                       chunk: int = READ_BYTES) -> Iterator[Batch]:
    """The lines of the regular file open as `descriptor` from offset `start` (a line's start) to `end` (another's,
    or None: the end of the file, however long it has grown by then), read `chunk` bytes at a time with `pread`, so
    that several processes can read parts of the one open file at once."""
    return line_batches(_aligned_chunks(descriptor, start, end, chunk))


def part_starts(read_at: Callable[[int, int], bytes], size: int, parts: int, chunk: int = READ_BYTES,
                shorter_first: int = 0) -> list[int]:
    """Offsets where `parts` parts of a file of `size` bytes start, in order: 0, then a line's start near each
    1/`parts` of the file (fewer parts when lines are too long to cut there). Each cut is the start of the line that
    holds the byte at a multiple of `chunk`, so each part's chunks and batches of lines are the ones a single
    reader of the whole file has (see `descriptor_batches`). The first part is about `shorter_first` bytes shorter
    than the others (at most half as short as an even share), for a reader that has more to do after it."""
    shift = min(shorter_first, size // (2 * parts)) if parts > 1 else 0
    starts = [0]
    for index in range(1, parts):
        at = index * (size + shift) // parts - shift
        # No cut inside a line too long to be a sample: it is not looked through.
        start = line_start_before(read_at, at // chunk * chunk, give_up_after=LONGEST_LINE_BYTES)
        if start > starts[-1]:
            starts.append(start)
    return starts


def _file_batches(path: str) -> Iterator[Batch]:
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        yield from descriptor_batches(descriptor)
    finally:
        os.close(descriptor)


def _aligned_chunks(descriptor: int, start: int, end: int | None, size: int) -> Iterator[bytes | int]:
    """What a file holds from `start` to `end` (None: to its end), in chunks that end where chunks read from 0
    would, at multiples of `size` or where a hole starts: the same batches of lines whichever offset reading starts
    at. A hole (a sparse file's: zeros the file system does not store) is not read: its length is given instead."""
    position = start
    while end is None or position < end:
        data = _data_from(descriptor, position)
        if data is None:
            return  # nothing but a hole to the end
        if data > position:
            stop = data if end is None else min(data, end)
            yield stop - position
            position = stop
            continue
        length = size - position % size if end is None else min(size - position % size, end - position)
        chunk = os.pread(descriptor, length, position)
        if not chunk:
            return
        position += len(chunk)
        yield chunk


def _data_from(descriptor: int, position: int) -> int | None:
    """Where the file's data goes on from `position`: `position` itself, the end of a hole there, or None when only a
    hole is left (a file system that does not tell holes has none)."""
    seek_data = getattr(os, "SEEK_DATA", None)
    if seek_data is None:
        return position
    try:
        return os.lseek(descriptor, position, seek_data)
    except OSError as error:
        return None if error.errno == errno.ENXIO else position


def _stream_batches(path: str) -> Iterator[Batch]:
    """A named pipe's or a device's lines, read as `cat` reads it: opened now, which waits for a writer."""
    with open(path, "rb", buffering=0) as stream:
        yield from line_batches(_chunks(stream), STREAM_GIVE_UP_BYTES)


def _chunks(stream: Any) -> Iterator[bytes]:
    """What `stream` gives, as it comes: `read1` returns what one read brings (a live stream's lines are in hand
    when it is interrupted), where `read` would wait for the whole chunk."""
    read = getattr(stream, "read1", stream.read)
    while chunk := read(READ_BYTES):
        yield chunk


def _s3_sources(location: str) -> list[Source]:
    """The objects at an `s3://` location (fetched several at once: see `s3_objects`)."""
    from orca.sample.readback.shell.s3_objects import S3ReadError, object_chunks

    try:
        found = object_chunks(location, READ_BYTES)
    except S3ReadError as error:
        raise SourceError(str(error)) from None
    return [Source(name, _object_batches(chunks), place=name, size=size) for name, size, chunks in found]


def _object_batches(chunks: Callable[[], Iterator[bytes]]) -> Callable[[], Iterator[Batch]]:
    """An object's lines; a read that breaks off is a `SourceError` naming the object."""
    from orca.sample.readback.shell.s3_objects import S3ReadError

    def batches() -> Iterator[Batch]:
        try:
            yield from line_batches(chunks())
        except S3ReadError as error:
            raise SourceError(str(error)) from None

    return batches
