"""What of its capacity one run used (docs/metrics.md, "What each run had, and what it used"): its CPUs and memory
against its cgroup's limits or its host's, and the host's own saturation, folded in one pass (`UsageSection`, a
section of the gather folded only for a fleet); with buckets, per slot of time (`gather/slots.py`) the CPU-seconds and
byte-seconds used and had, for the fleet chart."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from math import floor
from typing import Any

from orca.sample.line_format import Sample
from orca.sample.readback.exact import ExactSum, Histogram
from orca.sample.readback.gather.section import Bounds, Column
from orca.sample.readback.gather.slots import Slots

USAGE = "usage"
"""The section's key, by which a run's fold gives it (`RunFold.section`)."""
SATURATED_CPU = 90.0
"""A line whose CPU share is at least this is at its capacity."""
IDLE_CPU = 10.0
"""A line whose CPU share is over this is not idle; a line of a run's own processes, whose CPU over this percent of
one core: a run that shares its host is idle when its processes are, whatever the host's size."""
MAX_BUCKETS = 256
"""A run's buckets span fewer than twice this many slots: enough for a column each of the fleet chart."""
PERCENTILE = 95


class _Spent:
    """One slot's sums: CPUs used × `dt`, CPUs available × `dt`, bytes used × `dt`, bytes available × `dt`."""

    __slots__ = ("sums",)

    def __init__(self) -> None:
        self.sums = [0.0, 0.0, 0.0, 0.0]

    def take(self, later: _Spent) -> None:
        self.sums = [mine + theirs for mine, theirs in zip(self.sums, later.sums, strict=True)]


@dataclass(frozen=True, slots=True)
class Buckets:
    """A run's use over time: slot `first + i` (each `2^shift` ms from the Unix epoch) holds the `i`-th value of each
    sum, zero where no line fell. The sums are kept as the bytes of C doubles (8 bytes a value, where a tuple of floats
    takes 40), read as sequences of floats."""

    shift: int
    first: int
    sums: tuple[bytes, bytes, bytes, bytes]
    """CPU-seconds used, CPU-seconds available, byte-seconds used, byte-seconds available."""

    @property
    def slot_seconds(self) -> float:
        return (1 << self.shift) / 1000

    @property
    def per_slot(self) -> tuple[Sequence[float], ...]:
        """The four sums, in `sums`' order, each per slot: read as floats where they lie."""
        return tuple(memoryview(each).cast("d") for each in self.sums)


@dataclass(frozen=True, slots=True)
class Usage:
    """One run against its capacity; a figure is None when no line had what it needs."""

    cpu_limited: bool
    """Whether the CPUs are the cgroup's limit (in the newest line that had a CPU share), not the host's cores."""
    memory_limited: bool
    cpu_own: bool
    """Whether the CPU share is the run's own processes' (`run.cpu`, in the newest line that had a share), not the
    host's as a whole."""
    memory_own: bool
    """Whether the memory is the run's own processes' (`mem.rss`), not the host's `mem.used`."""
    cpu_seconds: float
    """The time covered (Σ `dt`) by the lines with a CPU share."""
    memory_seconds: float
    core_seconds_used: float | None
    core_seconds_available: float | None
    cpu_p95: float | None
    """The nearest-rank 95th percentile of the lines' CPU shares."""
    cpu_saturated_percent: float | None
    """Percent of the time covered (`dt`) in lines at `SATURATED_CPU` or more."""
    cpu_above_idle_percent: float | None
    """Percent of the time covered in lines over `IDLE_CPU` (of one core, for the run's own processes)."""
    byte_seconds_used: float | None
    byte_seconds_available: float | None
    memory_peak_percent: float | None
    """The highest share of its capacity any line's memory reached."""
    host_cpu_saturated_percent: float | None = None
    """Percent of the time covered by lines with the host's CPU share in which the host's CPUs (`cpu`, of `cores`)
    were at `SATURATED_CPU` or more: the host's, whatever the run's figures are."""
    host_memory_peak_percent: float | None = None
    """The host's `mem.used` of `mem.total` at its highest."""
    buckets: Buckets | None = None

    @property
    def cpu_percent(self) -> float | None:
        """The CPU used over the run, percent of what it had."""
        return percent_of(self.core_seconds_used, self.core_seconds_available)

    @property
    def memory_percent(self) -> float | None:
        return percent_of(self.byte_seconds_used, self.byte_seconds_available)

    @property
    def cpus(self) -> float | None:
        """The CPUs it had, on average over the time covered."""
        return None if self.core_seconds_available is None else self.core_seconds_available / self.cpu_seconds

    @property
    def memory_bytes(self) -> float | None:
        """The memory it had, on average over the time covered."""
        return None if self.byte_seconds_available is None else self.byte_seconds_available / self.memory_seconds


def percent_of(used: float | None, available: float | None) -> float | None:
    """`used` in percent of `available`; None when either is unknown or nothing was available."""
    return None if used is None or not available else 100 * used / available


class UsageSection:
    """The running state of one run's `Usage`: a section of the one gather (`readback/gather/section.py`), folded
    only for a fleet (`USAGE`), which gives the summary no field and the chart no column of its own: the fleet reads
    its `usage()`."""

    key = USAGE
    columns: tuple[Column, ...] = ()
    keyed = False

    __slots__ = ("buckets", "cpu_limited", "cpu_own", "cpu_shares", "host_memory_peak", "memory_limited",
                 "memory_own", "memory_peak", "sums")

    def __init__(self, buckets: bool = False) -> None:
        self.sums = tuple(ExactSum() for _ in range(10))
        """Σ over the lines of: CPUs used × `dt`, CPUs available × `dt`, `dt` with a CPU share, `dt` saturated, `dt`
        above idle; bytes used × `dt`, bytes available × `dt`, `dt` with memory; `dt` with the host's CPU share, `dt`
        of the host saturated."""
        self.cpu_shares = Histogram(1)
        self.memory_peak = self.host_memory_peak = -1.0
        self.cpu_limited = self.memory_limited = self.cpu_own = self.memory_own = False
        self.buckets: Slots[_Spent] | None = Slots(2 * MAX_BUCKETS - 1) if buckets else None

    def add(self, lines: Sequence[Sample]) -> None:  # one loop, on purpose
        """The next lines of the run: each line's CPU and memory against its capacity read once, into locals, in one
        plain loop (a call per line would cost as much again); the sums taken in once per batch."""
        cores_used = cores_available = cpu_dt = saturated_dt = above_idle_dt = 0.0
        memory_used = memory_available = memory_dt = host_cpu_dt = host_saturated_dt = 0.0
        memory_peak, host_memory_peak = self.memory_peak, self.host_memory_peak
        cpu_limited, memory_limited, cpu_own, memory_own = (self.cpu_limited, self.memory_limited, self.cpu_own,
                                                            self.memory_own)
        shares: list[float] = []
        buckets = self.buckets is not None
        cpu_slots: list[tuple[float, float, float, float]] = []
        """With buckets: each line's (CPUs used, CPUs available, `dt`, `t`), and the same of its bytes."""
        memory_slots: list[tuple[float, float, float, float]] = []
        share: float | None
        capacity: float | None
        for line in lines:
            dt, group, run, cpu, mem = line.dt, line.cgroup, line.run, line.cpu, line.mem
            host_share = None if cpu is None or not line.cores else cpu.user + cpu.system + cpu.steal
            if host_share is not None:
                host_cpu_dt += dt
                if host_share >= SATURATED_CPU:
                    host_saturated_dt += dt
            if mem is not None and mem.total and 100 * mem.used / mem.total > host_memory_peak:
                host_memory_peak = 100 * mem.used / mem.total
            own = False
            if group is not None and group.cpu is not None and group.cpu_max:
                share, capacity, cpu_limited, cpu_own = group.cpu, group.cpu_max, True, False
            elif run is not None:  # the run's own, or none in this line: never the host's in a run's row
                capacity = line.cores
                share = None if run.cpu is None or not capacity else run.cpu
                if share is not None:
                    cpu_limited, cpu_own = False, True
                own = True
            else:
                share, capacity = host_share, line.cores
                if share is not None:
                    cpu_limited = cpu_own = False
            if share is not None and capacity:
                shares.append(share)
                cores_used += share * capacity * dt
                cores_available += capacity * dt
                cpu_dt += dt
                if share >= SATURATED_CPU:
                    saturated_dt += dt
                if (share * capacity if own else share) > IDLE_CPU:
                    above_idle_dt += dt
                if buckets:
                    cpu_slots.append((share * capacity / 100, capacity, dt, line.t))
            if group is not None and group.mem is not None and group.mem_max:
                used, total, memory_limited, memory_own = group.mem, group.mem_max, True, False
            else:
                if mem is None or not mem.total:
                    continue
                used, total, memory_limited, memory_own = (mem.rss, mem.total, False, True) if run is not None \
                    else (mem.used, mem.total, False, False)
            memory_used += used * dt
            memory_available += total * dt
            memory_dt += dt
            if 100 * used / total > memory_peak:
                memory_peak = 100 * used / total
            if buckets:
                memory_slots.append((used, total, dt, line.t))
        for kept, term in zip(self.sums, (cores_used / 100, cores_available, cpu_dt, saturated_dt, above_idle_dt,
                                          memory_used, memory_available, memory_dt, host_cpu_dt, host_saturated_dt),
                              strict=True):
            kept.add(term)
        self.cpu_shares.add_many(shares)
        self.memory_peak, self.cpu_limited, self.memory_limited = memory_peak, cpu_limited, memory_limited
        self.cpu_own, self.memory_own, self.host_memory_peak = cpu_own, memory_own, host_memory_peak
        if buckets:
            self._bucket(cpu_slots, 0)
            self._bucket(memory_slots, 2)

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        """No column for any stretch: the fleet chart draws the buckets."""
        return [()] * len(bounds)

    def _bucket(self, figures: Sequence[tuple[float, float, float, float]], first: int) -> None:
        """Each line's (used, available, `dt`, `t`) spread over the time it covers, from `t - dt` to `t`: into the
        sums `first` and `first + 1` of each slot it overlaps, in proportion."""
        slots = self.buckets
        assert slots is not None
        held = slots.held
        for used, available, dt, t in figures:
            end = t * 1000
            begin = end - dt * 1000
            # Rounded down, as the slots count: `int` would round a time before the epoch up, into the slot after its
            # own, and lose the part of the line before that slot.
            begin_ms, end_ms = floor(begin), floor(end)
            low, high = begin_ms >> slots.shift, end_ms >> slots.shift
            spent = held.get(low) if low == high else None
            if spent is not None:  # the usual case: within one slot that holds some already
                sums = spent.sums
                sums[first] += used * dt
                sums[first + 1] += available * dt
                continue
            slots.fit(begin_ms, end_ms)  # the slots as long as they need to be for both ends
            # Made longer, the slots are a new dict keyed by the new slots: the one read above is no longer theirs.
            held = slots.held
            length = 1 << slots.shift
            low, high = begin_ms >> slots.shift, end_ms >> slots.shift
            for slot in range(low, high + 1):
                seconds = (min(end, (slot + 1) * length) - max(begin, slot * length)) / 1000 if low < high else dt
                sums = slots.put(slot, _Spent()).sums
                sums[first] += used * seconds
                sums[first + 1] += available * seconds

    def merge(self, later: UsageSection) -> None:
        """Take in `later`, the fold of the lines after these (another part of the same file); `later` is not to be
        used again."""
        for kept, theirs in zip(self.sums, later.sums, strict=True):
            kept.merge(theirs)
        self.cpu_shares.merge(later.cpu_shares)
        self.memory_peak = max(self.memory_peak, later.memory_peak)
        self.host_memory_peak = max(self.host_memory_peak, later.host_memory_peak)
        # Whether the newest line with a CPU share (memory) was of a cgroup's limit, or the run's own: a line of `dt`
        # 0 counts too.
        if later.cpu_shares.total:
            self.cpu_limited, self.cpu_own = later.cpu_limited, later.cpu_own
        if later.memory_peak >= 0:
            self.memory_limited, self.memory_own = later.memory_limited, later.memory_own
        if self.buckets is not None and later.buckets is not None:
            self.buckets.align(later.buckets)
            for slot, spent in later.buckets.in_order():
                self.buckets.put(slot, spent)

    def summary(self) -> dict[str, Any]:
        """No field of the summary: a run's own summary is the same whether or not it is of a fleet."""
        return {}

    def usage(self) -> Usage:
        (cores_used, cores_available, cpu_dt, saturated_dt, above_idle_dt, memory_used, memory_available, memory_dt,
         host_cpu_dt, host_saturated_dt) = (each.value() for each in self.sums)
        return Usage(
            cpu_limited=self.cpu_limited,
            memory_limited=self.memory_limited,
            cpu_own=self.cpu_own,
            memory_own=self.memory_own,
            cpu_seconds=cpu_dt,
            memory_seconds=memory_dt,
            core_seconds_used=cores_used if cpu_dt > 0 else None,
            core_seconds_available=cores_available if cpu_dt > 0 else None,
            cpu_p95=self.cpu_shares.percentile(PERCENTILE) if self.cpu_shares.total else None,
            cpu_saturated_percent=100 * saturated_dt / cpu_dt if cpu_dt > 0 else None,
            cpu_above_idle_percent=100 * above_idle_dt / cpu_dt if cpu_dt > 0 else None,
            byte_seconds_used=memory_used if memory_dt > 0 else None,
            byte_seconds_available=memory_available if memory_dt > 0 else None,
            memory_peak_percent=self.memory_peak if self.memory_peak >= 0 else None,
            host_cpu_saturated_percent=100 * host_saturated_dt / host_cpu_dt if host_cpu_dt > 0 else None,
            host_memory_peak_percent=self.host_memory_peak if self.host_memory_peak >= 0 else None,
            buckets=None if self.buckets is None or not self.buckets.held else _buckets(self.buckets),
        )


def _buckets(slots: Slots[_Spent]) -> Buckets:
    """The slots' sums as C doubles, from the first slot to the last, zero where no line fell."""
    empty = (0.0, 0.0, 0.0, 0.0)
    spent = [slots.held[slot].sums if slot in slots.held else empty for slot in range(slots.low, slots.high + 1)]
    first, second, third, fourth = (array("d", column).tobytes() for column in zip(*spent, strict=True))
    return Buckets(slots.shift, slots.low, (first, second, third, fourth))
