"""/proc/pressure/{cpu,memory,io} (Documentation/accounting/psi.rst)."""

from __future__ import annotations

from dataclasses import dataclass

from returns.result import Result

from orca.sample.parse.errors import ParseError


@dataclass(frozen=True, slots=True)
class PressureLine:
    avg10: float
    avg60: float
    avg300: float
    total_us: int
    """Total stall time so far, in microseconds."""


@dataclass(frozen=True, slots=True)
class Pressure:
    some: PressureLine
    full: PressureLine | None
    """Missing from `cpu` on older kernels."""


def parse(text: str) -> Result[Pressure, ParseError]:
    raise NotImplementedError  # issue 2: being written
