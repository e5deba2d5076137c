"""What a run's lines say of the run itself (docs/behaviour.md §3.12, §11.1): its processes' CPU and count from every
line's `run`, the command from the first line of a `-- COMMAND`, and how it ended from the last.

The sums are whole numbers (each figure at the decimals the line writes it with, scaled), so a file folded in parts
and merged gives exactly the figures of one fold over it all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orca.sample.line_format import CommandExit, Sample

_DT = 1000
"""`dt` is written with 3 decimals, `run.cpu` with 1."""
_SHARE = 10
PEAK_DT = 0.1
"""Seconds a line must cover for its `run.cpu` to count towards the peak: the kernel counts a process's time in clock
ticks (10 ms on most Linux), so a shorter line (such as the one written as COMMAND ends just after another) holds a
handful of them and can read far over what ran. Its share still counts in the mean, weighted by its `dt`."""
_PEAK_STEP = round(PEAK_DT * _DT)

@dataclass(frozen=True, slots=True)
class ExitSummary:
    """How `-- COMMAND` ended, from its last line's `run.exit`: `code` or `signal`; `error` when it could not be
    started; `wall`, `user`, `system` and `max_rss` as `wait4` reported them for it and what it waited for."""

    code: int | None
    signal: int | None
    error: str | None
    wall: float | None
    user: float | None
    system: float | None
    max_rss: int | None


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The run's own processes (`--pid`, `--match`, `-- COMMAND`), from the lines' `run` sections."""

    command: tuple[str, ...] | None
    """COMMAND's arguments as the first line holds them (bounded); None without a `-- COMMAND` first line."""
    argc: int | None
    """How many arguments COMMAND had, when `command` holds fewer."""
    exit: ExitSummary | None
    """None when no line says how it ended (not a `-- COMMAND`, or its last line not written yet)."""
    cpu_mean: float | None
    """Percent of all cores, over the time the lines with a `run.cpu` cover (each weighted by its `dt`)."""
    cpu_peak: float | None
    """The highest `run.cpu` of a line covering at least `PEAK_DT` (of any line, when none does)."""
    cores_mean: float | None
    """The same mean in CPUs (`run.cpu` / 100 × `cores`): 1.0 is one core busy, as `top` shows 100%."""
    cores_peak: float | None
    procs_peak: int | None
    """The most processes the run had at a reading."""


class RunFold:
    """The figures of the `run` sections of one run's lines, in the order of the lines."""

    __slots__ = ("argc", "command", "cores_dt", "cores_lines", "cores_peak", "cores_plain", "cores_used", "cpu_dt",
                 "cpu_lines", "cpu_peak", "cpu_plain", "cpu_used", "exit", "procs_peak", "seen", "short_cores_peak",
                 "short_cpu_peak")

    def __init__(self) -> None:
        self.seen = False
        self.command: tuple[str, ...] | None = None
        self.argc: int | None = None
        self.exit: CommandExit | None = None
        self.cpu_used = self.cpu_dt = self.cpu_plain = self.cpu_lines = 0
        """Σ `cpu` × `dt` and Σ `dt`, scaled to whole numbers; Σ `cpu` and the count, for lines that cover no time."""
        self.cores_used = self.cores_dt = self.cores_plain = self.cores_lines = 0
        """The same for `cpu` × `cores`, over the lines that have `cores`."""
        self.cpu_peak = self.cores_peak = self.procs_peak = -1
        """Scaled as the sums; the peaks over lines covering at least `PEAK_DT`."""
        self.short_cpu_peak = self.short_cores_peak = -1
        """The peaks over the lines that cover less."""

    def add(self, lines: Sequence[Sample]) -> None:
        """Lines that have a `run` section, in the order written."""
        for line in lines:
            run = line.run
            if run is None:
                continue
            self.seen = True
            if run.command is not None and self.command is None:
                self.command, self.argc = run.command, run.argc
            if run.exit is not None:
                self.exit = run.exit
            if run.procs is not None and run.procs > self.procs_peak:
                self.procs_peak = run.procs
            if run.cpu is None:
                continue
            share, step = round(run.cpu * _SHARE), round(line.dt * _DT)
            self.cpu_used += share * step
            self.cpu_dt += step
            self.cpu_plain += share
            self.cpu_lines += 1
            long = step >= _PEAK_STEP
            if long:
                self.cpu_peak = max(self.cpu_peak, share)
            else:
                self.short_cpu_peak = max(self.short_cpu_peak, share)
            if line.cores is not None:
                used = share * line.cores
                self.cores_used += used * step
                self.cores_dt += step
                self.cores_plain += used
                self.cores_lines += 1
                if long:
                    self.cores_peak = max(self.cores_peak, used)
                else:
                    self.short_cores_peak = max(self.short_cores_peak, used)

    def merge(self, later: RunFold) -> None:
        """`later`'s figures (of the lines after these, folded on their own) taken in."""
        if not later.seen:
            return
        self.seen = True
        if self.command is None:
            self.command, self.argc = later.command, later.argc
        if later.exit is not None:
            self.exit = later.exit
        self.cpu_used += later.cpu_used
        self.cpu_dt += later.cpu_dt
        self.cpu_plain += later.cpu_plain
        self.cpu_lines += later.cpu_lines
        self.cores_used += later.cores_used
        self.cores_dt += later.cores_dt
        self.cores_plain += later.cores_plain
        self.cores_lines += later.cores_lines
        self.cpu_peak = max(self.cpu_peak, later.cpu_peak)
        self.cores_peak = max(self.cores_peak, later.cores_peak)
        self.short_cpu_peak = max(self.short_cpu_peak, later.short_cpu_peak)
        self.short_cores_peak = max(self.short_cores_peak, later.short_cores_peak)
        self.procs_peak = max(self.procs_peak, later.procs_peak)

    def summary(self) -> RunSummary | None:
        """None when no line had the section."""
        if not self.seen:
            return None
        ended = self.exit
        return RunSummary(
            command=self.command,
            argc=self.argc,
            exit=None if ended is None else ExitSummary(ended.code, ended.signal, ended.error, ended.wall, ended.user,
                                                        ended.system, ended.max_rss),
            cpu_mean=_mean(self.cpu_used, self.cpu_dt, self.cpu_plain, self.cpu_lines, _SHARE),
            cpu_peak=_peak(self.cpu_peak, self.short_cpu_peak, _SHARE),
            cores_mean=_mean(self.cores_used, self.cores_dt, self.cores_plain, self.cores_lines, 100 * _SHARE),
            cores_peak=_peak(self.cores_peak, self.short_cores_peak, 100 * _SHARE),
            procs_peak=None if self.procs_peak < 0 else self.procs_peak,
        )


def _peak(long: int, short: int, scale: int) -> float | None:
    """The peak over the lines long enough to say, else over the others; None without a share."""
    peak = long if long >= 0 else short
    return None if peak < 0 else peak / scale


def _mean(used: int, covered: int, plain: int, lines: int, scale: int) -> float | None:
    """Weighted by `dt`; lines that cover no time at all (each `dt` 0) are averaged as they are."""
    if covered:
        return used / (scale * covered)
    return plain / (scale * lines) if lines else None
