"""When lines are written (SPEC 2.2-2.4, 5.2), with real processes, files and signals."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.shell.run import environment, no_traceback, read_lines, run, start

# Ends and signals are the same whatever the readings come from: each test runs on both readers.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("sample_reader")]

# Pinned to core 0 where the platform can pin (Linux); elsewhere one spinning thread still keeps some core busy.
BUSY = "import os\nif hasattr(os, 'sched_setaffinity'):\n    os.sched_setaffinity(0, {0})\nwhile True:\n    pass\n"


def test_count(tmp_path: Path) -> None:
    """SPEC 2.3: `--count N` lines, then exit 0."""
    out = tmp_path / "m.jsonl"
    done = run("--out", str(out), "--count", "4", "--seconds", "0.1")
    assert done.returncode == 0
    no_traceback(done.stderr)
    assert len(read_lines(out)) == 4


def test_first_line_at_a_fifth_of_a_second_and_no_drift(tmp_path: Path) -> None:
    """SPEC 2.2: the first line's dt is about 0.2; then lines at start + 0.2 + k·S, S = 0.3, over 10 more lines.

    Measured from the lines' own `t` (wall clock, 3 decimals) and `dt`: a loop that slept S after each line
    would drift by the sampling time every line."""
    out = tmp_path / "m.jsonl"
    done = run("--out", str(out), "--count", "11", "--seconds", "0.3")
    assert done.returncode == 0
    lines = read_lines(out)
    assert len(lines) == 11
    assert 0.15 <= lines[0]["dt"] <= 0.3
    first = lines[0]["t"]
    offsets = [line["t"] - first - k * 0.3 for k, line in enumerate(lines)]
    # Scheduling jitter on a shared 2-core machine is tens of ms; drift would grow with k instead.
    assert max(abs(offset) for offset in offsets) < 0.1, offsets
    assert all(0.2 <= line["dt"] <= 0.4 for line in lines[1:]), [line["dt"] for line in lines]


def test_one_busy_core(tmp_path: Path) -> None:
    """SPEC 3.3: one process spinning on core 0 makes `busiest` above 75."""
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


@pytest.mark.parametrize("seconds", ["1", "30"])
def test_pid_exit_ends_within_half_a_second(tmp_path: Path, seconds: str) -> None:
    """SPEC 2.3: the --pid process ended -> one last line within 0.5 s of its exit (whatever the interval), exit 0."""
    # The child tells its own last moment: the test's wait() may return after the sampler already noticed.
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(1.2); print(time.time(), flush=True)"], stdout=subprocess.PIPE
    )
    out = tmp_path / "m.jsonl"
    sampler = start("--out", str(out), "--pid", str(child.pid), "--seconds", seconds)
    try:
        exited = float(child.communicate(timeout=30)[0])
        _, stderr = sampler.communicate(timeout=10)
    finally:
        sampler.kill()
        child.kill()
    assert sampler.returncode == 0
    no_traceback(stderr)
    lines = read_lines(out)
    assert len(lines) >= 2  # the first at 0.2 s, the last after the exit
    assert 0 <= lines[-1]["t"] - exited < 0.5, (lines[-1]["t"], exited)


def test_pid_unreaped_zombie_counts_as_ended(tmp_path: Path) -> None:
    """SPEC 2.3: a process that exited but whose parent has not reaped it (state Z) has ended."""
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
    """SPEC 5.2: --pid of a process that does not exist: the first line, then the end."""
    out = tmp_path / "m.jsonl"
    # pid_max is at most 4194304 (proc(5)): this pid cannot exist.
    done = run("--out", str(out), "--pid", "4194305", "--seconds", "30", timeout=10)
    assert done.returncode == 0
    lines = read_lines(out)
    assert len(lines) == 1
    assert 0.15 <= lines[0]["dt"] <= 0.5


def test_until_file_appears(tmp_path: Path) -> None:
    """SPEC 2.3: once the --until file exists, one last line within 0.5 s, then exit 0."""
    out, flag = tmp_path / "m.jsonl", tmp_path / "done"
    sampler = start("--out", str(out), "--until", str(flag), "--seconds", "30")
    try:
        time.sleep(1.0)
        created = time.time()  # taken before the file exists: the sampler cannot notice it earlier
        flag.touch()
        _, stderr = sampler.communicate(timeout=10)
    finally:
        sampler.kill()
    assert sampler.returncode == 0
    no_traceback(stderr)
    lines = read_lines(out)
    assert len(lines) == 2
    assert 0 <= lines[-1]["t"] - created < 0.5


def test_until_file_exists_at_start(tmp_path: Path) -> None:
    """SPEC 5.2: the same as a process that has ended: one line, exit 0."""
    out, flag = tmp_path / "m.jsonl", tmp_path / "done"
    flag.touch()
    done = run("--out", str(out), "--until", str(flag), "--seconds", "30", timeout=10)
    assert done.returncode == 0
    assert len(read_lines(out)) == 1


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_ends_at_once(tmp_path: Path, signum: signal.Signals) -> None:
    """SPEC 2.4: SIGTERM/SIGINT mid-run: exit 0 at once, no further line, every line whole JSON."""
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
    """SPEC 2.4 'at once': with --seconds 30 the sampler is asleep; the signal wakes it (not the next 0.25 s check)."""
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
    assert took < 0.25, took


def test_signal_in_process_leaves_handlers_as_they_were(tmp_path: Path) -> None:
    """An embedding program gets its own handlers back after sample_main (SPEC 1.2)."""
    from orca.sample.shell.cli import sample_main

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    assert sample_main(["p", "sample", "--out", str(tmp_path / "m.jsonl"), "--count", "1"]) == 0
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_sample_main_from_a_thread(tmp_path: Path) -> None:
    """Signals can only be caught in the main thread: elsewhere sample_main still samples and returns 0."""
    from orca.sample.shell.cli import sample_main

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
    """A sampler never fails its run (issue 6, SPEC 1.2): whatever breaks inside the loop is one line on stderr."""
    from orca.sample.shell import sampler
    from orca.sample.shell.cli import sample_main

    def broken(self: sampler.Sampler) -> str:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(sampler.Sampler, "line", broken)
    assert sample_main(["p", "sample", "--out", str(tmp_path / "m.jsonl"), "--count", "2", "--seconds", "0.1"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "orca sample: stopped: RuntimeError: disk on fire second line\n"
    assert not (tmp_path / "m.jsonl").exists()


def test_missed_ticks_are_skipped_not_made_up(tmp_path: Path) -> None:
    """SPEC 2.2: a sampler stopped (SIGSTOP) across five ticks writes one line on waking, then goes on at
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
    assert sum(1 for line in lines if resumed - 0.05 <= line["t"] <= resumed + 0.1) <= 2, [x["t"] for x in lines]
    first = lines[0]["t"]
    late = [line for line in lines[1:] if line["t"] > resumed + 0.1]
    assert late
    for line in late:  # back on the schedule's grid, up to scheduling jitter
        offset = (line["t"] - first) % 0.2
        assert min(offset, 0.2 - offset) < 0.06, (line["t"], first)
