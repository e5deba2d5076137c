"""Where lines go (docs/behaviour.md §4): standard output, a file, or object storage. Every kind is a `LineSink`."""

from __future__ import annotations

from typing import Protocol

from orca.sample.shared.s3_location import SCHEME as S3_SCHEME

__all__ = ["S3_SCHEME", "STDOUT", "LineSink"]

STDOUT = "-"
"""The `--out` of standard output; an object-storage one starts with `S3_SCHEME`, `s3://BUCKET/KEY`."""


class LineSink(Protocol):
    def write(self, line: bytes) -> None:
        """Append one line (no newline in `line`). Never raises and never waits on a reader: a line that cannot be
        written whole is dropped whole, with one message to standard error for the first failure in a row
        (docs/behaviour.md §4.5)."""

    def close(self) -> None:
        """The end of sampling, normal or by signal: flush, and for object storage one final upload of at most
        5 s (docs/behaviour.md §2.4). Never raises."""
