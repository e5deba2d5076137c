"""/proc/<pid>/statm (proc(5)): sizes in pages; the second field is the resident set (SPEC 3.4)."""

from __future__ import annotations

from dataclasses import dataclass

from returns.result import Result

from orca.sample.parse.errors import ParseError


@dataclass(frozen=True, slots=True)
class Statm:
    size_pages: int
    resident_pages: int
    shared_pages: int


def parse(text: str) -> Result[Statm, ParseError]:
    raise NotImplementedError  # issue 2: being written
