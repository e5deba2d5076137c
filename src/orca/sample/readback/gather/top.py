"""The run's top processes (`run.top`), gathered (`section.py`) by name (docs/behaviour.md, the `process` row): per
name how many pids, the most resident memory together at one reading, CPU seconds and bytes moved, from the lines that
listed it; each point's highest memory and CPU of each name (keyed series)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orca.sample.line_format import Count, CpuSeconds, Percent, RunSample, Sample
from orca.sample.readback.distinct import DistinctCount
from orca.sample.readback.exact import ExactSum
from orca.sample.readback.gather.section import PEAK, Bounds, Column, merge_by_name

TOP_NAMES = 5
"""The summary names the `TOP_NAMES` of the highest memory peak and the `TOP_NAMES` of the most CPU seconds."""
KEPT_NAMES = 500
"""Past twice this many names, only the `KEPT_NAMES` of the highest memory peak and of the most CPU seconds are kept:
a run of thousands of differently named processes is gathered in bounded memory (a name let go that comes back counts
from there)."""


@dataclass(frozen=True, slots=True)
class ProcessSummary:
    """The run's processes of one name, from the lines' `run.top`: each field as docs/metrics.md's `--json` says
    it (`top`)."""

    name: str
    count: Count
    mem_peak: Count | None
    cpu_seconds: CpuSeconds
    """Each line's `cpu` × `cores` × `dt`, with the children they waited for."""
    read: Count
    """Each line's `read` × `dt`, and `write` × `dt`."""
    write: Count
    largest_pid: Count | None = None
    largest_rss: Count | None = None
    busiest_core_percent: Percent | None = None


class _NameFold:
    """One name's figures so far."""

    __slots__ = ("busiest", "cpu", "largest", "largest_pid", "mem_peak", "pids", "read", "write")

    def __init__(self) -> None:
        self.pids = DistinctCount()
        self.mem_peak = -1
        self.cpu, self.read, self.write = ExactSum(), ExactSum(), ExactSum()
        self.largest = self.largest_pid = -1
        """The most resident bytes one process of the name held at a reading, and its pid."""
        self.busiest = -1.0
        """The most CPU (percent of one core) one process of the name used in a line."""

    def merge(self, later: _NameFold) -> None:
        self.pids.merge(later.pids)
        self.mem_peak = max(self.mem_peak, later.mem_peak)
        if later.largest > self.largest:
            self.largest, self.largest_pid = later.largest, later.largest_pid
        self.busiest = max(self.busiest, later.busiest)
        self.cpu.merge(later.cpu)
        self.read.merge(later.read)
        self.write.merge(later.write)

    def summary(self, name: str) -> ProcessSummary:
        return ProcessSummary(name, self.pids.count(), self.mem_peak if self.mem_peak >= 0 else None,
                              self.cpu.value(), round(self.read.value()), round(self.write.value()),
                              self.largest_pid if self.largest >= 0 else None,
                              self.largest if self.largest >= 0 else None,
                              self.busiest if self.busiest >= 0 else None)


def by_name(run: RunSample, cores: int | None) -> dict[str, list[Any]]:
    """One line's `run.top` by name: per name, its processes' resident bytes together (None when none was read), CPU
    in percent of one core (None without `cores`), read and write rates, and pids."""
    named: dict[str, list[Any]] = {}
    for entry in run.top or ():
        cpu = None if cores is None else entry.cpu * cores
        held = named.get(entry.name)
        if held is None:
            named[entry.name] = [entry.rss, cpu, entry.read or 0, entry.write or 0, [str(entry.pid)]]
            continue
        if entry.rss is not None:
            held[0] = entry.rss if held[0] is None else held[0] + entry.rss
        if cpu is not None:
            held[1] = cpu if held[1] is None else held[1] + cpu
        held[2] += entry.read or 0
        held[3] += entry.write or 0
        held[4].append(str(entry.pid))
    return named


class TopSection:
    key = "top"
    columns = (Column("top_mem", PEAK), Column("top_cpu", PEAK))
    """Each point's highest resident bytes and CPU (percent of one core) of each name, at one reading."""
    keyed = True
    __slots__ = ("folds", "seen")

    def __init__(self) -> None:
        self.seen = False
        self.folds: dict[str, _NameFold] = {}

    def add(self, lines: Sequence[Sample]) -> None:
        folds = self.folds
        batch: dict[str, list[float]] = {}
        """Per name, the batch's CPU seconds, bytes read and bytes written (summed exactly once per batch)."""
        for line in lines:
            run = line.run
            if run is None or run.top is None:
                continue
            self.seen = True
            dt = line.dt
            cores = line.cores
            for entry in run.top:
                fold = folds.get(entry.name)
                if fold is None:
                    fold = folds[entry.name] = _NameFold()
                if entry.rss is not None and entry.rss > fold.largest:
                    fold.largest, fold.largest_pid = entry.rss, entry.pid
                if cores is not None and entry.cpu * cores > fold.busiest:
                    fold.busiest = entry.cpu * cores
            for name, (rss, cpu, read, write, pids) in by_name(run, cores).items():
                fold = folds[name]
                fold.pids.add_all(pids)
                if rss is not None and rss > fold.mem_peak:
                    fold.mem_peak = rss
                moved = batch.get(name)
                if moved is None:
                    moved = batch[name] = [0.0, 0.0, 0.0]
                if cpu is not None:
                    moved[0] += cpu * dt / 100
                moved[1] += read * dt
                moved[2] += write * dt
        for name, (cpu_seconds, read_bytes, write_bytes) in batch.items():
            fold = folds[name]
            fold.cpu.add(cpu_seconds)
            fold.read.add(read_bytes)
            fold.write.add(write_bytes)
        self._bound()

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        """Each stretch's highest memory and CPU of each name at one reading."""
        rows = []
        for begin, end in bounds:
            memory: dict[str, float] = {}
            cpu: dict[str, float] = {}
            for line in lines[begin:end]:
                run = line.run
                if run is None or run.top is None:
                    continue
                for name, (rss, share, _, _, _) in by_name(run, line.cores).items():
                    if rss is not None and rss > memory.get(name, -1):
                        memory[name] = rss
                    if share is not None and share > cpu.get(name, -1):
                        cpu[name] = share
            rows.append((memory, cpu))
        return rows

    def merge(self, later: TopSection) -> None:
        self.seen = self.seen or later.seen
        merge_by_name(self.folds, later.folds)
        self._bound()

    def summary(self) -> dict[str, Any]:
        """The names of the highest memory peak, then those of the most CPU seconds not among them (`TOP_NAMES` of
        each); None when no line had a `run.top`."""
        if not self.seen:
            return {"top": None}
        names = self._largest(TOP_NAMES)
        return {"top": tuple(self.folds[name].summary(name) for name in names)}

    def _largest(self, count: int) -> list[str]:
        folds = self.folds
        by_memory = sorted(folds, key=lambda name: (-folds[name].mem_peak, name))[:count]
        by_cpu = sorted(folds, key=lambda name: (-folds[name].cpu.value(), name))[:count]
        return [*by_memory, *(name for name in by_cpu if name not in by_memory)]

    def _bound(self) -> None:
        if len(self.folds) > 2 * KEPT_NAMES:
            self.folds = {name: self.folds[name] for name in self._largest(KEPT_NAMES)}
