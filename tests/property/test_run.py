"""Properties of the run's CPU (docs/behaviour.md §3.12): compute/run.py.

The oracle is a simulated process tree whose every tick of CPU is known: processes fork, run, end and are waited
for by their parents (whose children's counter then takes in their whole time, as the kernel's does), and readings
are taken at drawn moments. What the lines count, added up, is exactly what the processes ran between the first
and the last reading: nothing lost to a child that ended between two readings, nothing counted twice when a child
seen for several lines is reaped. And whatever two readings are, the CPU is never negative nor above 100.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.run import RunReading, run_cpu, run_ticks
from orca.sample.parse.pid_stat import ProcessTimes

ROOT = 100


@dataclass
class Process:
    parent: int
    start: int
    own: int = 0
    children: int = 0
    """What the kernel's cutime + cstime hold: the whole time of the children it waited for."""


@dataclass
class Machine:
    clock: int = 0
    next_pid: int = ROOT + 1
    processes: dict[int, Process] = field(default_factory=lambda: {ROOT: Process(parent=1, start=0)})
    used: int = 0
    """Every tick any process of the run ran, so far."""

    def live(self) -> list[int]:
        return sorted(self.processes)

    def act(self, action: tuple[str, int, int]) -> None:
        self.clock += 1
        kind, which, ticks = action
        pid = self.live()[which % len(self.processes)]
        if kind == "run":
            self.processes[pid].own += ticks
            self.used += ticks
        elif kind == "fork":
            self.processes[self.next_pid] = Process(parent=pid, start=self.clock)
            self.next_pid += 1
        else:  # "end": one that has no children left ends, and its parent waits for it
            parents = {p.parent for p in self.processes.values()}
            leaves = [leaf for leaf in self.live() if leaf != ROOT and leaf not in parents]
            if leaves:
                ended = self.processes.pop(leaves[which % len(leaves)])
                self.processes[ended.parent].children += ended.own + ended.children

    def reading(self) -> RunReading:
        processes: dict[int, ProcessTimes] = {
            pid: (p.start, p.parent, p.own, p.children) for pid, p in self.processes.items()
        }
        return RunReading(self.clock * 10**7, self.clock, 100, processes, len(processes))


actions = st.tuples(st.sampled_from(["run", "run", "fork", "end", "read"]), st.integers(0, 50), st.integers(0, 40))
steps = st.lists(actions, max_size=80)


@given(steps)
def test_the_lines_add_up_to_what_the_run_used(history: list[tuple[str, int, int]]) -> None:
    machine = Machine()
    readings = [machine.reading()]
    used_at_first = machine.used
    for action in history:
        if action[0] == "read":
            readings.append(machine.reading())
        else:
            machine.act(action)
    readings.append(machine.reading())
    counted = [run_ticks(a, b) for a, b in itertools.pairwise(readings)]
    assert all(ticks >= 0 for ticks in counted)
    assert sum(counted) == machine.used - used_at_first


times = st.tuples(st.integers(0, 2**20), st.integers(0, 300), st.integers(0, 2**40), st.integers(0, 2**40))
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
def test_never_negative_never_over_all_the_cores(prev: RunReading, cur: RunReading, cores: int) -> None:
    assert run_ticks(prev, cur) >= 0
    assert 0.0 <= run_cpu(prev, cur, cores) <= 100.0
