"""Where lines go (SPEC 4): standard output, a file, or object storage. Every kind is a `LineSink`."""

from __future__ import annotations

from typing import Protocol


class LineSink(Protocol):
    def write(self, line: str) -> None:
        """Append one line (no newline in `line`). Never raises: a line that cannot be written is dropped, with
        one message to standard error for the first failure in a row (SPEC 4.5)."""

    def close(self) -> None:
        """The end of sampling, normal or by signal: flush, and for object storage one final upload of at most
        5 s (SPEC 2.4). Never raises."""
