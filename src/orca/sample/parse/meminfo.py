"""/proc/meminfo (proc(5))."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from returns.result import Result

from orca.sample.parse.errors import ParseError


@dataclass(frozen=True, slots=True)
class MemInfo:
    bytes_by_key: Mapping[str, int]
    """Key → bytes: `kB` values × 1024, values without a unit as they are."""


def parse(text: str) -> Result[MemInfo, ParseError]:
    raise NotImplementedError  # issue 2: being written


def parse_meminfo(text: str) -> dict[str, int]:
    """The seed's adapter (SPEC 6)."""
    raise NotImplementedError  # issue 2: being written
