"""`s3://` locations and what an S3 store's answers mean, without I/O: which locations the output accepts, how an
object is cut into parts, and how an error answer reads and what it means for an append (docs/s3.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SCHEME = "s3://"

MIB = 1024 * 1024


def parse_location(location: str) -> tuple[str, str] | None:
    """`s3://BUCKET/KEY` as `(bucket, key)`, or None when it is not one the output accepts.

    The key also names the staging file, one directory per segment under the bucket's, so a key whose segments
    would not name a file of their own is refused: an empty segment (`a//b`, a leading or trailing `/`, which would
    share `a/b`'s file or name a directory), a `.` or `..` segment (which would leave the bucket's directory), a NUL
    byte. Each key the output accepts has a staging file no other key has.

    >>> parse_location("s3://logs/p/7/metrics/i-1.jsonl")
    ('logs', 'p/7/metrics/i-1.jsonl')
    >>> [parse_location(text) for text in ("s3://logs/", "s3:///k", "s3://logs/a//b", "s3://logs/a/../b", "/tmp/x")]
    [None, None, None, None, None]
    """
    if not location.startswith(SCHEME) or "\0" in location:
        return None
    bucket, _, key = location[len(SCHEME) :].partition("/")
    if bucket in ("", ".", ".."):
        return None
    if any(segment in ("", ".", "..") for segment in key.split("/")):
        return None
    return bucket, key


def parse_prefix(location: str) -> tuple[str, str] | None:
    """What the reader accepts: `s3://BUCKET/KEY` (one object), `s3://BUCKET/PREFIX/` or `s3://BUCKET` (every object
    under it) as `(bucket, key or prefix)`, or None without a bucket.

    >>> parse_prefix("s3://logs/run/7/"), parse_prefix("s3://logs"), parse_prefix("s3:///k")
    (('logs', 'run/7/'), ('logs', ''), None)
    """
    if not location.startswith(SCHEME):
        return None
    bucket, _, key = location[len(SCHEME) :].partition("/")
    return (bucket, key) if bucket else None


@dataclass(frozen=True, slots=True)
class PartLimits:
    """S3's sizes of a multipart upload's parts."""

    smallest: int = 5 * MIB
    """Every part but the last is at least this big: an object under it cannot be copied as a part of its own."""
    largest: int = 5 * 1024 * MIB
    """No part, copied or sent, and no single PUT, may be bigger. At most half of it may be `smallest`, so that
    `part_ranges`' equal parts are never too small."""


def part_ranges(start: int, end: int, largest: int) -> list[tuple[int, int]]:
    """Bytes `start` to `end` cut into as few ranges of at most `largest` bytes as there can be, of sizes within one
    byte of each other: each range of several is then over half of `largest`, so never under S3's smallest part.

    >>> part_ranges(0, 10, 4)
    [(0, 3), (3, 6), (6, 10)]
    >>> part_ranges(5, 9, 4), part_ranges(0, 0, 4)
    ([(5, 9)], [(0, 0)])
    """
    count = max(1, -(-(end - start) // largest))
    return [(start + (end - start) * index // count, start + (end - start) * (index + 1) // count)
            for index in range(count)]


def error_text(code: str, message: str) -> str:
    """An error answer as a person reads it: its code and, when it says more, its message.

    >>> error_text("NoSuchBucket", "The specified bucket does not exist"), error_text("SlowDown", "SlowDown")
    ('NoSuchBucket: The specified bucket does not exist', 'SlowDown')
    """
    return f"{code}: {message}" if message and message != code else code or "an error"


Verdict = Literal["changed", "refused", "failed"]

_CHANGED_CODES = frozenset({"PreconditionFailed", "NoSuchKey", "InvalidRange", "NotFound"})
_TRANSIENT_CODES = frozenset({
    "SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "RequestTimeTooSkewed", "Throttling",
    "ThrottlingException", "RequestLimitExceeded", "TooManyRequests", "OperationAborted",
})


def append_verdict(status: int, code: str) -> Verdict:
    """What an error answer to an append's HEAD or copy means (`status` 0: no answer at all).

    `changed`: the object is no longer what the last upload left (another writer, a deleted object): upload the
    whole file this once. `failed`: the store or the network is in trouble (a 5xx, throttling, no answer): the
    append fails and the next upload tries again. `refused`: the store will not do it for these credentials, or
    at all (AccessDenied without GetObject, NotImplemented where there is no copy, any other refusal): it will not
    do it next time either, so uploads send the whole file from then on.

    >>> [append_verdict(*answer) for answer in ((412, "PreconditionFailed"), (503, "SlowDown"), (0, ""))]
    ['changed', 'failed', 'failed']
    >>> [append_verdict(*answer) for answer in ((501, "NotImplemented"), (403, "403"), (400, "InvalidRequest"))]
    ['refused', 'refused', 'refused']
    """
    if code in _CHANGED_CODES or status in (404, 412, 416):
        return "changed"
    if code in _TRANSIENT_CODES or status in (0, 408, 429) or (status >= 500 and status != 501):
        return "failed"
    return "refused"
