"""/proc/net/dev (proc(5))."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from returns.result import Result

from orca.sample.parse.errors import ParseError


@dataclass(frozen=True, slots=True)
class NetDev:
    bytes_by_interface: Mapping[str, tuple[int, int]]
    """Interface → (bytes received, bytes sent); `lo` left out."""


def parse(text: str) -> Result[NetDev, ParseError]:
    raise NotImplementedError  # issue 2: being written


def parse_net_dev(text: str) -> dict[str, tuple[int, int]]:
    """The seed's adapter (SPEC 6)."""
    raise NotImplementedError  # issue 2: being written
