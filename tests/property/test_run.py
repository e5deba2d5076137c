"""Properties of the run's CPU and disk I/O (docs/behaviour.md §3.12): compute/run.py.

The oracle is a simulated process tree whose every tick of CPU and every byte of I/O is known: processes fork, run,
write, end and are waited for by their parents (whose children's ticks then take in their whole time, and whose
I/O their whole I/O, as the kernel's counters do), and readings are taken at drawn moments. What the lines count,
added up, is exactly what the processes ran and wrote between the first and the last reading: nothing lost to a
child that ended between two readings, nothing counted twice when a child seen for several lines is reaped; and
each line's figure is the sum of its processes'. Whatever two readings are, the CPU is never negative nor above
100.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.build import SHORTEST_DT
from orca.sample.compute.cpu import share_of_cores
from orca.sample.compute.run import run_section, run_use
from orca.sample.compute.run_reading import ProcessCounters, RunReading
from orca.sample.line_format import MOST_PERCENT

ROOT = 100


@dataclass
class Process:
    parent: int
    start: int
    own: int = 0
    children: int = 0
    """What the kernel's cutime + cstime hold: the whole time of the children it waited for."""
    written: int = 0
    """What its `write_bytes` holds: its own and the children's it waited for."""


@dataclass
class Machine:
    clock: int = 0
    next_pid: int = ROOT + 1
    processes: dict[int, Process] = field(default_factory=lambda: {ROOT: Process(parent=1, start=0)})
    used: int = 0
    """Every tick any process of the run ran, so far."""
    wrote: int = 0
    """Every byte any process of the run wrote, so far."""

    def live(self) -> list[int]:
        return sorted(self.processes)

    def act(self, action: tuple[str, int, int]) -> None:
        self.clock += 1
        kind, which, ticks = action
        pid = self.live()[which % len(self.processes)]
        if kind == "run":
            self.processes[pid].own += ticks
            self.used += ticks
        elif kind == "write":
            self.processes[pid].written += ticks * 4096
            self.wrote += ticks * 4096
        elif kind == "fork":
            self.processes[self.next_pid] = Process(parent=pid, start=self.clock)
            self.next_pid += 1
        else:  # "end": one that has no children left ends, and its parent waits for it
            parents = {p.parent for p in self.processes.values()}
            leaves = [leaf for leaf in self.live() if leaf != ROOT and leaf not in parents]
            if leaves:
                ended = self.processes.pop(leaves[which % len(leaves)])
                self.processes[ended.parent].children += ended.own + ended.children
                self.processes[ended.parent].written += ended.written

    def reading(self) -> RunReading:
        processes: dict[int, ProcessCounters] = {
            pid: (p.start, p.parent, p.own, p.children, (0, p.written)) for pid, p in self.processes.items()
        }
        return RunReading(self.clock * 10**7, self.clock, 100, processes, len(processes))


def replayed(history: list[tuple[str, int, int]]) -> tuple[Machine, list[RunReading], int, int]:
    """The machine after `history`, its readings (the first, one per "read", the last), and what it had used and
    written at the first."""
    machine = Machine()
    readings = [machine.reading()]
    used_at_first, wrote_at_first = machine.used, machine.wrote
    for action in history:
        if action[0] == "read":
            readings.append(machine.reading())
        else:
            machine.act(action)
    readings.append(machine.reading())
    return machine, readings, used_at_first, wrote_at_first


actions = st.tuples(
    st.sampled_from(["run", "run", "write", "fork", "end", "read"]), st.integers(0, 50), st.integers(0, 40)
)
steps = st.lists(actions, max_size=80)


@given(steps)
def test_the_lines_add_up_to_what_the_run_used(history: list[tuple[str, int, int]]) -> None:
    machine, readings, used_at_first, wrote_at_first = replayed(history)
    counted = [run_use(a, b) for a, b in itertools.pairwise(readings)]
    assert all(use.ticks >= 0 and use.io is not None and min(use.io) >= 0 for use in counted)
    assert sum(use.ticks for use in counted) == machine.used - used_at_first
    assert sum(use.io[1] for use in counted if use.io is not None) == machine.wrote - wrote_at_first
    for use in counted:  # each line's figures are its processes' (none here leaves the run alive)
        assert use.ticks == sum(ticks for ticks, _ in use.by_process.values())
        assert use.io == tuple(map(sum, zip((0, 0), *(io for _, io in use.by_process.values() if io), strict=True)))


@given(steps, st.integers(1, 64))
def test_the_lines_cpu_times_their_dt_adds_up_to_what_the_run_used(history: list[tuple[str, int, int]],
                                                                   cores: int) -> None:
    """As a reader adds them: each line's `run.cpu` (one decimal) × `cores` × `dt` (written to the millisecond, at
    least one), however short the line and whatever a reaped child brought into it."""
    machine, readings, used_at_first, _ = replayed(history)
    total = bound = 0.0
    for prev, cur in itertools.pairwise(readings):
        dt = round(max((cur.at_ns - prev.at_ns) / 1e9, SHORTEST_DT), 3)
        cpu = run_section(prev, cur, cores, seconds=dt).cpu
        assert cpu is not None
        total += round(cpu, 1) * cores * dt / 100
        bound += 0.05 * cores * dt / 100  # half the last decimal of each line's figure
    assert total == pytest.approx((machine.used - used_at_first) / 100, abs=bound + 1e-9)


io = st.none() | st.tuples(st.integers(0, 2**50), st.integers(0, 2**50))
times = st.tuples(st.integers(0, 2**20), st.integers(0, 300), st.integers(0, 2**40), st.integers(0, 2**40), io)
readings = st.builds(
    RunReading,
    st.integers(0, 2**40),
    st.integers(0, 2**21),
    st.sampled_from([100, 1_000_000]),
    st.dictionaries(st.integers(1, 300), times, max_size=8),
    st.integers(0, 8),
    st.dictionaries(st.integers(1, 300), times, max_size=3),
)


@given(readings, readings, st.integers(1, 256))
def test_never_negative_and_the_share_gives_the_ticks_back(prev: RunReading, cur: RunReading, cores: int) -> None:
    use = run_use(prev, cur)
    assert use.ticks >= 0
    assert use.io is None or min(use.io) >= 0
    assert all(ticks >= 0 and (io is None or min(io) >= 0) for ticks, io in use.by_process.values())
    seconds = max((cur.at_ns - prev.at_ns) / 1e9, 0.001)
    share = share_of_cores(use.ticks, seconds, cur.ticks_per_second, cores)
    assert 0.0 <= share <= MOST_PERCENT
    if share < MOST_PERCENT:  # not held to all the cores: times the interval and the cores, it is the ticks
        assert share * seconds * cores * cur.ticks_per_second / 100 == pytest.approx(use.ticks)
