"""The run's top processes and its own disk I/O against real trees (docs/behaviour.md §3.12), with either reader.

The figures are compared with psutil's of the same processes, read just before and just after each of the
sampler's readings: the reading happened between the two, so the process's figure then lies between them. A CPU
time in a line is whole clock ticks at each end, and is written with one decimal of a percent over a `dt` of three
decimals: the bounds below take that rounding in, and nothing else.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

from orca.sample.shell.procs.scanner import ProcessScanner
from orca.sample.shell.sampler import Sampler
from tests.reader.test_command_record import lines

pytestmark = pytest.mark.requires_proc

MIB = 1 << 20
CLOCK_TICK = 1 / os.sysconf("SC_CLK_TCK")
SPINNER = "while True:\n    pass\n"
# The run's root holds 300 MiB, every page touched, and starts a spinner and a sleeper: three processes a person
# tells apart by name (`holder.py`, `spinner.py`, `sleep`).
HOLDER = """
import subprocess, sys, time
held = b"\\1" * (300 << 20)
subprocess.Popen([sys.executable, sys.argv[1]])
subprocess.Popen(["sleep", "60"])
print("ready", flush=True)
time.sleep(60)
"""


@contextmanager
def holder_tree(tmp_path: Path) -> Iterator[psutil.Process]:
    holder, spinner = tmp_path / "holder.py", tmp_path / "spinner.py"
    holder.write_text(HOLDER)
    spinner.write_text(SPINNER)
    root = subprocess.Popen([sys.executable, str(holder), str(spinner)], stdout=subprocess.PIPE,
                            start_new_session=True)
    try:
        assert root.stdout is not None
        assert root.stdout.readline() == b"ready\n"
        process = psutil.Process(root.pid)
        deadline = time.monotonic() + 20
        while len(process.children()) < 2 or any(child.status() == "zombie" for child in process.children()):
            assert time.monotonic() < deadline, "the children did not start"
            time.sleep(0.02)
        time.sleep(0.3)  # past the spinner's interpreter start: its resident size settles
        yield process
    finally:
        os.killpg(root.pid, signal.SIGKILL)
        root.wait()


def named(line: dict[str, Any], name: str) -> dict[str, Any]:
    entries: list[dict[str, Any]] = [top for top in line["run"]["top"] if top["name"] == name]
    [entry] = entries
    return entry


def cpu_seconds(entry: dict[str, Any], line: dict[str, Any]) -> float:
    return float(entry["cpu"]) / 100 * float(line["dt"]) * int(line["cores"])


def rounding(line: dict[str, Any], percent: float) -> float:
    """The CPU seconds a line's one-decimal percent and three-decimal `dt` may be off by."""
    return 0.05 / 100 * float(line["dt"]) * int(line["cores"]) + 0.0005 * percent / 100 * int(line["cores"])


@pytest.mark.parametrize("reader", ["proc", "psutil"])
def test_a_holder_a_spinner_and_a_sleeper_told_apart(tmp_path: Path, reader: str) -> None:
    """Each line names the three, the holder with its resident bytes as psutil reads them at the same moment, the
    sleeper idle; the spinner's CPU seconds over the lines are psutil's from the first reading to the last."""
    with holder_tree(tmp_path) as root:
        spinner = next(child for child in root.children() if child.name() != "sleep")
        holder_rss: list[tuple[int, int]] = []
        spun: list[tuple[float, float]] = []

        def around(read: Callable[[], Any]) -> Any:
            spun_before, rss_before = sum(spinner.cpu_times()[:2]), root.memory_info().rss
            got = read()
            spun.append((spun_before, sum(spinner.cpu_times()[:2])))
            holder_rss.append((rss_before, root.memory_info().rss))
            return got

        sampler = around(lambda: Sampler(root.pid, "", [], reader=reader))
        with sampler:
            found = []
            for _ in range(4):
                time.sleep(0.5)
                found.append(json.loads(around(sampler.line)))
    for line, (before, after) in zip(found, holder_rss[1:], strict=True):
        assert {"holder.py", "spinner.py", "sleep"} <= {top["name"] for top in line["run"]["top"]}, line["run"]
        holder = named(line, "holder.py")
        assert holder["rss"] >= 300 * MIB
        assert min(before, after) <= holder["rss"] <= max(before, after)
        assert named(line, "sleep")["cpu"] == 0.0
    spinning = [named(line, "spinner.py") for line in found]
    counted = sum(cpu_seconds(entry, line) for entry, line in zip(spinning, found, strict=True))
    slack = 2 * CLOCK_TICK + sum(rounding(line, entry["cpu"]) for entry, line in zip(spinning, found, strict=True))
    assert spun[-1][0] - spun[0][1] - slack <= counted <= spun[-1][1] - spun[0][0] + slack, (counted, spun)
    assert counted > 0.3  # it did spin


WRITER = """
import os, sys, time
path, go_on = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
block = b"\\1" * 1_000_000
for _ in range(int(sys.argv[3])):
    os.write(fd, block)
os.fsync(fd)
os.close(fd)
while not os.path.exists(go_on):
    time.sleep(0.05)
with open("/proc/self/io") as io:
    print(dict(line.split(": ") for line in io.read().splitlines())["write_bytes"], flush=True)
"""


def is_tmpfs(path: Path) -> bool:
    """Whether `path` is on tmpfs, whose pages are never written back: the kernel counts no `write_bytes` there."""
    mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
    best = max((fields for fields in mounts if str(path).startswith(fields[1].rstrip("/") + "/")),
               key=lambda fields: len(fields[1]))
    return best[2] == "tmpfs"


def test_the_runs_writes_are_its_own(tmp_path: Path) -> None:
    """COMMAND writes 200 MB and fsyncs while another process, outside the run, writes 300 MB: the run's `io`
    over the lines is what the kernel counted of COMMAND alone (its own `/proc/self/io`, printed at its end), 200 MB
    and not 500, while the host's `io` shows both."""
    if is_tmpfs(tmp_path):
        pytest.skip("tmpfs: nothing is written back, so nothing is counted")
    go_on, out = tmp_path / "go-on", tmp_path / "m.jsonl"
    command = [sys.executable, "-I", "-B", "-c", WRITER, str(tmp_path / "run"), str(go_on), "200"]
    sampler = subprocess.Popen(
        [sys.executable, "-m", "orca.sample", "--out", str(out), "--seconds", "0.5", "--", *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        # Once the run has begun (the sampler's first line is written, so its baseline is taken: on a loaded machine
        # its start can take seconds); COMMAND goes on to its end once this one has written and synced its 300 MB, so
        # that both writes fall within the run.
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_bytes().endswith(b"\n")) and time.monotonic() < deadline:
            time.sleep(0.05)
        subprocess.run([sys.executable, "-c", WRITER, str(tmp_path / "outside"), str(tmp_path), "300"],
                       stdout=subprocess.DEVNULL, check=True, timeout=120)
        go_on.touch()
        written, stderr = sampler.communicate(timeout=120)
    finally:
        sampler.kill()
        sampler.wait()
    assert sampler.returncode == 0, stderr
    assert 200_000_000 <= int(written) < 300_000_000
    found = lines(out)
    counted = sum(line["run"]["io"]["write"] * line["dt"] for line in found)
    # Each rate is whole bytes per second (0.5 B/s × dt off) over a `dt` of three decimals (0.0005 s of it).
    slack = sum(0.5 * line["dt"] + 0.0005 * line["run"]["io"]["write"] for line in found)
    assert abs(counted - int(written)) <= slack, (counted, written)
    host = sum(line["io"]["write"] * line["dt"] for line in found)
    assert host >= counted + 250_000_000, (host, counted)


# A script that, once told to, execs another script under the same interpreter: `comm` stays `python3`.
FIRST = """
import os, sys
print("first", flush=True)
sys.stdin.readline()
os.execv(sys.executable, [sys.executable, sys.argv[1]])
"""
SECOND = """
import sys
print("second", flush=True)
sys.stdin.readline()
"""


def test_a_script_that_execs_another_is_named_by_the_second(tmp_path: Path) -> None:
    """docs/behaviour.md §3.12 `top`'s `name`: `first.py` execs `python3 second.py`; the same pid, start and `comm`,
    but a new exec area (`stat` fields 45-51), so the name is made again: `second.py`."""
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text(FIRST)
    second.write_text(SECOND)
    root = subprocess.Popen([sys.executable, str(first), str(second)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            start_new_session=True)
    try:
        assert root.stdin is not None and root.stdout is not None
        assert root.stdout.readline() == b"first\n"
        with ProcessScanner() as scanner:
            assert scanner.reading(root.pid, "").unwrap().names == {root.pid: "first.py"}
            root.stdin.write(b"\n")
            root.stdin.flush()
            assert root.stdout.readline() == b"second\n"
            assert scanner.reading(root.pid, "").unwrap().names == {root.pid: "second.py"}
    finally:
        os.killpg(root.pid, signal.SIGKILL)
        root.wait()
