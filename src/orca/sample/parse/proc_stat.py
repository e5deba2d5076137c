"""/proc/stat: the `cpu` lines (proc(5))."""

from __future__ import annotations

from dataclasses import dataclass

from returns.result import Result

from orca.sample.parse.errors import ParseError


@dataclass(frozen=True, slots=True)
class CpuTimes:
    """The first eight counters of one `cpu` line, in USER_HZ ticks; guest time is already inside `user`."""

    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int


@dataclass(frozen=True, slots=True)
class ProcStat:
    total: CpuTimes
    """The aggregate `cpu` line."""
    cores: tuple[tuple[int, CpuTimes], ...]
    """`(N, times)` for each `cpuN` line, in file order."""


def parse(text: str) -> Result[ProcStat, ParseError]:
    raise NotImplementedError  # issue 2: being written


def parse_proc_stat(text: str) -> list[list[int]]:
    """The seed's adapter (SPEC 6): aggregate first, then each core, eight counters each; missing fields are 0."""
    raise NotImplementedError  # issue 2: being written
