"""`orca sample -- COMMAND` records what ran and how it ended (docs/behaviour.md §3.12, §9.4), and every sampler's
lines carry its `start` (§3.2). Real commands throughout."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orca.sample.shell.cli.loop import FIRST_LINE_AFTER

PYTHON = sys.executable


def sample(out: Path, *command: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", *extra, "--", *command],
        capture_output=True, timeout=60,
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_bytes().splitlines()]


def cpu_seconds(line: dict[str, Any]) -> float:
    """The CPU seconds a line's `run.cpu` stands for."""
    return float(line["run"]["cpu"]) / 100 * float(line["dt"]) * int(line["cores"])


CLOCK_TICK = 1 / os.sysconf("SC_CLK_TCK")


def rounding(found: list[dict[str, Any]]) -> float:
    """How far the lines' CPU seconds may be from `wait4`'s by rounding alone (docs/behaviour.md §3.12): each of
    the four `stat` times of COMMAND in its last reading (its own user and system, its children's) is whole clock
    ticks, every other process's part telescoping away; each line's `run.cpu` has one decimal (0.05 points of all
    cores over `dt`) and its `dt` three (0.0005 s of what `run.cpu` says); `wait4`'s user and system are written
    with two decimals each."""
    per_line = sum(
        (0.05 * float(line["dt"]) + 0.0005 * float(line["run"]["cpu"])) / 100 * int(line["cores"]) for line in found
    )
    return 4 * CLOCK_TICK + per_line + 2 * 0.005


def assert_the_lines_add_up_to_wait4(found: list[dict[str, Any]]) -> None:
    """The lines' CPU seconds are `run.exit.user + run.exit.system`, within the rounding: nothing COMMAND did from
    its first moment to its end is missing, nothing is counted twice."""
    ended = found[-1]["run"]["exit"]
    counted = sum(map(cpu_seconds, found))
    assert abs(counted - (ended["user"] + ended["system"])) <= rounding(found), (counted, ended, found)


@pytest.mark.parametrize("code", [0, 3])
def test_the_first_line_says_what_ran_and_the_last_how_it_ended(
    tmp_path: Path, code: int, sample_reader: str
) -> None:
    """A command that touches 64 MiB in a child it waits for, spins, and exits with `code`."""
    out = tmp_path / "m.jsonl"
    script = (
        "import subprocess, sys, time\n"
        "subprocess.run([sys.executable, '-c', 'x = bytearray(64 << 20); import time; time.sleep(0.3)'])\n"
        "end = time.monotonic() + 0.6\n"
        "while time.monotonic() < end:\n"
        "    pass\n"
        f"sys.exit({code})\n"
    )
    started = time.monotonic()
    done = sample(out, PYTHON, "-c", script)
    took = time.monotonic() - started
    assert done.returncode == code, done.stderr
    assert done.stderr == b""  # not a terminal: no word at the end
    found = lines(out)
    assert len(found) >= 3
    first, *middle, last = found
    assert first["run"]["command"] == [PYTHON, "-c", script]
    assert "argc" not in first["run"]
    assert all("command" not in line["run"] and "exit" not in line["run"] for line in middle)
    assert "command" not in last["run"]
    ended = last["run"]["exit"]
    assert list(ended) == ["code", "wall", "user", "system", "max_rss"]
    assert ended["code"] == code
    assert 0.9 < ended["wall"] < took
    assert ended["max_rss"] >= 64 << 20  # the child's, which the command waited for
    assert last["run"]["procs"] == 0  # it has ended
    # wait4's CPU is what the lines counted, from its first moment to the interval in which it ended.
    assert_the_lines_add_up_to_wait4(found)


# Spins until it has used 0.5 s of CPU, however loaded the machine.
SPIN = "import time\nwhile time.process_time() < 0.5:\n    pass\n"
# 2,000 children forked one after the other, each waited for before the next.
FORKS = (
    "import os\n"
    "for _ in range(2000):\n"
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        os._exit(0)\n"
    "    os.waitpid(pid, 0)\n"
)
TRUES = "i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i + 1)); done"


@pytest.mark.parametrize(
    "command",
    [[PYTHON, "-c", SPIN], [PYTHON, "-c", FORKS], ["sh", "-c", TRUES]],
    ids=["spinning", "2000-forked-children", "a-shell-running-2000-true"],
)
def test_the_lines_cpu_is_wait4s_from_the_commands_first_moment(tmp_path: Path, command: list[str]) -> None:
    """docs/behaviour.md §3.12, §9.1: the run starts from no process just before COMMAND, so its first moments
    (the interpreter's start, the first children) are in the first line, and the lines add up to what `wait4` says
    COMMAND and its children used."""
    out = tmp_path / "m.jsonl"
    done = sample(out, *command)
    assert done.returncode == 0, done.stderr
    found = lines(out)
    # It did run: enough CPU that a missing first moment would stand out of the rounding (how fast 2,000 forks
    # go depends on the Python and the machine's load, so no fixed number of seconds).
    assert found[-1]["run"]["exit"]["user"] + found[-1]["run"]["exit"]["system"] >= 4 * rounding(found)
    assert_the_lines_add_up_to_wait4(found)


def test_a_command_that_ends_at_once_is_reaped_at_once(tmp_path: Path) -> None:
    """`true`: its `wall` is its own (`/usr/bin/time` says 0.00), not the sampler's start and first line's wait."""
    out = tmp_path / "m.jsonl"
    done = sample(out, "true")
    assert done.returncode == 0
    [line] = lines(out)
    assert line["run"]["exit"]["code"] == 0
    # Waited for with the first line, it would be at least that wait; its own, it is shorter, on any machine that
    # starts `true` within that time.
    assert line["run"]["exit"]["wall"] < FIRST_LINE_AFTER


def test_killed_by_a_signal(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    done = sample(out, "sh", "-c", "sleep 0.3; kill -KILL $$")
    assert done.returncode == 128 + signal.SIGKILL
    ended = lines(out)[-1]["run"]["exit"]
    assert "code" not in ended
    assert ended["signal"] == signal.SIGKILL
    assert ended["wall"] > 0.25


@pytest.mark.parametrize("case", ["not-found", "not-executable"])
def test_a_command_that_never_started_is_one_line(tmp_path: Path, case: str) -> None:
    out = tmp_path / "m.jsonl"
    command = tmp_path / "no-such-command"
    if case == "not-executable":
        command.write_text("#!/bin/sh\nexit 0\n")
        command.chmod(0o644)
        if os.access(command, os.X_OK):
            pytest.skip("running as a user for whom every file is executable")
    done = sample(out, str(command), "an argument")
    expected = 127 if case == "not-found" else 126
    assert done.returncode == expected
    assert done.stderr.decode().startswith("orca sample: cannot run ")
    [line] = lines(out)
    reason = "No such file or directory" if case == "not-found" else "Permission denied"
    assert line["run"] == {
        "cpu": 0.0, "procs": 0, "command": [str(command), "an argument"], "exit": {"code": expected, "error": reason},
        "io": {"read": 0, "write": 0}, "top": [],
    }


def test_the_command_is_bounded_in_the_first_line(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    done = sample(out, "true", "a" * 1000, *map(str, range(40)))
    assert done.returncode == 0
    run = lines(out)[0]["run"]
    assert len(run["command"]) == 32
    assert run["command"][1] == "a" * 255 + "…"
    assert run["argc"] == 42


def test_bytes_that_are_not_utf_8_are_written_as_the_replacement_character(tmp_path: Path) -> None:
    """docs/behaviour.md §3.1: a `--dirs` path and an argument of COMMAND with a byte that is not UTF-8."""
    out = tmp_path / "m.jsonl"
    directory = os.fsencode(tmp_path) + b"/nu\xff"
    done = subprocess.run([PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--dirs", directory,
                           "--", "true", b"a\xffb", b"caf\xc3\xa9"], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first = lines(out)[0]
    assert first["run"]["command"] == ["true", "a\ufffdb", "caf\u00e9"]
    assert [disk["path"] for disk in first["disk"]] == [os.fsdecode(tmp_path) + "/nu\ufffd"]


def test_no_exit_when_sampling_ends_before_the_command(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    # Two lines 0.2 s apart, long before the sleep ends: even on a machine so loaded that the first line waits most
    # of a second for a core (a shorter sleep then ended first, and its line said so).
    done = sample(out, "sleep", "3", extra=("--count", "2"))
    assert done.returncode == 0
    found = lines(out)
    assert len(found) == 2
    assert "exit" not in found[-1]["run"]


def test_start_is_the_same_in_every_line_of_a_sampler_and_another_in_the_next(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    sample(out, "sleep", "0.7")
    first_run = len(lines(out))
    sample(out, "sleep", "0.3")
    found = lines(out)
    starts = [line["start"] for line in found]
    assert len(set(starts[:first_run])) == 1
    assert len(set(starts[first_run:])) == 1
    assert starts[0] != starts[-1]
    for line in found:
        assert line["start"] < line["t"]
    assert abs(found[0]["t"] - found[0]["dt"] - found[0]["start"]) < 0.01  # the baseline's time


def test_at_a_terminal_the_end_says_where_the_lines_went(tmp_path: Path) -> None:
    """... and how to look at them as this person can type it: started as `python -m orca.sample` with no `orca` on
    `PATH`, that interpreter with `-m orca.sample`."""
    out = tmp_path / "a dir" / "m.jsonl"
    main, terminal = pty.openpty()
    try:
        done = subprocess.run(
            [PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--", "sleep", "0.5"],
            stderr=terminal, stdout=subprocess.DEVNULL, timeout=60, env={**os.environ, "PATH": "/usr/bin:/bin"},
        )
        os.close(terminal)
        said = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the other end is closed and everything read
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(main)
    assert done.returncode == 0
    count = len(lines(out))  # 1 when the sampler took longer to start than `sleep 0.5` to end
    written = "1 line" if count == 1 else f"{count} lines"
    assert said.decode().replace("\r\n", "\n") == (
        f"orca sample: {written} in {out}; to look at them: {PYTHON} -m orca.sample metrics '{out}'\n"
    )
