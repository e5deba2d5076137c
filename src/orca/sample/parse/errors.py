"""The one error type of every parser, so `Result`s from different files compose with `bind`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ParseError:
    """Why a kernel file's text could not be read as a snapshot."""

    source: str
    """The file, as the kernel names it: `/proc/stat`, `memory.current`, ..."""
    reason: str
