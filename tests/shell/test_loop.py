"""When lines are written (docs/behaviour.md §2.2-§2.4, §5.2), with real processes, files and signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from itertools import accumulate
from pathlib import Path

import pytest

from orca.sample.shell.cli import loop
from orca.sample.shell.cli.signals import Stop, has_ended, watching_exit
from tests.shell.run import environment, no_traceback, read_lines, run, start

# Ends and signals are the same whatever the readings come from: each test runs on both readers.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("sample_reader")]

# Pinned to one of the CPUs this process may use (CPU 0 need not be one of them) where the platform can pin
# (Linux); elsewhere one spinning thread still keeps some core busy.
BUSY = (
    "import os\nif hasattr(os, 'sched_setaffinity'):\n    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
    "while True:\n    pass\n"
)


def test_count(tmp_path: Path) -> None:
    """docs/behaviour.md §2.3: `--count N` lines, then exit 0."""
    out = tmp_path / "m.jsonl"
    done = run("--out", str(out), "--count", "4", "--seconds", "0.1")
    assert done.returncode == 0
    no_traceback(done.stderr)
    assert len(read_lines(out)) == 4


def test_first_line_after_a_fifth_of_a_second_then_one_per_interval(tmp_path: Path) -> None:
    """docs/behaviour.md §2.2: the first line's dt is at least the 0.2 s of the schedule; line k (from 0) comes no
    earlier than 0.2 + k·S after the baseline (the schedule never writes early), the dts summing to that time.
    Upper bounds are left generous: a shared machine may run a line late (the first one too, when loading the
    sampler takes longer than the wait), which the schedule allows: the next line then keeps to its own tick."""
    out = tmp_path / "m.jsonl"
    done = run("--out", str(out), "--count", "6", "--seconds", "0.3")
    assert done.returncode == 0
    lines = read_lines(out)
    assert len(lines) == 6
    assert 0.19 <= lines[0]["dt"] < 2.0
    # Each dt is rounded to 3 decimals: the sum of k + 1 of them may be short of the truth by 0.0005 each.
    since_baseline = list(accumulate(line["dt"] for line in lines))
    assert all(
        since_baseline[k] >= 0.2 + k * 0.3 - 0.0005 * (k + 1) for k in range(6)
    ), [line["dt"] for line in lines]
    assert all(line["dt"] > 0 for line in lines)
    times = [line["t"] for line in lines]
    assert times == sorted(times)


class SlowSource:
    """A line that takes `seconds` to make: a loop that slept an interval after each line would drift by it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def line_bytes(self) -> bytes:
        time.sleep(self.seconds)
        return b"{}"

    def last_line_bytes(self) -> bytes:
        return self.line_bytes()


class Clocked:
    """A sink that notes when each line arrives."""

    def __init__(self) -> None:
        self.at: list[float] = []

    def write(self, line: bytes) -> None:
        self.at.append(time.monotonic())

    def close(self) -> None:
        pass


def test_lines_keep_to_a_fixed_schedule_however_long_a_line_takes() -> None:
    """docs/behaviour.md §2.2: lines at start + 0.2 + k·S. With S = 0.3 and lines that take 0.2 s to make, five
    intervals span 1.5 s on the schedule; a loop that slept S after each line would need 2.5 s."""
    sink = Clocked()
    start = time.monotonic()
    written = loop.run(SlowSource(0.2), sink, 0.3, loop.EndConditions(count=6), start, Stop())
    assert written == 6
    assert sink.at[0] >= start + 0.2 + 0.2
    span = sink.at[-1] - sink.at[0]
    assert 1.2 <= span < 2.2, span


def test_one_busy_core(tmp_path: Path) -> None:
    """docs/behaviour.md §3.3: one process spinning on core 0 makes `busiest` above 75."""
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(0.2)
        out = tmp_path / "m.jsonl"
        done = run("--out", str(out), "--count", "3", "--seconds", "0.3")
    finally:
        busy.kill()
        busy.wait()
    assert done.returncode == 0
    lines = read_lines(out)
    assert all(line["cpu"]["busiest"] > 75 for line in lines[1:]), [line["cpu"] for line in lines]


def test_pid_exit_ends_long_before_the_next_interval(tmp_path: Path) -> None:
    """docs/behaviour.md §2.3: the --pid process ended -> one last line at once (promised within 0.5 s; asserted
    as the next line, not at the next tick 30 s on), exit 0."""
    out = tmp_path / "m.jsonl"
    # The child ends once the first line is written, however long the sampler took to start, and tells its own last
    # moment: the test's wait() may return after the sampler already noticed.
    ends_after_the_first_line = (
        "import os, sys, time\n"
        "while not (os.path.exists(sys.argv[1]) and os.path.getsize(sys.argv[1]) > 0):\n"
        "    time.sleep(0.01)\n"
        "print(time.time(), flush=True)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", ends_after_the_first_line, str(out)], stdout=subprocess.PIPE)
    sampler = start("--out", str(out), "--pid", str(child.pid), "--seconds", "30")
    try:
        exited = float(child.communicate(timeout=30)[0])
        _, stderr = sampler.communicate(timeout=10)
    finally:
        sampler.kill()
        child.kill()
    assert sampler.returncode == 0
    no_traceback(stderr)
    lines = read_lines(out)
    assert len(lines) == 2  # the first at 0.2 s, the last after the exit
    assert exited <= lines[-1]["t"] < lines[0]["t"] + 30, (lines, exited)


class Noted:
    """A source, a stop and a pidfd check that note, in order, each line, each wait and each time the process's
    state is asked for."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def line_bytes(self) -> bytes:
        self.events.append("line")
        return b"{}"

    def last_line_bytes(self) -> bytes:
        return self.line_bytes()


class NotingStop(Stop):
    def __init__(self, events: list[str]) -> None:
        super().__init__()
        self.events = events

    def wait(self, seconds: float, also: int = -1) -> bool:
        self.events.append("wait")
        return super().wait(seconds, also)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no pidfds on this platform")
def test_with_a_pidfd_the_wait_is_all_that_runs_between_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/behaviour.md §2.3: with `--pid` and a pidfd the wait on the pidfd tells whether the process ended, so
    between two lines nothing else asks; before the first line (whose wait does not watch the pidfd) it is asked."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    noted = Noted()

    def noted_has_ended(fd: int) -> bool:
        noted.events.append("asked")
        return has_ended(fd)

    monkeypatch.setattr(loop, "has_ended", noted_has_ended)
    try:
        with watching_exit(child.pid) as exit_fd:
            ends = loop.EndConditions(pid=child.pid, count=5, exit_fd=exit_fd)
            written = loop.run(noted, Clocked(), 0.05, ends, time.monotonic(), NotingStop(noted.events))
    finally:
        child.kill()
        child.wait()
    assert written == 5
    events = noted.events
    first = events.index("line")
    assert "asked" in events[:first]
    between = " ".join(events[first:]).split("line")[1:-1]  # what ran between consecutive lines
    assert len(between) == 4
    assert all(set(gap.split()) == {"wait"} for gap in between), events


def test_pid_unreaped_zombie_counts_as_ended(tmp_path: Path) -> None:
    """docs/behaviour.md §2.3: a process that exited but whose parent has not reaped it (state Z) has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    time.sleep(0.5)  # exited, not reaped: a zombie
    out = tmp_path / "m.jsonl"
    try:
        done = run("--out", str(out), "--pid", str(child.pid), "--seconds", "30", timeout=10)
    finally:
        child.wait()
    assert done.returncode == 0
    assert len(read_lines(out)) == 1


def test_pid_missing_at_start(tmp_path: Path) -> None:
    """docs/behaviour.md §5.2: --pid of a process that does not exist: the first line, then the end."""
    out = tmp_path / "m.jsonl"
    # pid_max is at most 4194304 (proc(5)): this pid cannot exist.
    done = run("--out", str(out), "--pid", "4194305", "--seconds", "30", timeout=10)
    assert done.returncode == 0
    lines = read_lines(out)
    assert len(lines) == 1
    # The first line's 0.2 s after the baseline, later by the rest of the sampler's loading on a busy machine
    # (§2.2); never the 30 s interval.
    assert 0.15 <= lines[0]["dt"] < 5


def test_until_file_appears(tmp_path: Path) -> None:
    """docs/behaviour.md §2.3: once the --until file exists, one last line within 0.5 s, then exit 0."""
    out, flag = tmp_path / "m.jsonl", tmp_path / "done"
    sampler = start("--out", str(out), "--until", str(flag), "--seconds", "30")
    try:
        # The first line is written (the sampler is past its start, where a file already there ends it at once).
        deadline = time.monotonic() + 30
        while not (out.exists() and out.read_bytes().endswith(b"\n")) and time.monotonic() < deadline:
            time.sleep(0.05)
        created = time.time()  # taken before the file exists: the sampler cannot notice it earlier
        flag.touch()
        _, stderr = sampler.communicate(timeout=10)
    finally:
        sampler.kill()
    assert sampler.returncode == 0
    no_traceback(stderr)
    lines = read_lines(out)
    assert len(lines) == 2
    # `t` is `start` plus the `dt`s, each rounded to 3 decimals (docs/behaviour.md §3.1-3.2): it may say a moment up
    # to a millisecond or two before the readings were taken.
    assert -0.002 <= lines[-1]["t"] - created < 3.0  # promised within 0.5 s; the interval is 30 s


def test_until_file_exists_at_start(tmp_path: Path) -> None:
    """docs/behaviour.md §5.2: the same as a process that has ended: one line, exit 0."""
    out, flag = tmp_path / "m.jsonl", tmp_path / "done"
    flag.touch()
    done = run("--out", str(out), "--until", str(flag), "--seconds", "30", timeout=10)
    assert done.returncode == 0
    assert len(read_lines(out)) == 1


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_ends_at_once(tmp_path: Path, signum: signal.Signals) -> None:
    """docs/behaviour.md §2.4: SIGTERM/SIGINT mid-run: exit 0 at once, no further line, every line whole JSON."""
    out = tmp_path / "m.jsonl"
    sampler = start("--out", str(out), "--seconds", "0.1", env=environment())
    try:
        deadline = time.monotonic() + 10
        while (not out.exists() or len(out.read_bytes().splitlines()) < 5) and time.monotonic() < deadline:
            time.sleep(0.05)
        sampler.send_signal(signum)
        _, stderr = sampler.communicate(timeout=5)
    finally:
        sampler.kill()
    assert sampler.returncode == 0
    assert stderr == b""
    written = read_lines(out)
    assert len(written) >= 5
    time.sleep(0.3)
    assert len(read_lines(out)) == len(written)


def test_signal_during_a_long_wait_is_prompt(tmp_path: Path) -> None:
    """docs/behaviour.md §2.4 'at once': with --seconds 30 the sampler is asleep; the signal wakes it (not the next
    0.25 s check)."""
    out = tmp_path / "m.jsonl"
    sampler = start("--out", str(out), "--seconds", "30")
    try:
        deadline = time.monotonic() + 10
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        sent = time.monotonic()
        sampler.send_signal(signal.SIGTERM)
        sampler.wait(timeout=5)
        took = time.monotonic() - sent
    finally:
        sampler.kill()
    assert sampler.returncode == 0
    assert len(read_lines(out)) == 1
    assert took < 3.0, took  # with neither --pid nor --until the loop sleeps the whole 30 s unless woken


def test_signal_in_process_leaves_handlers_as_they_were(tmp_path: Path) -> None:
    """An embedding program gets its own handlers back after sample_main (docs/behaviour.md §1.2)."""
    from orca.sample.shell.cli.sample import sample_main

    stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    before = [signal.getsignal(signum) for signum in stops]
    assert sample_main(["p", "sample", "--out", str(tmp_path / "m.jsonl"), "--count", "1"]) == 0
    assert [signal.getsignal(signum) for signum in stops] == before


def test_a_process_that_ends_after_sampling_ignores_late_signals(tmp_path: Path) -> None:
    """`ends_process=True` (what `orca sample` uses): once sampling is over the stop signals are ignored, not put
    back to their default action, which would kill the exiting process with the signal's status."""
    from orca.sample.shell.cli.sample import sample_main

    stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    before = [signal.getsignal(signum) for signum in stops]
    try:
        out = str(tmp_path / "m.jsonl")
        assert sample_main(["p", "sample", "--out", out, "--count", "1"], ends_process=True) == 0
        assert [signal.getsignal(signum) for signum in stops] == [signal.SIG_IGN] * 3
    finally:
        for signum, handler in zip(stops, before, strict=True):
            signal.signal(signum, handler)


def test_sample_main_from_a_thread(tmp_path: Path) -> None:
    """Signals can only be caught in the main thread: elsewhere sample_main still samples and returns 0."""
    from orca.sample.shell.cli.sample import sample_main

    status: list[int] = []
    thread = threading.Thread(
        target=lambda: status.append(
            sample_main(["p", "sample", "--out", str(tmp_path / "m.jsonl"), "--count", "2", "--seconds", "0.1"])
        )
    )
    thread.start()
    thread.join(timeout=10)
    assert status == [0]
    assert len(read_lines(tmp_path / "m.jsonl")) == 2


def test_an_unexpected_error_is_one_line_and_status_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sampler never fails its run (docs/behaviour.md §1.2): whatever breaks inside the loop is one line on
    stderr."""
    from orca.sample.shell import sampler
    from orca.sample.shell.cli.sample import sample_main

    def broken(self: sampler.Sampler) -> bytes:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(sampler.Sampler, "line_bytes", broken)
    assert sample_main(["p", "sample", "--out", str(tmp_path / "m.jsonl"), "--count", "2", "--seconds", "0.1"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "orca sample: stopped: RuntimeError: disk on fire second line\n"
    assert not (tmp_path / "m.jsonl").exists()


def test_missed_ticks_are_skipped_not_made_up(tmp_path: Path) -> None:
    """docs/behaviour.md §2.2: a sampler stopped (SIGSTOP) across five ticks writes one line on waking, then goes on at
    start + 0.2 + k·S; a loop that made the ticks up would write five lines at once."""
    out = tmp_path / "m.jsonl"
    sampler = start("--out", str(out), "--count", "6", "--seconds", "0.2")
    try:
        deadline = time.monotonic() + 10
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        sampler.send_signal(signal.SIGSTOP)
        time.sleep(1.0)
        resumed = time.time()
        sampler.send_signal(signal.SIGCONT)
        sampler.wait(timeout=10)
    finally:
        sampler.kill()
    assert sampler.returncode == 0
    lines = read_lines(out)
    assert len(lines) == 6
    times = [line["t"] for line in lines]
    # Made-up ticks would be five lines at once on waking; skipped ones leave at most two lines (the late one and
    # perhaps the next tick's) within any 0.15 s.
    assert all(later - earlier > 0.15 for earlier, later in zip(times, times[2:], strict=False)), times
    assert any(t > resumed for t in times)
