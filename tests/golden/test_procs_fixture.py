"""shell/procs/ over fixture /proc trees (docs/behaviour.md §7): `tree_rss`, `tree_usage`, `ProcessScanner`,
`alive`.

The trees and every expected number are described in fixtures/procs/README.md; the sums below were worked out by
hand from that table (resident pages from statm's second field, docs/behaviour.md §3.4; ticks = utime + stime +
cutime + cstime, docs/behaviour.md §6), then multiplied by the page size and divided by USER_HZ.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from orca.sample.shell.procs import portable
from orca.sample.shell.procs.portable import alive, tree_rss, tree_usage
from orca.sample.shell.procs.scanner import ProcessScanner
from orca.sample.shell.procs.walk import ProcRoot

FIXTURES = Path(__file__).parent / "fixtures" / "procs"
HAND = str(FIXTURES / "hand")
REAL = str(FIXTURES / "linux-6.18.44-fc-v857-x86_64-sh-and-two-sleeps")
PAGE = os.sysconf("SC_PAGE_SIZE")
HZ = os.sysconf("SC_CLK_TCK")


# --- the real capture ------------------------------------------------------------------------------------------------


def test_real_tree_sums_statm_not_stat() -> None:
    """docs/behaviour.md §3.4: statm's 425 + 460 + 452 pages (VmRSS agreed), not stat's lagging 399 + 416 + 425."""
    assert tree_rss(9204, proc=REAL) == (425 + 460 + 452) * PAGE
    assert tree_rss(9205, proc=REAL) == 460 * PAGE


def test_real_tree_with_its_parent_missing_from_the_pass() -> None:
    """sh's parent 9162 was not captured: the tree below it is still whole, and 9162's is empty."""
    assert tree_rss(9162, proc=REAL) == 0
    assert tree_usage([9204, 9162], proc=REAL) == {9204: ((425 + 460 + 452) * PAGE, 0.0)}


def test_real_match_by_argv0() -> None:
    """cmdline `sleep\\0 1000\\0`: argv0 is `sleep`; sh's argv0 is `sh`, the `sleep` inside its -c script is not one."""
    scanner = ProcessScanner(REAL)
    assert scanner.run_rss(None, "sleep") == (460 + 452) * PAGE
    assert scanner.run_rss(9204, "sleep") == (425 + 460 + 452) * PAGE  # each sleep once, though in both
    assert scanner.run_rss(None, "sleep 1000") == 0


def test_real_sleeping_processes_are_alive() -> None:
    assert alive(9204, REAL)
    assert alive(9206, REAL)


# --- the hand-written tree -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("root", "argv0", "pages"),
    [
        pytest.param(100, "", 1000 + 250 + 40 + 0 + 0, id="tree-of-100: 100 101 102 zombie-103 dead-106"),
        pytest.param(100, "/usr/bin/worker", 1000 + 250 + 40 + 70, id="tree-plus-match: 102 once, 200 added"),
        pytest.param(None, "/usr/bin/worker", 40 + 70, id="match-only: 102 and 200, not 201 nor garbage-400"),
        pytest.param(None, "worker", 9, id="argv0-is-compared-whole: only 300"),
        pytest.param(None, "/bin/bash", 1000, id="a-match-is-one-process-not-its-tree"),
        pytest.param(1, "", 300 + 1290 + 70 + 5 + 9, id="tree-of-init: all but kthreads, 105 and 400"),
        pytest.param(2, "", 0, id="kernel-threads-hold-no-pages"),
        pytest.param(105, "", 11, id="a-root-whose-parent-vanished"),
        pytest.param(104, "", 0, id="a-root-that-vanished-mid-pass"),
        pytest.param(400, "", 0, id="a-root-whose-stat-is-garbage"),
        pytest.param(999, "", 0, id="a-root-that-does-not-exist"),
        pytest.param(None, "", 0, id="neither-flag"),
        pytest.param(None, "/usr/bin/nothing", 0, id="a-match-of-nothing"),
    ],
)
def test_hand_run_rss(root: int | None, argv0: str, pages: int) -> None:
    assert ProcessScanner(HAND).run_rss(root, argv0) == pages * PAGE
    if root is not None:
        assert tree_rss(root, argv0, proc=HAND) == pages * PAGE


def test_hand_scanner_answers_the_same_every_line() -> None:
    """The argv0 cache (by pid, start time and comm) must not change the answer from one line to the next."""
    scanner = ProcessScanner(HAND)
    first = [scanner.run_rss(100, "/usr/bin/worker"), scanner.run_rss(None, "worker")]
    second = [scanner.run_rss(100, "/usr/bin/worker"), scanner.run_rss(None, "worker")]
    assert first == second == [1360 * PAGE, 9 * PAGE]


def test_hand_reading_of_each_process() -> None:
    """What a line's `run.top` and `run.io` are made of, per process of 100's tree: its resident bytes (statm), its
    I/O (`io`'s read_bytes and write_bytes; None where there is no readable file), and its name (`comm`; for bash,
    an interpreter, its script, which `-c ./run.sh` is not)."""
    reading = ProcessScanner(HAND).reading(100, "").unwrap()
    assert {pid: counters[4] for pid, counters in reading.processes.items()} == {
        100: (8192, 4096), 101: (0, 1048576), 102: None, 103: None, 106: None
    }
    assert reading.resident == {100: 1000 * PAGE, 101: 250 * PAGE, 102: 40 * PAGE, 103: 0, 106: 0}
    assert reading.names == {100: "bash", 101: "(my) proc)", 102: "worker", 103: "sleep", 106: "true"}


def test_hand_tree_usage() -> None:
    """docs/behaviour.md §6: one entry per existing root; CPU = (utime + stime + cutime + cstime) / USER_HZ over the
    tree."""
    usage = tree_usage([100, 200, 2, 999, 104], proc=HAND)
    assert usage == {
        # 100: 10+5+300+100; 101: 50+20; 102: 7+3; 103: 1+1; 106: 0
        100: (1290 * PAGE, (415 + 70 + 10 + 2 + 0) / HZ),
        # 200: 20+10; 201: 1
        200: ((70 + 5) * PAGE, (30 + 1) / HZ),
        # kthreadd 0+3 and its kworker 0+9: CPU but no pages
        2: (0, 12 / HZ),
    }


def test_tree_usage_of_no_roots_is_empty() -> None:
    assert tree_usage([], proc=HAND) == {}


@pytest.mark.parametrize(
    ("pid", "expected"),
    [
        pytest.param(100, True, id="state-S"),
        pytest.param(102, True, id="state-R"),
        pytest.param(3, True, id="state-I-idle-kernel-thread"),
        pytest.param(103, False, id="state-Z-zombie"),
        pytest.param(106, False, id="state-X-dead"),
        pytest.param(104, False, id="directory-without-stat"),
        pytest.param(999, False, id="no-such-process"),
        pytest.param(400, True, id="a-stat-that-does-not-parse-is-still-a-process"),
        pytest.param(0, False, id="pid-0"),
        pytest.param(-1, False, id="negative-pid"),
    ],
)
def test_hand_alive(pid: int, expected: bool) -> None:
    """docs/behaviour.md §2.3: not existing, or state Z or X, is dead."""
    assert alive(pid, HAND) is expected


def test_missing_proc_answers_empty(tmp_path: Path) -> None:
    """A platform without /proc (docs/behaviour.md §1.3, §6): no tree, no usage, no exception."""
    absent = str(tmp_path / "no-proc")
    assert tree_rss(1, proc=absent) == 0
    assert tree_usage([1], proc=absent) == {}
    assert ProcessScanner(absent).run_rss(1, "x") == 0


def test_without_proc_nor_psutil_alive_asks_kill(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/behaviour.md §6: on a platform with neither /proc nor psutil, `os.kill(pid, 0)`: this process exists; a
    pid past pid_max does not; and no tree is found."""
    monkeypatch.setattr(portable, "machine_readings", portable.KillReadings)
    assert alive(os.getpid())
    assert not alive(2**22 + 1)
    assert not alive(2**40)
    assert tree_rss(os.getpid()) == 0
    assert tree_usage([os.getpid()]) == {}


def test_a_process_reaped_between_its_stat_and_its_io_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/behaviour.md §3.12 `io`: 101 is reaped just after its `stat` was read, before its `io` (its directory gone
    when the `io` is read). It is left out of the reading as a process whose `stat` failed, so its parent's jump is
    what counts it and the run's `io` is not made unknown; 102, which has no `io` file but is still there, keeps its
    unknown `io`."""
    tree = tmp_path / "proc"
    shutil.copytree(HAND, tree, symlinks=True)
    read = ProcRoot.read

    def reaped_at_its_io(self: ProcRoot, pid: int | str, name: str) -> bytes | None:
        if name == "io" and int(pid) == 101:
            shutil.rmtree(tree / "101")
        return read(self, pid, name)

    monkeypatch.setattr(ProcRoot, "read", reaped_at_its_io)
    reading = ProcessScanner(str(tree)).reading(100, "").unwrap()
    assert {pid: counters[4] for pid, counters in reading.processes.items()} == {
        100: (8192, 4096), 102: None, 103: None, 106: None
    }
