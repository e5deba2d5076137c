"""How an upload to S3 is planned, without I/O: how an object is cut into parts, and what an error answer means for an
append (docs/s3.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MIB = 1024 * 1024


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
