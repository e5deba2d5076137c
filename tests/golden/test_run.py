"""The run's CPU and processes (docs/behaviour.md §3.12), worked out by hand from `/proc/<pid>/stat` texts.

Each text has the layout of a real line of this machine's (Linux 6.18, `cat` reading its own stat: `29211 (cat) R
29209 29209 11651 0 -1 4194304 97 0 0 0 0 0 0 0 20 0 1 0 648027 3133440 382 ...`), with the fields proc(5)
numbers 4 (ppid), 14-17 (utime, stime, cutime, cstime, in clock ticks) and 22 (starttime, ticks after boot) set by
hand. The machine has 100 ticks a second (`getconf CLK_TCK`). cpu = 100 × ticks used / (100 × seconds × cores).
"""

from __future__ import annotations

import itertools

import pytest

from orca.sample.compute.run import CommandEnd, run_section, run_use
from orca.sample.compute.run_reading import ProcessCounters, RunReading
from orca.sample.line_format import CommandExit, IoRate, RunSample, TopProcess
from orca.sample.parse.pid_io import read_write_bytes
from orca.sample.parse.pid_stat import process_times

HZ = 100
SECOND = 1_000_000_000


def stat(pid: int, state: str, ppid: int, utime: int, stime: int, cutime: int, cstime: int, start: int) -> bytes:
    """A `/proc/<pid>/stat` line as the kernel writes it (fs/proc/array.c), these fields set."""
    return (
        f"{pid} (worker (x)) {state} {ppid} 29209 11651 0 -1 4194304 97 0 0 0 {utime} {stime} {cutime} {cstime} "
        f"20 0 1 0 {start} 3133440 382 18446744073709551615 94474443628544 94474443648425 140736886812480 0 0 0 0 "
        "0 0 0 0 0 17 1 0 0 0 0 0 94474443664432 94474443666048 94474572357632 140736886815458 140736886815478 "
        "140736886815478 140736886816747 0\n"
    ).encode()


def io(read_bytes: int, write_bytes: int) -> bytes:
    """A `/proc/<pid>/io` as the kernel writes it (fs/proc/base.c `do_io_accounting`), these two fields set."""
    return (
        f"rchar: 4219212\nwchar: 4194398\nsyscr: 423\nsyscw: 771\nread_bytes: {read_bytes}\n"
        f"write_bytes: {write_bytes}\ncancelled_write_bytes: 0\n"
    ).encode()


def counters(line: bytes, io_text: bytes | None) -> tuple[str, ProcessCounters]:
    read = process_times(line)
    assert read is not None
    state, _, times = read
    return state, (*times, None if io_text is None else read_write_bytes(io_text))


def reading(
    seconds: float,
    clock: int,
    lines: list[bytes],
    left: list[bytes] | None = None,
    rss: int | None = 0,
    ios: dict[int, bytes] | None = None,
) -> RunReading:
    """The reading of those stat lines at `seconds` (monotonic) and `clock` (ticks after boot); `ios`: pid -> its
    `io` file, for those whose `io` was read."""
    processes: dict[int, ProcessCounters] = {}
    names: dict[int, str] = {}
    procs = 0
    for line in lines:
        pid = int(line.split()[0])
        state, processes[pid] = counters(line, (ios or {}).get(pid))
        names[pid] = "worker (x)"
        procs += state != "Z"
    gone = {}
    for line in left or []:
        pid = int(line.split()[0])
        gone[pid] = counters(line, (ios or {}).get(pid))[1]
    return RunReading(round(seconds * SECOND), clock, HZ, processes, procs, gone, rss, names=names)


def ticks(prev: RunReading, cur: RunReading) -> int:
    return run_use(prev, cur).ticks


def test_the_fields_read_from_a_stat_line() -> None:
    assert process_times(stat(500, "S", 1, 1000, 200, 30, 4, 9000)) == ("S", b"worker (x)", (9000, 1, 1200, 34))


def test_one_process() -> None:
    """utime 1000 -> 1150, stime 200 -> 250 over 2 s on 2 cores: 200 ticks = 2 CPU seconds of 4."""
    before = reading(10.0, 100_000, [stat(500, "R", 1, 1000, 200, 0, 0, 9000)])
    after = reading(12.0, 100_200, [stat(500, "R", 1, 1150, 250, 0, 0, 9000)])
    assert ticks(before, after) == 200
    assert run_section(before, after, 2) == RunSample(
        cpu=50.0, procs=1, top=(TopProcess(pid=500, name="worker (x)", cpu=50.0),)
    )


def test_a_child_reaped_between_two_readings() -> None:
    """The child (501) had used 300 + 20 ticks at the first reading, ran 50 + 10 more and ended; its parent (500)
    waited for it, so the parent's cutime + cstime took in the child's whole 350 + 30, and its own utime grew 20.
    Used in the second: parent 20, child 60. (A plain sum of the present processes' growth would say 20 + 380.)"""
    before = reading(10.0, 100_000, [
        stat(500, "S", 1, 100, 10, 0, 0, 9000),
        stat(501, "R", 500, 300, 20, 0, 0, 9100),
    ])
    after = reading(11.0, 100_100, [stat(500, "S", 1, 120, 10, 350, 30, 9000)])
    assert ticks(before, after) == 80
    assert run_section(before, after, 2).cpu == 40.0  # 80 / (100 × 1 s × 2 cores)
    assert after.procs == 1


def test_a_child_counted_for_several_lines_then_reaped() -> None:
    """The same child over three readings: 100 ticks in the first interval, 100 in the second; in the third it
    uses 40 more and is reaped (its parent's children's counter jumps by its whole 240). Each interval counts what
    was used in it, and the three add up to the child's life and the parent's own."""
    lines = [
        reading(0.0, 0, [stat(500, "S", 1, 10, 0, 0, 0, 0), stat(501, "R", 500, 0, 0, 0, 0, 0)]),
        reading(1.0, 100, [stat(500, "S", 1, 10, 0, 0, 0, 0), stat(501, "R", 500, 90, 10, 0, 0, 0)]),
        reading(2.0, 200, [stat(500, "S", 1, 10, 0, 0, 0, 0), stat(501, "R", 500, 180, 20, 0, 0, 0)]),
        reading(3.0, 300, [stat(500, "S", 1, 15, 0, 215, 25, 0)]),
    ]
    used = [ticks(a, b) for a, b in itertools.pairwise(lines)]
    assert used == [100, 100, 45]  # the last: the child's 40 and the parent's own 5
    assert sum(used) == 240 + 5


def test_a_grandchild_and_child_both_reaped() -> None:
    """500 -> 501 -> 502. Between the readings 502 (at 50 ticks) uses 10 more and is reaped by 501, which (at 100)
    uses 20 more and is reaped by 500: 500's cutime takes in 501's own 120 and its children's 60. Used: 10 + 20."""
    before = reading(0.0, 0, [
        stat(500, "S", 1, 0, 0, 0, 0, 0),
        stat(501, "S", 500, 100, 0, 0, 0, 10),
        stat(502, "R", 501, 50, 0, 0, 0, 20),
    ])
    after = reading(1.0, 100, [stat(500, "S", 1, 0, 0, 180, 0, 0)])
    assert ticks(before, after) == 30


def test_a_child_forked_and_reaped_between_two_readings() -> None:
    """Never seen: its 70 ticks reach the line through its parent's cutime alone."""
    before = reading(0.0, 0, [stat(500, "S", 1, 5, 0, 0, 0, 0)])
    after = reading(1.0, 100, [stat(500, "S", 1, 5, 0, 60, 10, 0)])
    assert ticks(before, after) == 70


def test_a_process_that_left_the_run_alive() -> None:
    """501 was orphaned (its parent 500 is not the run's root here: 400 is, and 500 was reaped by it at 30 ticks)
    and given to init: it is not in the tree, but still runs. It counts the 25 ticks it used up to the second
    reading; 400's children's counter took in 500's 30, counted already."""
    before = reading(0.0, 0, [
        stat(400, "S", 1, 0, 0, 0, 0, 0),
        stat(500, "S", 400, 30, 0, 0, 0, 0),
        stat(501, "R", 500, 200, 0, 0, 0, 0),
    ])
    after = reading(1.0, 100, [stat(400, "S", 1, 0, 0, 30, 0, 0)], left=[stat(501, "R", 1, 225, 0, 0, 0, 0)])
    assert ticks(before, after) == 25


def test_a_parent_that_does_not_wait_takes_in_nothing() -> None:
    """A parent that ignores SIGCHLD: its child is reaped by the kernel and no counter takes in its time; nothing
    counted of it is taken back (never below 0)."""
    before = reading(0.0, 0, [stat(500, "S", 1, 10, 0, 0, 0, 0), stat(501, "R", 500, 90, 0, 0, 0, 0)])
    after = reading(1.0, 100, [stat(500, "S", 1, 12, 0, 0, 0, 0)])
    assert ticks(before, after) == 2


def test_a_reused_pid_is_another_process() -> None:
    """pid 600 started at tick 1000 (it used 500) is gone; the new 600 started at 150, after the first reading at
    100: all of its 40 ticks are this interval's, and the old one takes nothing back from anyone."""
    before = reading(0.0, 100, [stat(500, "S", 1, 0, 0, 0, 0, 0), stat(600, "R", 1, 500, 0, 0, 0, 10)])
    after = reading(1.0, 200, [stat(500, "S", 1, 0, 0, 0, 0, 0), stat(600, "R", 500, 40, 0, 0, 0, 150)])
    assert ticks(before, after) == 40


def test_a_process_that_joined_the_run_counts_from_its_first_reading() -> None:
    """A `--match` process that started (tick 50) before the first reading (100) but was not the run's then: its
    1000 ticks before are not the run's; from its first reading on it counts as any other."""
    first = reading(0.0, 100, [])
    second = reading(1.0, 200, [stat(700, "R", 1, 1000, 0, 0, 0, 50)])
    third = reading(2.0, 300, [stat(700, "R", 1, 1080, 0, 0, 0, 50)])
    assert ticks(first, second) == 0
    assert ticks(second, third) == 80


def test_counters_that_go_back_count_nothing() -> None:
    before = reading(0.0, 0, [stat(500, "R", 1, 100, 100, 100, 100, 0)])
    after = reading(1.0, 100, [stat(500, "R", 1, 90, 100, 50, 100, 0)])
    assert ticks(before, after) == 0


def test_zombies_are_not_counted_as_processes_but_their_times_are() -> None:
    """A child that ended (state Z) and has not been waited for: its last 30 ticks still count, it is not one of
    the run's processes any more."""
    before = reading(0.0, 0, [stat(500, "S", 1, 0, 0, 0, 0, 0), stat(501, "R", 500, 100, 0, 0, 0, 0)])
    after = reading(1.0, 100, [stat(500, "S", 1, 0, 0, 0, 0, 0), stat(501, "Z", 500, 130, 0, 0, 0, 0)])
    section = run_section(before, after, 1)
    assert (section.cpu, section.procs) == (30.0, 1)


def test_a_short_last_line_keeps_the_reaped_childrens_last_ticks() -> None:
    """The line written as COMMAND ends, 1 ms after the one before: its child (20 ticks at the previous reading) used
    10 more and was reaped, its parent's cutime taking in all 30. The 10 ticks are 0.1 CPU-s over 1 ms on 2 cores:
    5000% of all cores, which times the `dt` and the cores gives the 0.1 CPU-s back; nothing is held to 100."""
    before = reading(10.0, 1000, [stat(500, "S", 1, 0, 0, 0, 0, 900), stat(501, "R", 500, 20, 0, 0, 0, 950)])
    after = reading(10.001, 1000, [stat(500, "S", 1, 0, 0, 30, 0, 900)])
    section = run_section(before, after, 2)
    assert section.cpu == 5000.0
    assert section.cpu * 2 * 0.001 / 100 == pytest.approx(0.1)


def test_the_share_is_over_the_dt_given() -> None:
    """The line's `dt` as written (rounded to the millisecond) is the interval the share is taken over, so that
    `cpu × cores × dt` is what was used: 5 ticks over a `dt` written as 0.002 s on 1 core are 2500%."""
    before = reading(0.0, 0, [stat(500, "R", 1, 0, 0, 0, 0, 0)])
    after = reading(0.0016, 0, [stat(500, "R", 1, 5, 0, 0, 0, 0)])
    assert run_section(before, after, 1, seconds=0.002).cpu == 2500.0


@pytest.mark.parametrize(
    ("prev", "cores", "cpu"),
    [(None, 2, None), ("reading", None, None), ("reading", 2, 5.0)],
    ids=["no-previous-reading", "no-cores", "both"],
)
def test_cpu_needs_both_readings_and_the_cores(prev: str | None, cores: int | None, cpu: float | None) -> None:
    before = reading(0.0, 0, [stat(500, "R", 1, 0, 0, 0, 0, 0)])
    after = reading(1.0, 100, [stat(500, "R", 1, 10, 0, 0, 0, 0)])
    section = run_section(before if prev else None, after, cores)
    assert (section.cpu, section.procs, section.top is None) == (cpu, 1, cpu is None)
    assert run_section(before, None, 2) == RunSample()


def test_io_is_each_processs_growth_over_the_interval() -> None:
    """`read_bytes` 0 -> 1 MiB and `write_bytes` 4 MiB -> 6 MiB over 2 s: 512 KiB/s read, 1 MiB/s written."""
    before = reading(10.0, 100_000, [stat(500, "R", 1, 0, 0, 0, 0, 9000)], ios={500: io(0, 4 << 20)})
    after = reading(12.0, 100_200, [stat(500, "R", 1, 0, 0, 0, 0, 9000)], ios={500: io(1 << 20, 6 << 20)})
    section = run_section(before, after, 2)
    assert section.io == IoRate(read=512 << 10, write=1 << 20)
    assert section.top is not None
    assert (section.top[0].read, section.top[0].write) == (512 << 10, 1 << 20)


def test_io_of_a_child_reaped_between_two_readings() -> None:
    """The child (501) had written 3 MiB at the first reading, wrote 1 MiB more and was reaped: its parent's `io`
    (which holds the children it waited for, Documentation/filesystems/proc.rst) grew by the child's whole 4 MiB
    and its own 1 MiB. Written in the interval: 1 MiB each, 2 MiB; the parent shows both, the child being gone."""
    before = reading(0.0, 0, [stat(500, "S", 1, 0, 0, 0, 0, 0), stat(501, "R", 500, 0, 0, 0, 0, 10)],
                     ios={500: io(0, 0), 501: io(0, 3 << 20)})
    after = reading(1.0, 100, [stat(500, "S", 1, 0, 0, 0, 0, 0)], ios={500: io(0, 5 << 20)})
    use = run_use(before, after)
    assert use.io == (0, 2 << 20)
    assert use.by_process == {500: (0, (0, 2 << 20))}


def test_io_of_a_process_forked_since_counts_whole_and_one_that_joined_counts_none() -> None:
    """A process started after the previous reading (tick 150, the reading at 100) counts all it wrote; one that
    started before (50) and joined the run (a `--match` process that exec'd) counts nothing of what it did
    before."""
    before = reading(0.0, 100, [])
    after = reading(1.0, 200, [stat(600, "R", 1, 0, 0, 0, 0, 150), stat(700, "R", 1, 0, 0, 0, 0, 50)],
                    ios={600: io(4096, 8192), 700: io(1 << 30, 1 << 30)})
    use = run_use(before, after)
    assert use.io == (4096, 8192)
    assert use.by_process == {600: (0, (4096, 8192)), 700: (0, (0, 0))}


def test_io_that_cannot_be_read_is_null_for_the_process_and_the_run() -> None:
    """Another user's process under `--match` (EACCES on its `io`): its CPU counts, its bytes are not known, so
    neither are the run's (a part is not the whole: never a made-up 0)."""
    before = reading(0.0, 0, [stat(500, "R", 1, 0, 0, 0, 0, 0), stat(501, "R", 1, 0, 0, 0, 0, 0)],
                     ios={500: io(0, 0)})
    after = reading(1.0, 100, [stat(500, "R", 1, 10, 0, 0, 0, 0), stat(501, "R", 1, 20, 0, 0, 0, 0)],
                    ios={500: io(0, 4096)})
    section = run_section(before, after, 1)
    assert section.cpu == 30.0
    assert section.io is None
    assert section.top is not None
    assert [(top.pid, top.cpu, top.read, top.write) for top in section.top] == [
        (501, 20.0, None, None), (500, 10.0, 0, 4096)
    ]


def test_io_of_a_process_that_left_the_run_counts_up_to_the_reading_that_finds_it_gone() -> None:
    """501, orphaned and given to init, wrote 8 KiB more before the second reading found it out of the tree."""
    before = reading(0.0, 0, [stat(400, "S", 1, 0, 0, 0, 0, 0), stat(501, "R", 400, 0, 0, 0, 0, 0)],
                     ios={400: io(0, 0), 501: io(0, 4096)})
    after = reading(1.0, 100, [stat(400, "S", 1, 0, 0, 0, 0, 0)], left=[stat(501, "R", 1, 0, 0, 0, 0, 0)],
                    ios={400: io(0, 0), 501: io(0, 12288)})
    assert run_use(before, after).io == (0, 8192)


def test_the_command_is_bounded() -> None:
    """32 arguments of at most 256 characters (a longer one cut to 255 and `…`); `argc` only when some are left
    out."""
    argv = ["xargs", "x" * 256, "y" * 257, *(f"file{n}" for n in range(37))]
    section = run_section(None, None, 2, argv)
    assert section.command is not None
    assert len(section.command) == 32
    assert section.command[:3] == ("xargs", "x" * 256, "y" * 255 + "…")
    assert section.command[-1] == "file28"
    assert section.argc == 40
    assert run_section(None, None, 2, ["true"]) == RunSample(command=("true",))


@pytest.mark.parametrize(
    ("end", "written"),
    [
        (CommandEnd(returncode=0, wall_seconds=2.5, user_seconds=1.25, system_seconds=0.5, max_rss_bytes=1 << 20),
         CommandExit(code=0, wall=2.5, user=1.25, system=0.5, max_rss=1 << 20)),
        (CommandEnd(returncode=3, wall_seconds=1.0, user_seconds=0.0, system_seconds=0.0, max_rss_bytes=0),
         CommandExit(code=3, wall=1.0, user=0.0, system=0.0, max_rss=0)),
        (CommandEnd(returncode=-9, wall_seconds=1.0, user_seconds=0.0, system_seconds=0.0, max_rss_bytes=0),
         CommandExit(signal=9, wall=1.0, user=0.0, system=0.0, max_rss=0)),
        (CommandEnd(returncode=127, error="No such file or directory"),
         CommandExit(code=127, error="No such file or directory")),
    ],
    ids=["exit-0", "exit-3", "killed", "not-started"],
)
def test_how_the_command_ended(end: CommandEnd, written: CommandExit) -> None:
    assert run_section(None, None, 2, ended=end).exit == written


def test_the_time_of_reaped_children_is_charged_to_them_not_their_parent() -> None:
    """`make` (500) reaps two compilers between two readings: 501 had 30 ticks at the first, 502 had 10; `make`'s
    children's ticks then grew by 120, of which 40 were counted. The other 80 are the compilers' last ticks, charged
    to them in proportion to what each had (60 and 20) rather than to `make`, which used 2 of its own; the run's
    total is the same 82."""
    before = RunReading(0, 100, HZ, {500: (10, 1, 0, 0, None), 501: (20, 500, 30, 0, None),
                                     502: (30, 500, 10, 0, None)}, 3, names={500: "make", 501: "cc1", 502: "cc1"})
    after = RunReading(SECOND, 200, HZ, {500: (10, 1, 2, 120, None)}, 1, names={500: "make"})
    use = run_use(before, after)
    assert use.ticks == 82
    assert use.by_process == {500: (2, None), 501: (60, None), 502: (20, None)}
    section = run_section(before, after, 1)
    assert section.top is not None
    assert sorted((top.pid, top.name, top.cpu) for top in section.top) == [
        (500, "make", 2.0), (501, "cc1", 60.0), (502, "cc1", 20.0)
    ]
