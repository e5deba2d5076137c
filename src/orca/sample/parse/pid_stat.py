"""/proc/<pid>/stat (proc(5)): the command sits between the first `(` and the LAST `)`."""

from __future__ import annotations

from dataclasses import dataclass

from returns.result import Result

from orca.sample.parse.errors import ParseError


@dataclass(frozen=True, slots=True)
class PidStat:
    pid: int
    comm: str
    state: str
    """Field 3: `R`, `S`, `D`, `Z`, `X`, ..."""
    ppid: int
    utime: int
    """Fields 14-17, in clock ticks."""
    stime: int
    cutime: int
    cstime: int
    starttime: int
    """Field 22: clock ticks after boot the process started."""
    rss_pages: int
    """Field 24: a cheap, lagging count (SPEC 3.4); resident pages for sums come from statm."""

    @property
    def cpu_ticks(self) -> int:
        return self.utime + self.stime + self.cutime + self.cstime


@dataclass(frozen=True, slots=True)
class PidUsage:
    """The seed's `PidUsage`: what /proc/<pid>/stat says one process uses."""

    parent: int
    """-1 if the line was malformed."""
    rss_pages: int
    cpu_ticks: int
    """utime + stime + cutime + cstime."""


def parse(text: str) -> Result[PidStat, ParseError]:
    raise NotImplementedError  # issue 2: being written


def parse_pid_stat(text: str) -> tuple[int, int]:
    """The seed's adapter: (parent, resident pages); (-1, 0) if malformed."""
    raise NotImplementedError  # issue 2: being written


def parse_pid_usage(text: str) -> PidUsage:
    """The seed's adapter: parent, resident pages and CPU ticks; parent -1 if malformed."""
    raise NotImplementedError  # issue 2: being written
