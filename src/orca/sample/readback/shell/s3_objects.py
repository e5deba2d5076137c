"""Objects read back from S3 (docs/s3.md, "Reading lines back from S3"): `s3://BUCKET/KEY`, or every `*.jsonl`
object under a prefix, each as a stream of chunks. A listing's objects are fetched `FETCHES` at once on one client,
each at most `AHEAD_CHUNKS` ahead of its reader; one whose reader is away `IDLE_SECONDS` lets go of its connection
and is fetched again from where it stopped. `named_chunks` fetches objects listed elsewhere with a client of its own."""

from __future__ import annotations

import functools
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from operator import itemgetter
from typing import Any

from toolz import groupby

from orca.sample.shared.aws import aws_client, error_answer, reason
from orca.sample.shared.s3_location import SCHEME, parse_prefix

FETCHES = 16
"""Objects fetched at once, each on a connection of the one client's pool."""
AHEAD_CHUNKS = 2
"""Chunks of an object fetched ahead of its reader."""
IDLE_SECONDS = 30.0
# Short enough that a dead endpoint fails a tick of the scheduler's pressure hold, not its minute.
CONNECT_SECONDS = 2.0
READ_SECONDS = 10.0
ATTEMPTS = 3
MEMBER_SUFFIX = ".jsonl"
"""What a prefix's objects are named to be read, as a directory's files."""


class S3ReadError(Exception):
    """A location that cannot be read: the message names it and says why."""


def reader_client(connections: int = 1) -> Any:
    """The reader's boto3 client (every setting boto3's, see `shell.aws`), holding up to `connections` at once."""
    return aws_client(
        "s3", connect_seconds=CONNECT_SECONDS, read_seconds=READ_SECONDS, attempts=ATTEMPTS, connections=connections
    )


def object_chunks(
    location: str, chunk: int, fetches: int = FETCHES
) -> list[tuple[str, int, Callable[[], Iterator[bytes]]]]:
    """The objects at `location`, sorted by key, each as its name (`s3://BUCKET/KEY`), its size and its bytes in
    chunks of about `chunk`; `fetches` of them fetched at once (1: one after the other). Raises `S3ReadError` for a
    location that is not one, an object or prefix that is not there, or a store that cannot be reached."""
    parsed = parse_prefix(location)
    if parsed is None:
        raise S3ReadError(f"{location}: not s3://BUCKET/KEY or s3://BUCKET/PREFIX/")
    bucket, key = parsed
    try:
        client = reader_client(fetches)
        found = _found(client, bucket, key)
    except S3ReadError:
        raise
    except Exception as error:
        raise S3ReadError(f"{location}: {reason(error)}") from None
    if not found:
        raise S3ReadError(f"{location}: no *{MEMBER_SUFFIX} object under this prefix")
    fetching = _Prefetch(client, bucket, [name for name, _ in found], chunk, fetches)
    return [(f"{SCHEME}{bucket}/{name}", size, partial(fetching.chunks, index))
            for index, (name, size) in enumerate(found)]


def named_chunks(names: Sequence[str], chunk: int, fetches: int = FETCHES) -> list[Callable[[], Iterator[bytes]]]:
    """The bytes of the objects `names` (each `s3://BUCKET/KEY`, as `object_chunks` names them), in chunks of about
    `chunk`, `fetches` of each bucket's fetched at once, by this process's and thread's own client (`own_client`).
    A name that is not an object's fails when it is read."""
    located = [parse_prefix(name) or ("", name) for name in names]
    buckets = {bucket: [key for _, key in keys] for bucket, keys in groupby(itemgetter(0), located).items()}
    client = own_client(os.getpid(), threading.get_ident())
    fetching = {bucket: _Prefetch(client, bucket, keys, chunk, fetches) for bucket, keys in buckets.items()}
    places = {bucket: iter(range(len(keys))) for bucket, keys in buckets.items()}
    return [partial(fetching[bucket].chunks, next(places[bucket])) for bucket, _ in located]


@functools.cache
def own_client(process: int, thread: int) -> Any:
    """The client of this process (`process`, its pid) and thread, made once: a forked process must not use the
    connections of its parent's, and a client's settings are those of where it runs."""
    return reader_client(FETCHES)


def _found(client: Any, bucket: str, key: str) -> list[tuple[str, int]]:
    """The keys and sizes to read: the object `key`, else (a key without the slash of a prefix, and no object of
    that name) every `*.jsonl` under `key/`, sorted. Raises `S3ReadError` when there is neither."""
    if not key or key.endswith("/"):
        return sorted(_keys_under(client, bucket, key))
    try:
        return [(key, int(client.head_object(Bucket=bucket, Key=key).get("ContentLength", 0)))]
    except Exception as error:
        answer = error_answer(error)
        if answer is None or answer[0] != 404:
            raise
    found = sorted(_keys_under(client, bucket, key + "/"))
    if not found:
        raise S3ReadError(f"{SCHEME}{bucket}/{key}: no such object, and no *{MEMBER_SUFFIX} object under "
                          f"{SCHEME}{bucket}/{key}/")
    return found


def _keys_under(client: Any, bucket: str, prefix: str) -> Iterator[tuple[str, int]]:
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for entry in page.get("Contents", []):
            name = entry["Key"]
            if name.endswith(MEMBER_SUFFIX):
                yield name, int(entry.get("Size", 0))


def _why(error: BaseException) -> str:
    """Why an object's read broke off, in a person's words: botocore says a body that stalled timed out on endpoint
    URL "None"."""
    exceptions = sys.modules.get("botocore.exceptions")
    if exceptions is not None and isinstance(error, exceptions.ReadTimeoutError):
        return f"the store sent nothing for {READ_SECONDS:g} s (read timeout)"
    return reason(error)


_END = object()
_STOPPED = object()
"""The fetch let go of its connection, its reader having been away `IDLE_SECONDS`."""


class _Handover:
    """One object's chunks on their way from its fetch to its reader: at most `AHEAD_CHUNKS` waiting, as `room`
    says; the ends (`_END`, an error, `_STOPPED`) are put without waiting."""

    def __init__(self) -> None:
        self.items: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.room = threading.Semaphore(AHEAD_CHUNKS)
        self.abandoned = False

    def put(self, data: bytes) -> bool:
        """Hands `data` over once there is room; False when the reader is gone, or did not come (then `_STOPPED`
        is what it finds when it does)."""
        if not self.room.acquire(timeout=IDLE_SECONDS):
            self.items.put(_STOPPED)
            return False
        self.items.put(data)
        return not self.abandoned

    def take(self) -> Any:
        item = self.items.get()
        self.room.release()
        return item

    def abandon(self) -> None:
        self.abandoned = True
        self.room.release()  # a fetch waiting for room wakes and sees it


class _Prefetch:
    """The objects of one listing, each fetched in a thread of its own, at most `fetches` at once, from the one its
    reader asks for up to `fetches` ahead."""

    def __init__(self, client: Any, bucket: str, keys: list[str], chunk: int, fetches: int) -> None:
        self._client, self._bucket, self._keys, self._chunk = client, bucket, keys, chunk
        self._fetches = max(1, fetches)
        self._slots = threading.BoundedSemaphore(self._fetches)
        self._handovers: dict[int, _Handover] = {}
        self._started = 0
        self._taken: set[int] = set()
        self._lock = threading.Lock()

    def chunks(self, index: int) -> Iterator[bytes]:
        """The object's bytes; a read that fails is an `S3ReadError` naming it."""
        try:
            yield from self._chunks(index)
        except Exception as error:
            raise S3ReadError(f"{SCHEME}{self._bucket}/{self._keys[index]}: {_why(error)}") from None

    def _chunks(self, index: int) -> Iterator[bytes]:
        handover = self._take(index)
        if handover is None:  # read a second time: fetched again, at once
            yield from self._body(index, 0)
            return
        offset = 0
        try:
            while (item := handover.take()) is not _END:
                if isinstance(item, BaseException):
                    raise item
                if item is _STOPPED:
                    yield from self._body(index, offset)
                    return
                offset += len(item)
                yield item
        finally:
            handover.abandon()

    def _take(self, index: int) -> _Handover | None:
        with self._lock:
            if index in self._taken:
                return None
            self._taken.add(index)
            for ahead in range(self._started, min(len(self._keys), index + self._fetches)):
                handover = self._handovers[ahead] = _Handover()
                threading.Thread(
                    target=self._fetch, args=(ahead, handover), name="orca-metrics-s3-fetch", daemon=True
                ).start()
                self._started = ahead + 1
            return self._handovers.pop(index, None)

    def _fetch(self, index: int, handover: _Handover) -> None:
        with self._slots:
            try:
                for data in self._body(index, 0):
                    if not handover.put(data):
                        return  # the generator's close lets go of the connection
            except Exception as error:
                handover.items.put(error)
                return
            handover.items.put(_END)

    def _body(self, index: int, offset: int) -> Iterator[bytes]:
        ranged = {"Range": f"bytes={offset}-"} if offset else {}
        body = self._client.get_object(Bucket=self._bucket, Key=self._keys[index], **ranged)["Body"]
        try:
            yield from body.iter_chunks(self._chunk)
        finally:
            body.close()
