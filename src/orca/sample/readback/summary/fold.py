"""One instance's summary, folded from its lines in one pass (docs/metrics.md): the lines of one host and
one run (one `start`) in one source.

Memory does not grow with the number of lines: percentiles and the median interval come from counts of each distinct
value (`Histogram`), sums are kept exactly (`ExactSum`), and a fold of some lines merged with the fold of the lines
after them is the fold of all of them, to the last bit (`InstanceFold.merge`), so a file can be read in parts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import sub

from orca.sample.line_format import Mem, PressureShare, Sample
from orca.sample.readback.exact import ExactSum, Histogram, add_rise
from orca.sample.readback.summary.cgroup import CgroupFold
from orca.sample.readback.summary.figures import ContainerFold, ContainerFolds, Traffic, merged_traffic
from orca.sample.readback.summary.records import (
    PERCENTILE,
    CpuSummary,
    DiskSummary,
    InstanceSummary,
    IoSummary,
    MemorySummary,
    NetSummary,
    PressureSummary,
)
from orca.sample.readback.summary.run import RunFold


@dataclass(slots=True)
class _Batch:
    """What one batch of lines holds, gathered in one loop over them (see `_gathered`)."""

    cores: int | None
    busy: list[float]
    busiest: list[float]
    mems: list[Mem]
    pressures: list[PressureShare]
    self_cpus: list[float]
    runs: list[Sample]
    """The lines with a `run` section."""
    cgroups: list[Sample]
    """The lines with a `cgroup` section."""
    disk_peak: float
    disk_path: str | None
    """The fullest file system's path, None when none in the batch was fuller than the fold's fullest."""
    io: tuple[float, float, float, float]
    """Bytes read and written over the batch, and the highest rates so far."""
    net: tuple[float, float, float, float]
    """Bytes received and sent over the batch, and the highest rates so far."""


def _gathered(lines: Sequence[Sample], fold: InstanceFold) -> _Batch:  # one loop, on purpose
    """The batch's values, each read once, in one plain loop (reading a field of a decoded line is among the cheapest
    things Python does, cheaper than taking columns out with builtins); the containers' figures go straight into
    `fold`'s. What needs every value (the percentiles, the sums) is gathered here and counted by a builtin after."""
    busy: list[float] = []
    busiest: list[float] = []
    self_cpus: list[float] = []
    mems: list[Mem] = []
    pressures: list[PressureShare] = []
    runs: list[Sample] = []
    cgroups: list[Sample] = []
    disk_peak = -1.0 if fold.disk is None else fold.disk.peak_percent
    disk_path = None
    read_total = write_total = received_total = sent_total = 0.0
    read_peak, write_peak = (0.0, 0.0) if fold.io is None else (fold.io.first_peak, fold.io.second_peak)
    received_peak, sent_peak = (0.0, 0.0) if fold.net is None else (fold.net.first_peak, fold.net.second_peak)
    containers = fold.containers.folds
    cores = fold.cores
    for line in lines:
        if line.cores is not None:
            cores = line.cores
        cpu = line.cpu
        if cpu is not None:
            busy.append(cpu.user + cpu.system + cpu.steal)
            busiest.append(cpu.busiest)
        if line.mem is not None:
            mems.append(line.mem)
        if line.disk:
            for disk in line.disk:
                used, size = disk.used, disk.used + disk.free
                # `fullness`, written out: a call per disk would be a good share of the loop. Whole numbers divided,
                # as a file system's sizes have no bound.
                if size > 0 and 100 * used / size > disk_peak:
                    disk_peak, disk_path = 100 * used / size, disk.path
        # io and net written out each, into locals: a loop over the two, or a call, cost a tenth of this loop.
        dt = line.dt
        io, net = line.io, line.net
        if io is not None:
            read, write = io.read, io.write
            read_total += read * dt
            write_total += write * dt
            if read > read_peak:
                read_peak = read
            if write > write_peak:
                write_peak = write
        if net is not None:
            received, sent = net.received, net.sent
            received_total += received * dt
            sent_total += sent * dt
            if received > received_peak:
                received_peak = received
            if sent > sent_peak:
                sent_peak = sent
        if line.pressure is not None:
            pressures.append(line.pressure)
        if line.containers:
            for entry in line.containers:
                kept = containers.get(entry.name)
                if kept is None:
                    kept = containers[entry.name] = ContainerFold()
                if entry.mem > kept.mem_peak:  # written out too: a call per entry costs as much again
                    kept.mem_peak = entry.mem
                if entry.oom_kill is not None:
                    kept.oom_kills.append(entry.oom_kill)
                if entry.throttled is not None:
                    kept.throttled.append(entry.throttled)
                if entry.mem_max is not None:
                    kept.mem_max = entry.mem_max
                if entry.pids is not None and entry.pids > kept.pids_peak:
                    kept.pids_peak = entry.pids
        if line.self_cpu is not None:
            self_cpus.append(line.self_cpu)
        if line.run is not None:
            runs.append(line)
        if line.cgroup is not None:
            cgroups.append(line)
    return _Batch(cores, busy, busiest, mems, pressures, self_cpus, runs, cgroups, disk_peak, disk_path,
                  (read_total, write_total, read_peak, write_peak),
                  (received_total, sent_total, received_peak, sent_peak))


class InstanceFold:
    """The running state of one instance's summary; `add_lines` one batch of decoded lines at a time.

    `merge` takes in the fold of the lines that follow, folded on their own (another part of the same file): the
    result is the fold of all the lines in one pass."""

    def __init__(self) -> None:
        self.lines = 0
        self.host = ""
        self.start: float | None = None
        """The lines' `start`: which run they are of (None for an older sampler's)."""
        self.cores: int | None = None
        self.first_t = math.inf
        self.last_t = -math.inf
        self.opening_t: float | None = None
        """The first line's `t`: a fold of the lines before these takes the step to it."""
        self.previous_t: float | None = None
        """The last line's `t`."""
        self.dts = Histogram(3)
        self.steps = Histogram(3)
        self.busy = Histogram(1)
        self.busiest = Histogram(1)
        self.used_peak: tuple[int, int] | None = None
        """(`used`, `total`) of the line with the most used."""
        self.swap_peak = 0
        self.rss_peak = 0
        self.used_percent_peak = 0.0
        self.disk: DiskSummary | None = None
        self.io: Traffic | None = None
        self.net: Traffic | None = None
        self.pressure_sums = [ExactSum(), ExactSum(), ExactSum()]
        self.pressure_counts = [0, 0, 0]
        self.containers = ContainerFolds()
        self.first_self_cpu: float | None = None
        """The first `self_cpu`: all of it is new CPU, unless a fold of the lines before these goes on from it."""
        self.self_cpu = ExactSum()
        """How far `self_cpu` rose after the first value."""
        self.last_self_cpu: float | None = None
        self.run = RunFold()
        self.cgroup = CgroupFold()

    def add_lines(self, lines: Sequence[Sample]) -> None:
        """A batch of lines, in the order written."""
        if not lines:
            return
        self._add_times(lines)
        batch = _gathered(lines, self)
        self.host, self.start, self.cores = lines[-1].host, lines[-1].start, batch.cores
        if batch.runs:
            self.run.add(batch.runs)
        if batch.cgroups:
            self.cgroup.add_lines(batch.cgroups)
        if batch.pressures:
            self._add_pressures(batch.pressures)
        self.busy.add_many(batch.busy)
        self.busiest.add_many(batch.busiest)
        if batch.mems:
            self._add_memory(batch.mems)
        if batch.disk_path is not None:
            self.disk = DiskSummary(batch.disk_path, batch.disk_peak)  # the first at its fullest
        if self.io is None and any(line.io is not None for line in lines):
            self.io = Traffic()
        if self.io is not None:
            self.io.add(*batch.io)
        if self.net is None and any(line.net is not None for line in lines):
            self.net = Traffic()
        if self.net is not None:
            self.net.add(*batch.net)
        self.containers.settle()
        if batch.self_cpus:
            self._add_self_cpu(batch.self_cpus)

    def _add_times(self, lines: Sequence[Sample]) -> None:
        self.lines += len(lines)
        times = [line.t for line in lines]
        self.first_t = min(self.first_t, min(times))
        self.last_t = max(self.last_t, max(times))
        if self.previous_t is None:
            self.opening_t = times[0]
        previous = times if self.previous_t is None else [self.previous_t, *times]
        self.steps.add_many(list(map(abs, map(sub, previous[1:], previous))))
        self.previous_t = times[-1]
        self.dts.add_many([line.dt for line in lines])

    def _add_memory(self, mems: list[Mem]) -> None:
        used = [mem.used for mem in mems]
        totals = [mem.total for mem in mems]
        most = max(used)
        if self.used_peak is None or most > self.used_peak[0]:
            self.used_peak = (most, totals[used.index(most)])
        if totals.count(totals[0]) == len(totals):  # one total (the usual case): the highest share is the most used's
            shares = [100.0 * most / totals[0]] if totals[0] > 0 else []
        else:
            shares = [100.0 * part / total for part, total in zip(used, totals, strict=True) if total > 0]
        self.used_percent_peak = max([self.used_percent_peak, *shares])
        self.swap_peak = max(self.swap_peak, max([mem.swap_used for mem in mems]))
        self.rss_peak = max(self.rss_peak, max([mem.rss for mem in mems]))

    def _add_pressures(self, pressures: list[PressureShare]) -> None:
        for index, shares in enumerate((
            [pressure.cpu for pressure in pressures],
            [pressure.memory for pressure in pressures],
            [pressure.io for pressure in pressures],
        )):
            present = [share for share in shares if share is not None]
            self.pressure_sums[index].add(sum(present))
            self.pressure_counts[index] += len(present)

    def _add_self_cpu(self, self_cpus: list[float]) -> None:
        if self.first_self_cpu is None:
            self.first_self_cpu = self_cpus[0]
        # A sampler that started again counts from 0.
        add_rise(self.self_cpu, self_cpus[0] if self.last_self_cpu is None else self.last_self_cpu, self_cpus)
        self.last_self_cpu = self_cpus[-1]

    def merge(self, later: InstanceFold) -> None:
        """Take in `later`: the fold of the lines that came after this fold's (of the same host), folded on their own.
        This fold becomes the fold of both parts' lines in one pass; `later` is not to be used again."""
        if later.lines == 0:
            return
        if self.previous_t is not None and later.opening_t is not None:
            self.steps.add_many([abs(later.opening_t - self.previous_t)])  # the step across the cut
        else:
            self.opening_t = later.opening_t
        self.previous_t = later.previous_t
        self.lines += later.lines
        self.host, self.start = later.host, later.start
        if later.cores is not None:
            self.cores = later.cores
        self.first_t, self.last_t = min(self.first_t, later.first_t), max(self.last_t, later.last_t)
        for histogram, theirs in ((self.dts, later.dts), (self.steps, later.steps), (self.busy, later.busy),
                                  (self.busiest, later.busiest)):
            histogram.merge(theirs)
        if later.used_peak is not None and (self.used_peak is None or later.used_peak[0] > self.used_peak[0]):
            self.used_peak = later.used_peak  # the first line with the most used, as in one pass
        self.used_percent_peak = max(self.used_percent_peak, later.used_percent_peak)
        self.swap_peak, self.rss_peak = max(self.swap_peak, later.swap_peak), max(self.rss_peak, later.rss_peak)
        if later.disk is not None and (self.disk is None or later.disk.peak_percent > self.disk.peak_percent):
            self.disk = later.disk
        self.io, self.net = merged_traffic(self.io, later.io), merged_traffic(self.net, later.net)
        for total, later_total in zip(self.pressure_sums, later.pressure_sums, strict=True):
            total.merge(later_total)
        self.pressure_counts = [mine + theirs for mine, theirs in zip(self.pressure_counts, later.pressure_counts,
                                                                        strict=True)]
        self.containers.merge(later.containers)
        if later.first_self_cpu is not None:
            if self.last_self_cpu is None:
                self.first_self_cpu = later.first_self_cpu
            else:
                add_rise(self.self_cpu, self.last_self_cpu, [later.first_self_cpu])
            self.self_cpu.merge(later.self_cpu)
            self.last_self_cpu = later.last_self_cpu
        self.run.merge(later.run)
        self.cgroup.merge(later.cgroup)

    def summary(self, name: str) -> InstanceSummary | None:
        """The summary of the lines folded so far, under `name` (the source's); None when there were none."""
        if self.lines == 0:
            return None
        median_dt = self.dts.percentile(50)
        self_cpu = self.self_cpu.value() + (self.first_self_cpu or 0.0)
        covered = self.dts.weighted_sum()
        containers, omitted, exact = self.containers.summaries()
        return InstanceSummary(
            name=name,
            host=self.host,
            start=self.start,
            cores=self.cores,
            first_t=self.first_t,
            last_t=self.last_t,
            lines=self.lines,
            gaps=self.steps.count_over(2 * median_dt),
            median_dt=median_dt,
            run=self.run.summary(),
            cgroup=self.cgroup.summary(),
            cpu=self._cpu(),
            memory=self._memory(),
            disk=self.disk,
            io=None if self.io is None else IoSummary(*self.io.figures()),
            net=None if self.net is None else NetSummary(*self.net.figures()),
            pressure=self._pressure(),
            containers=containers,
            self_cpu_seconds=self_cpu,
            overhead_percent=100.0 * self_cpu / covered if covered > 0 else None,
            containers_omitted=omitted,
            containers_omitted_estimated=not exact,
        )

    def _cpu(self) -> CpuSummary | None:
        if self.busy.total == 0:
            return None
        return CpuSummary(
            mean=self.busy.weighted_sum() / self.busy.total,
            p95=self.busy.percentile(PERCENTILE),
            max=self.busy.maximum(),
            busiest_p95=self.busiest.percentile(PERCENTILE),
        )

    def _memory(self) -> MemorySummary | None:
        if self.used_peak is None:
            return None
        return MemorySummary(total=self.used_peak[1], used_peak=self.used_peak[0],
                             used_peak_percent=self.used_percent_peak, swap_peak=self.swap_peak,
                             rss_peak=self.rss_peak)

    def _pressure(self) -> PressureSummary | None:
        if not any(self.pressure_counts):
            return None
        means = [total.value() / count if count else None
                 for total, count in zip(self.pressure_sums, self.pressure_counts, strict=True)]
        return PressureSummary(cpu=means[0], memory=means[1], io=means[2])
