"""`run.top` (docs/behaviour.md §3.12): which of the run's processes a line names, and by what name
(compute/top.py). The figures are worked out by hand: 100 ticks a second, 1 s between the readings, 2 cores, so
a process's `cpu` is its ticks / 2."""

from __future__ import annotations

import pytest

from orca.sample.compute.run_reading import ProcessCounters, ProcessUse, RunReading
from orca.sample.compute.top import needs_arguments, process_name, top_processes

MIB = 1 << 20


def current(resident: dict[int, int], unreadable_io: frozenset[int] = frozenset()) -> RunReading:
    """A reading of the processes `resident` names (pid -> resident bytes), each named `p<pid>`."""
    processes: dict[int, ProcessCounters] = {
        pid: (0, 1, 0, 0, None if pid in unreadable_io else (0, 0)) for pid in resident
    }
    names = {pid: f"p{pid}" for pid in resident}
    return RunReading(10**9, 100, 100, processes, len(processes), rss_bytes=sum(resident.values()),
                      resident=resident, names=names)


def test_the_largest_the_busiest_and_the_most_io_each_once() -> None:
    """Ten processes. By memory: 1 (90 MiB), 2 (80), 3 (70). The busiest of the others: 4 (50 ticks), 5 (40), 6
    (30); 3 (60) is listed already, and 2 (10) is. The most I/O of the rest: 7 (5 MiB), 8 (1 MiB); 4 (4 MiB) is
    listed. Memory first, largest first, then the busiest, then the most I/O."""
    resident = {1: 90 * MIB, 2: 80 * MIB, 3: 70 * MIB, 4: 10 * MIB, 5: 9 * MIB, 6: 8 * MIB, 7: 7 * MIB,
                8: 6 * MIB, 9: 5 * MIB, 10: 4 * MIB}
    use: dict[int, ProcessUse] = {
        1: (0, (0, 0)), 2: (10, (0, 0)), 3: (60, (0, 0)), 4: (50, (0, 4 * MIB)), 5: (40, (0, 0)), 6: (30, (0, 0)),
        7: (0, (5 * MIB, 0)), 8: (0, (0, MIB)), 9: (0, (0, 0)), 10: (0, (0, 0)),
    }
    tops = top_processes(current(resident), use, 1.0, 2)
    assert [(top.pid, top.name, top.cpu, top.rss, top.read, top.write) for top in tops] == [
        (1, "p1", 0.0, 90 * MIB, 0, 0),
        (2, "p2", 5.0, 80 * MIB, 0, 0),
        (3, "p3", 30.0, 70 * MIB, 0, 0),
        (4, "p4", 25.0, 10 * MIB, 0, 4 * MIB),
        (5, "p5", 20.0, 9 * MIB, 0, 0),
        (6, "p6", 15.0, 8 * MIB, 0, 0),
        (7, "p7", 0.0, 7 * MIB, 5 * MIB, 0),
        (8, "p8", 0.0, 6 * MIB, 0, MIB),
    ]


def test_at_most_eight_whatever_the_tree() -> None:
    """400 processes, the larger the less busy and the more I/O: 400, 399, 398 by memory, 1, 2, 3 by CPU, then
    397, 396 by I/O (400 to 398 being listed)."""
    resident = {pid: pid * MIB for pid in range(1, 401)}
    use: dict[int, ProcessUse] = {pid: (401 - pid, (pid, pid)) for pid in resident}
    tops = top_processes(current(resident), use, 1.0, 2)
    assert [top.pid for top in tops] == [400, 399, 398, 1, 2, 3, 397, 396]


def test_an_idle_tree_is_its_largest_processes_with_nothing_used() -> None:
    """No process ran (no per-process use at all): the three largest, CPU 0.0, I/O 0 where it can be read and
    null where it cannot."""
    tops = top_processes(current({1: 3 * MIB, 2: 2 * MIB, 3: MIB, 4: 1}, frozenset({2})), {}, 1.0, 2)
    assert [(top.pid, top.cpu, top.read, top.write) for top in tops] == [
        (1, 0.0, 0, 0), (2, 0.0, None, None), (3, 0.0, 0, 0)
    ]


def test_a_process_without_a_resident_size_is_chosen_by_what_it_used() -> None:
    """Its `statm` could not be read: no `rss`, but it ran."""
    reading = current({1: MIB})
    reading = RunReading(reading.at_ns, reading.clock, 100, {**reading.processes, 2: (0, 1, 0, 0, (0, 0))}, 2,
                         rss_bytes=MIB, resident={1: MIB}, names={1: "p1", 2: "p2"})
    tops = top_processes(reading, {2: (100, (0, 0))}, 1.0, 2)
    assert [(top.pid, top.cpu, top.rss) for top in tops] == [(1, 0.0, MIB), (2, 50.0, None)]


@pytest.mark.parametrize(
    ("comm", "argv", "name"),
    [
        ("java", ["/usr/lib/jvm/bin/java", "-Xmx2g", "-cp", "a.jar", "org.example.Main"], "java"),
        ("python3", ["/usr/bin/python3", "/srv/jobs/train.py", "--epochs", "3"], "train.py"),
        ("python3.11", ["python3.11", "-u", "-X", "importtime", "etl.py"], "etl.py"),
        ("python3", ["python3", "-m", "pytest", "-q"], "pytest"),
        ("python3", ["python3", "-c", "import time; time.sleep(9)"], "python3"),
        ("python3", ["python3"], "python3"),
        ("node", ["node", "--require", "ts-node/register", "server.ts"], "server.ts"),
        ("node", ["node", "-e", "setTimeout(() => 0, 9)"], "node"),
        ("bash", ["/bin/bash", "-e", "-o", "pipefail", "./ci/build.sh", "arg"], "build.sh"),
        ("sh", ["sh", "-c", "make -j8 all"], "sh"),
        ("perl", ["perl", "-w", "/usr/bin/cloc", "."], "cloc"),
        ("python3", [], "python3"),
        ("chromium-browse", ["/usr/lib/chromium/chromium-browser", "--type=renderer"], "chromium-browser"),
        ("kworker/u4:1-ev", [], "kworker/u4:1-ev"),
        ("python3", ["python3", "/srv/" + "x" * 100 + ".py"], "x" * 63 + "…"),
        ("python3", ["python3", "-", "/tmp/orca-run-workload.1"], "python3"),
        ("sh", ["sh", "-s", "deploy.sh"], "sh"),
    ],
    ids=["java", "script", "options-with-values", "module", "inline", "no-script", "node-script", "node-inline",
         "shell-script", "shell-inline", "perl", "arguments-unreadable", "cut-comm", "kernel-thread", "long",
         "code-from-stdin", "shell-from-stdin"],
)
def test_the_name_a_person_knows(comm: str, argv: list[str], name: str) -> None:
    assert process_name(comm, argv) == name


@pytest.mark.parametrize(
    ("comm", "needed"),
    [("python3", True), ("pypy3", True), ("bash", True), ("sh", True), ("zsh", True), ("java", False),
     ("make", False), ("ssh", False), ("sleep", False), ("chromium-browse", True), ("cc1", False)],
)
def test_the_arguments_are_read_only_when_the_name_needs_them(comm: str, needed: bool) -> None:
    assert needs_arguments(comm) is needed
