"""The run's own processes, gathered (`section.py`) from every line's `run` (docs/behaviour.md §3.12, §11.1): their
CPU in percent of one core (`run.cpu` × `cores`: 100 is one core busy, as `top`, psrecord and duct count it), the
most of them at once, their own disk I/O (`run.io`: bytes moved each way and the highest rates), the command from
the first line of a `-- COMMAND` and how it ended from the last; each point's mean CPU and I/O rates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from msgspec.structs import astuple

from orca.sample.line_format import CommandExit, Count, CpuSeconds, Percent, Sample, Seconds
from orca.sample.readback.exact import ExactSum
from orca.sample.readback.gather.section import MEAN, Bounds, Column
from orca.sample.readback.gather.traffic import IoSummary, Moved

PEAK_DT = 0.1
"""Seconds a line must cover for its `run.cpu` to count towards the peak: the kernel counts a process's time in clock
ticks (10 ms on most Linux), so a shorter line (such as the one written as COMMAND ends just after another) holds a
handful of them and can read far over what ran. Its share still counts in the mean, weighted by its `dt`."""


@dataclass(frozen=True, slots=True)
class ExitSummary:
    """How `-- COMMAND` ended: its last line's `run.exit` (docs/line.md), its fields in the same order."""

    code: Count | None
    signal: Count | None
    error: str | None
    wall: Seconds | None
    user: CpuSeconds | None
    system: CpuSeconds | None
    max_rss: Count | None


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The run's own processes (`--pid`, `--match`, `-- COMMAND`), from the lines' `run` sections: each field as
    docs/metrics.md's `--json` says it."""

    command: tuple[str, ...] | None
    argc: Count | None
    exit: ExitSummary | None
    cpu_mean_core_percent: Percent | None
    """Over the time the lines with a `run.cpu` and `cores` cover, each weighted by its `dt`."""
    cpu_peak_core_percent: Percent | None
    """The highest of a line covering at least `PEAK_DT` (of any line, when none does)."""
    procs_peak: Count | None
    io: IoSummary | None = None
    io_lines: Count = 0
    io_unknown_lines: Count = 0


class RunSection:
    key = "run"
    columns = (Column("run_cpu", MEAN, tenths=True), Column("run_io_read", MEAN), Column("run_io_write", MEAN))
    keyed = False
    __slots__ = ("argc", "command", "covered", "exit", "io", "io_lines", "io_unknown", "peak", "procs_peak", "seen",
                 "short_peak", "used")

    def __init__(self) -> None:
        self.seen = False
        self.command: tuple[str, ...] | None = None
        self.argc: int | None = None
        self.exit: CommandExit | None = None
        self.used, self.covered = ExactSum(), ExactSum()
        """Σ `cpu` × `cores` × `dt` and Σ `dt` over the lines with both."""
        self.peak = self.short_peak = -1.0
        """The highest `cpu` × `cores` of a line covering at least `PEAK_DT`, and of the lines that cover less."""
        self.procs_peak = -1
        self.io = Moved()
        """Σ `io.read` × `dt` and Σ `io.write` × `dt`: bytes moved, and the highest rates."""
        self.io_lines = self.io_unknown = 0
        """The lines with a `run.cpu`, and those of them without a `run.io`."""

    def add(self, lines: Sequence[Sample]) -> None:
        command, argc, ended, procs_peak = self.command, self.argc, self.exit, self.procs_peak
        peak, short_peak = self.peak, self.short_peak
        read_peak, write_peak = self.io.first_peak, self.io.second_peak
        used = covered = read_total = write_total = 0.0
        seen = io_seen = False
        io_lines = io_unknown = 0
        for line in lines:
            run = line.run
            if run is None:
                continue
            seen = True
            if run.command is not None and command is None:
                command, argc = run.command, run.argc
            if run.exit is not None:
                ended = run.exit
            if run.procs is not None and run.procs > procs_peak:
                procs_peak = run.procs
            io = run.io
            if run.cpu is not None:
                io_lines += 1
                io_unknown += io is None
            if io is not None:
                io_seen = True
                read_total += io.read * line.dt
                write_total += io.write * line.dt
                if io.read > read_peak:
                    read_peak = io.read
                if io.write > write_peak:
                    write_peak = io.write
            if run.cpu is None or line.cores is None:
                continue
            share, dt = run.cpu * line.cores, line.dt
            used += share * dt
            covered += dt
            if dt >= PEAK_DT:
                if share > peak:
                    peak = share
            elif share > short_peak:
                short_peak = share
        self.io_lines += io_lines
        self.io_unknown += io_unknown
        if seen:
            self.seen, self.command, self.argc, self.exit, self.procs_peak = True, command, argc, ended, procs_peak
            self.peak, self.short_peak = peak, short_peak
            self.used.add(used)
            self.covered.add(covered)
        if io_seen:
            self.io.took(read_total, write_total, read_peak, write_peak)

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        """Each stretch's CPU in percent of one core, and its read and write rates, where the lines say them."""
        rows = []
        for begin, end in bounds:
            total = 0.0
            count = read = write = moved = 0
            for line in lines[begin:end]:
                run = line.run
                if run is None:
                    continue
                if run.cpu is not None and line.cores is not None:
                    total += run.cpu * line.cores
                    count += 1
                if run.io is not None:
                    read += run.io.read
                    write += run.io.write
                    moved += 1
            rows.append((total, count, read, moved, write, moved))
        return rows

    def merge(self, later: RunSection) -> None:
        if not later.seen:
            return
        self.seen = True
        if self.command is None:
            self.command, self.argc = later.command, later.argc
        if later.exit is not None:
            self.exit = later.exit
        self.used.merge(later.used)
        self.covered.merge(later.covered)
        self.peak = max(self.peak, later.peak)
        self.short_peak = max(self.short_peak, later.short_peak)
        self.procs_peak = max(self.procs_peak, later.procs_peak)
        self.io_lines += later.io_lines
        self.io_unknown += later.io_unknown
        self.io.merge(later.io)

    def summary(self) -> dict[str, Any]:
        if not self.seen:
            return {"run": None}
        ended = self.exit
        covered = self.covered.value()
        highest = max(self.peak, self.short_peak)
        # Each term was rounded as it was made: a mean is taken back to the highest of its terms.
        mean = min(highest, self.used.value() / covered) if covered > 0 else None
        peak = self.peak if self.peak >= 0 else self.short_peak
        return {"run": RunSummary(
            command=self.command,
            argc=self.argc,
            exit=None if ended is None else ExitSummary(*astuple(ended)),
            cpu_mean_core_percent=mean,
            cpu_peak_core_percent=peak if peak >= 0 else None,
            procs_peak=self.procs_peak if self.procs_peak >= 0 else None,
            io=self.io.record(IoSummary),
            io_lines=self.io_lines,
            io_unknown_lines=self.io_unknown,
        )}
