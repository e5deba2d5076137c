"""What a run's lines say of the run itself (docs/behaviour.md §3.12, §11.1): its processes' CPU and count from every
line's `run`, the command from the first line of a `-- COMMAND`, and how it ended from the last.

The sums are taken in exactly once per batch of lines (`ExactSum`), so a file folded in parts and merged gives exactly
the figures of one fold over it all, read in the same batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orca.sample.line_format import CommandExit, Sample
from orca.sample.readback.exact import ExactSum, mean_share

PEAK_DT = 0.1
"""Seconds a line must cover for its `run.cpu` to count towards the peak: the kernel counts a process's time in clock
ticks (10 ms on most Linux), so a shorter line (such as the one written as COMMAND ends just after another) holds a
handful of them and can read far over what ran. Its share still counts in the mean, weighted by its `dt`."""

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
    """Percent of all cores, over the time the lines with a `run.cpu` cover (each weighted by its `dt`); None when
    they cover none."""
    cpu_peak: float | None
    """The highest `run.cpu` of a line covering at least `PEAK_DT` (of any line, when none does)."""
    cores_mean: float | None
    """The same mean in CPUs (`run.cpu` / 100 × `cores`): 1.0 is one core busy, as `top` shows 100%."""
    cores_peak: float | None
    procs_peak: int | None
    """The most processes the run had at a reading."""


class RunFold:
    """The figures of the `run` sections of one run's lines, in the order of the lines."""

    __slots__ = ("argc", "command", "cores_dt", "cores_peak", "cores_used", "cpu_dt", "cpu_peak", "cpu_used", "exit",
                 "procs_peak", "seen", "short_cores_peak", "short_cpu_peak")

    def __init__(self) -> None:
        self.seen = False
        self.command: tuple[str, ...] | None = None
        self.argc: int | None = None
        self.exit: CommandExit | None = None
        self.cpu_used, self.cpu_dt = ExactSum(), ExactSum()
        """Σ `cpu` × `dt` and Σ `dt` over the lines with a `run.cpu`."""
        self.cores_used, self.cores_dt = ExactSum(), ExactSum()
        """Σ `cpu` × `cores` × `dt` and Σ `dt` over those that also have `cores`."""
        self.cpu_peak = self.cores_peak = -1.0
        """The highest `cpu` and `cpu` × `cores` of a line covering at least `PEAK_DT`."""
        self.short_cpu_peak = self.short_cores_peak = -1.0
        """The same over the lines that cover less."""
        self.procs_peak = -1

    def add(self, lines: Sequence[Sample]) -> None:  # one loop, on purpose
        """Lines in the order written, those without a `run` section passed over: one plain loop, its figures in
        locals (a call or an attribute written per line would cost as much again); the sums taken in exactly once per
        batch."""
        seen, command, argc, ended, procs_peak = self.seen, self.command, self.argc, self.exit, self.procs_peak
        cpu_peak, cores_peak = self.cpu_peak, self.cores_peak
        short_cpu_peak, short_cores_peak = self.short_cpu_peak, self.short_cores_peak
        cpu_used = cpu_dt = cores_used = cores_dt = 0.0
        for line in lines:
            run = line.run
            if run is None:
                continue
            seen = True
            if run.command is not None and command is None:
                command, argc = run.command, run.argc
            if run.exit is not None:
                ended = run.exit
            procs, cpu = run.procs, run.cpu
            if procs is not None and procs > procs_peak:
                procs_peak = procs
            if cpu is None:
                continue
            dt, cores = line.dt, line.cores
            cpu_used += cpu * dt
            cpu_dt += dt
            long = dt >= PEAK_DT
            if long:
                if cpu > cpu_peak:
                    cpu_peak = cpu
            elif cpu > short_cpu_peak:
                short_cpu_peak = cpu
            if cores is not None:
                used = cpu * cores
                cores_used += used * dt
                cores_dt += dt
                if long:
                    if used > cores_peak:
                        cores_peak = used
                elif used > short_cores_peak:
                    short_cores_peak = used
        self.seen, self.command, self.argc, self.exit, self.procs_peak = seen, command, argc, ended, procs_peak
        self.cpu_peak, self.cores_peak = cpu_peak, cores_peak
        self.short_cpu_peak, self.short_cores_peak = short_cpu_peak, short_cores_peak
        for total, term in ((self.cpu_used, cpu_used), (self.cpu_dt, cpu_dt), (self.cores_used, cores_used),
                            (self.cores_dt, cores_dt)):
            total.add(term)

    def merge(self, later: RunFold) -> None:
        """`later`'s figures (of the lines after these, folded on their own) taken in."""
        if not later.seen:
            return
        self.seen = True
        if self.command is None:
            self.command, self.argc = later.command, later.argc
        if later.exit is not None:
            self.exit = later.exit
        for total, theirs in ((self.cpu_used, later.cpu_used), (self.cpu_dt, later.cpu_dt),
                              (self.cores_used, later.cores_used), (self.cores_dt, later.cores_dt)):
            total.merge(theirs)
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
        cores_covered = self.cores_dt.value()
        cpu_peak = self.cpu_peak if self.cpu_peak >= 0 else self.short_cpu_peak
        cores_peak = self.cores_peak if self.cores_peak >= 0 else self.short_cores_peak
        return RunSummary(
            command=self.command,
            argc=self.argc,
            exit=None if ended is None else ExitSummary(ended.code, ended.signal, ended.error, ended.wall, ended.user,
                                                        ended.system, ended.max_rss),
            cpu_mean=mean_share(self.cpu_used, self.cpu_dt),
            cpu_peak=cpu_peak if cpu_peak >= 0 else None,
            cores_mean=self.cores_used.value() / (100 * cores_covered) if cores_covered > 0 else None,
            cores_peak=cores_peak / 100 if cores_peak >= 0 else None,
            procs_peak=self.procs_peak if self.procs_peak >= 0 else None,
        )
