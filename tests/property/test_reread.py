"""Properties of `read_again` (compute/reread.py): which kept processes' `stat` a line reads again.

A model of processes stands in for the kernel: each has its own CPU ticks, its waited-for children's, and how many
threads; its `schedstat` moves exactly when its main thread runs (sched-stats.rst: the time spent on a CPU), and
its `stat` changes only when one of its threads runs (proc(5): utime, stime, cutime, cstime; the children's
counters move when it waits for a child, which it does running). Lines of such a model, each `stat` taken from the
last reading unless `read_again` names it, must give every line's `stat` files exactly as reading them all would.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.reread import read_again


@dataclass
class Process:
    pid: int
    threads: int
    own: int = 0
    children: int = 0
    main_ran: int = 0

    def stat(self) -> bytes:
        return f"{self.pid} (worker) S 1 {self.own} {self.children} {self.threads}".encode()

    def schedstat(self) -> bytes:
        return f"{self.main_ran * 1000} 0 {self.main_ran}".encode()


# One step of one process: nothing ran; its main thread ran (maybe waiting for a child: its children's ticks grow);
# another of its threads ran (which its schedstat does not show); or a thread started or ended.
events = st.sampled_from(["idle", "main", "main-reaps", "other-thread", "thread-starts", "thread-ends"])
trees = st.lists(st.integers(1, 3), min_size=1, max_size=8)
lines = st.lists(st.lists(events, min_size=8, max_size=8), min_size=1, max_size=12)


def step(process: Process, event: str) -> None:
    if event in ("main", "main-reaps"):
        process.main_ran += 1
        process.own += 3
        process.children += 7 if event == "main-reaps" else 0
    elif event == "other-thread" and process.threads > 1:
        process.own += 2
    elif event == "thread-starts":
        process.threads += 1  # the thread is made by a thread that runs: the main one here
        process.main_ran += 1
    elif event == "thread-ends" and process.threads > 1:
        process.threads -= 1


@given(trees, lines)
def test_the_stat_files_taken_again_are_those_reading_every_one_would_give(
    threads: list[int], steps: list[list[str]]
) -> None:
    processes = [Process(pid, count) for pid, count in enumerate(threads, start=100)]
    pids = [process.pid for process in processes]
    kept = [process.stat() for process in processes]
    ran_before = [process.schedstat() for process in processes]
    # The processes with more than one thread, as the walk last found them: a thread that starts is a task the host
    # creates, which the walk always sees; one that ends may be seen a line late, which only reads more.
    threaded = {process.pid for process in processes if process.threads > 1}
    for line in steps:
        for process, event in zip(processes, line, strict=False):
            step(process, event)
            if process.threads > 1:
                threaded.add(process.pid)
        ran = [process.schedstat() for process in processes]
        again = read_again(pids, ran, ran_before, threaded)
        for place in again:
            kept[place] = processes[place].stat()
        assert kept == [process.stat() for process in processes]
        # And no more than that: a process with one thread whose schedstat did not move is never read again.
        assert all(now != before or pid in threaded for place, (pid, now, before) in enumerate(
            zip(pids, ran, ran_before, strict=True)) if place in again)
        ran_before = ran
        threaded = {process.pid for process in processes if process.threads > 1}


@given(trees)
def test_without_an_earlier_reading_every_process_is_read(threads: list[int]) -> None:
    pids = list(range(100, 100 + len(threads)))
    assert read_again(pids, [b"1 0 1"] * len(pids), None, set()) == list(range(len(pids)))


@given(trees, st.sets(st.integers(100, 107)))
def test_an_idle_tree_reads_only_its_processes_with_more_threads(threads: list[int], threaded: set[int]) -> None:
    pids = list(range(100, 100 + len(threads)))
    ran = [f"{pid} 0 1".encode() for pid in pids]
    assert read_again(pids, ran, list(ran), threaded) == [place for place, pid in enumerate(pids) if pid in threaded]
