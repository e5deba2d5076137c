"""The baseline read before the sampler loads (docs/behaviour.md §2.2): the kernel files' bytes and the clocks taken
first, parsed into the `Sampler`'s baseline later, the first line covering the time from them.

The fixture machine is the golden test's (tests/golden/test_sampler_line.py has the hand-worked values): its
`capture` readings are taken early, then `edited` is copied over them before the `Sampler` is made, so only a
baseline parsed from the early bytes gives the capture-to-edited differences.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from orca.sample.compute.snapshot import Snapshot
from orca.sample.shell.cli import sample as cli
from orca.sample.shell.machine import kernel as readers
from orca.sample.shell.machine.early import RATE_FILES, EarlyReadings, read_early
from orca.sample.shell.sampler import Sampler
from tests.golden.test_sampler_line import MACHINE, rate_bounds
from tests.shell.run import no_traceback, read_lines

# The capture-to-edited differences, as tests/golden/test_sampler_line.py works them out by hand.
CPU = {"user": 44.4, "system": 11.1, "iowait": 11.1, "steal": 0.0, "busiest": 80.0}
IO = {"read": 1000 * 512, "write": 2000 * 512}
NET = {"in": 5000, "out": 3000}
# /proc/pressure/cpu's `some` total before and after: 10,000 µs of stall (Documentation/accounting/psi.rst).
PRESSURE_BEFORE = "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
PRESSURE_AFTER = "some avg10=0.00 avg60=0.00 avg300=0.00 total=11000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
STALL_SECONDS = 0.01


@pytest.fixture
def proc(tmp_path: Path) -> Path:
    """The fixture machine's capture, with a pressure file for the cpu."""
    root = tmp_path / "proc"
    shutil.copytree(MACHINE / "capture" / "proc", root)
    (root / "pressure").mkdir()
    (root / "pressure" / "cpu").write_text(PRESSURE_BEFORE)
    return root


def edit(proc: Path) -> None:
    shutil.copytree(MACHINE / "edited" / "proc", proc, dirs_exist_ok=True)
    (proc / "pressure" / "cpu").write_text(PRESSURE_AFTER)


def assert_rates(line: dict[str, Any]) -> None:
    """Every rate is the capture-to-edited difference over the line's own dt."""
    dt = line["dt"]
    assert line["cpu"] == CPU
    for section, deltas in (("io", IO), ("net", NET)):
        for key, delta in deltas.items():
            low, high = rate_bounds(delta, dt)
            assert low <= line[section][key] <= high, (section, key, line[section], dt)
    stall = 100 * STALL_SECONDS
    assert stall / (dt + 0.0005) - 0.05 <= line["pressure"]["cpu"] <= stall / (dt - 0.0005) + 0.05, line


def test_the_early_readings_are_the_rate_files_bytes_or_why_not(proc: Path) -> None:
    before = time.monotonic_ns()
    early = read_early(str(proc))
    assert before <= early.monotonic_ns <= time.monotonic_ns()
    assert early.proc == str(proc)
    assert sorted(early.texts) == sorted(os.path.join(proc, name) for name in RATE_FILES)
    assert early.texts[os.path.join(proc, "stat")] == (proc / "stat").read_bytes()
    assert early.texts[os.path.join(proc, "net", "dev")] == (proc / "net" / "dev").read_bytes()
    missing = early.texts[os.path.join(proc, "pressure", "io")]
    assert isinstance(missing, FileNotFoundError)


def test_the_first_line_covers_the_time_from_the_early_readings(proc: Path) -> None:
    """The files change and time passes (the loading of the sampler) between the early readings and the Sampler:
    the first line's differences are from the early bytes, over the time since they were read."""
    early = read_early(str(proc))
    edit(proc)
    time.sleep(0.3)
    with Sampler(0, "", [], proc=str(proc), sys=str(MACHINE / "sys"), baseline=early) as sampler:
        assert sampler.started_ns == early.monotonic_ns
        line = json.loads(sampler.line())
    assert line["dt"] >= 0.3
    # `t` is the line's wall clock and `dt` its time since the baseline: together they date the early readings.
    assert abs(line["t"] - line["dt"] - early.wall) < 0.01
    assert_rates(line)
    assert readers._GIVEN == {}  # nothing left over for a later read


def test_later_lines_read_the_files_again(proc: Path) -> None:
    early = read_early(str(proc))
    with Sampler(0, "", [], proc=str(proc), sys=str(MACHINE / "sys"), baseline=early) as sampler:
        assert json.loads(sampler.line())["cpu"] == dict.fromkeys(CPU, 0.0)  # nothing moved yet
        edit(proc)
        time.sleep(0.05)
        assert_rates(json.loads(sampler.line()))


@pytest.mark.parametrize("why", ["missing", "malformed"])
def test_an_early_file_that_failed_is_told_like_any_reading(
    proc: Path, why: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """The early bytes of /proc/stat could not be read, or do not parse: the message is the one a line's reading
    gives, once, when they are parsed; the first line's cpu is null, the next one's is there again."""
    stat = proc / "stat"
    good = stat.read_bytes()
    if why == "missing":
        stat.unlink()
    else:
        stat.write_text("nothing here\n")
    early = read_early(str(proc))
    stat.write_bytes(good)
    capfd.readouterr()
    with Sampler(0, "", [], proc=str(proc), sys=str(MACHINE / "sys"), baseline=early) as sampler:
        said = capfd.readouterr().err.splitlines()
        assert len(said) == 1 and said[0].startswith(f"orca sample: cannot read {stat}: "), said
        assert json.loads(sampler.line())["cpu"] is None
        assert json.loads(sampler.line())["cpu"] is not None


def test_readings_of_another_root_or_without_the_containers_are_not_used(proc: Path, tmp_path: Path) -> None:
    """Early readings cover the host's files under one proc root: a Sampler of another root, or with `--cgroup`
    (whose containers' counters have no early reading), takes its baseline when it is made."""
    early = read_early(str(proc))
    other = tmp_path / "other"
    shutil.copytree(proc, other)
    with Sampler(0, "", [], proc=str(other), sys=str(MACHINE / "sys"), baseline=early) as sampler:
        assert sampler.started_ns > early.monotonic_ns
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    with Sampler(0, "", [], cgroup=str(cgroup), proc=str(proc), sys=str(MACHINE / "sys"), baseline=early) as sampler:
        assert sampler.started_ns > early.monotonic_ns
    assert readers._GIVEN == {}


def test_the_command_takes_its_baseline_from_the_early_readings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`orca sample` hands what it read first to the Sampler: with time passing after the early readings (a slow
    start), the first line still covers the time from them."""
    taken: list[EarlyReadings] = []

    def slow_start() -> EarlyReadings:
        taken.append(read_early())
        time.sleep(0.3)
        return taken[-1]

    monkeypatch.setattr(cli, "read_early", slow_start)
    out = tmp_path / "lines.jsonl"
    assert cli.sample_main(["orca", "sample", "--out", str(out), "--count", "1"]) == 0
    [line] = read_lines(out)
    [early] = taken
    assert line["dt"] >= 0.3
    assert abs(line["t"] - line["dt"] - early.wall) < 0.01


@pytest.mark.parametrize(
    "args", [["--out", "FILE", "--bogus"], ["--out", "FILE", "--seconds", "x"], ["--out", "FILE", "--help"]]
)
def test_a_command_line_found_wrong_after_the_readings_writes_nothing(
    tmp_path: Path, args: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lines.jsonl"
    args = [str(out) if arg == "FILE" else arg for arg in args]
    status = cli.sample_main(["orca", "sample", *args])
    captured = capfd.readouterr()
    assert not out.exists()
    if "--help" in args:
        assert status == 0
        assert captured.out.startswith("usage: orca sample --out <location>")
        return
    assert status == 2
    assert captured.out == ""
    reason, usage = captured.err.split("\n", 1)
    assert reason.startswith("orca sample: ")
    assert usage.startswith("usage: orca sample --out <location>")


# What the start loads before its baseline readings: the heavier imports (the flags' parser, typing, dataclasses, the
# parsers and compute functions, the encoder) must all come after.
HEAVY = (
    "'argparse', 'typing', 'dataclasses', 'returns', 'toolz', 'orjson', 'orca.sample.parse', 'orca.sample.compute',"
    " 'orca.sample.shell.sampler', 'orca.sample.shell.cli.flags', 'orca.sample.shell.machine.kernel'"
)
BEFORE_THE_READINGS = f"""
import runpy, sys
import orca.sample.shell.cli.sample as cli

real = cli.read_early

def read_early_and_look():
    readings = real()
    heavy = sorted(m for m in sys.modules if m.startswith(({HEAVY})))
    sys.stderr.write(f"loaded before the readings: {{heavy}}\\n")
    return readings

cli.read_early = read_early_and_look
sys.argv = ["orca.sample", *sys.argv[1:]]
runpy.run_module("orca.sample", run_name="__main__", alter_sys=True)
"""


@pytest.mark.requires_proc
def test_the_readings_come_before_the_heavier_imports(tmp_path: Path) -> None:
    out = tmp_path / "lines.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", BEFORE_THE_READINGS, "--out", str(out), "--count", "1", "--seconds", "0.05"],
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    no_traceback(done.stderr)
    assert done.stderr.decode().splitlines() == ["loaded before the readings: []"]
    [line] = read_lines(out)
    assert line["cpu"] is not None


def test_the_command_module_is_light_to_import() -> None:
    """Both entry points (`python -m orca.sample`, the `orca` script) import it before the readings."""
    entry_points = "orca.sample.shell.cli.main, orca.sample.shell.cli.sample"
    probe = f"import sys, {entry_points}; print(sorted(m for m in sys.modules if m.startswith(({HEAVY}))))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_given_bytes_stand_in_only_for_the_thread_parsing_them(tmp_path: Path) -> None:
    """While the baseline is parsed from early bytes, another thread's read of the same file reads the file."""
    path = tmp_path / "stat"
    path.write_bytes(b"now\n")
    seen: dict[str, str] = {}

    def take() -> str:
        other = threading.Thread(target=lambda: seen.setdefault("other", readers.read_kernel_file(str(path))))
        other.start()
        other.join()
        return readers.read_kernel_file(str(path))

    assert readers.reading_given({str(path): b"early\n"}, take) == "early\n"
    assert seen == {"other": "now\n"}
    assert readers.read_kernel_file(str(path)) == "now\n"


def test_the_early_baseline_is_the_one_read_when_made(proc: Path) -> None:
    """From the same files, the baseline parsed from early bytes and the one a Sampler reads when made are the same
    readings; only their moment (and the sampler's own CPU so far) differ."""
    early = read_early(str(proc))
    sys_root = str(MACHINE / "sys")
    with Sampler(0, "", [], proc=str(proc), sys=sys_root, baseline=early) as given, Sampler(
        0, "", [], proc=str(proc), sys=sys_root
    ) as read:
        given_baseline, read_baseline = given._previous_snapshot(), read._previous_snapshot()
        assert given_baseline.stat is not None and given_baseline.pressure is not None
        assert undated(given_baseline) == undated(read_baseline)


def undated(snapshot: Snapshot) -> Snapshot:
    return dataclasses.replace(snapshot, monotonic_ns=0, wall=0.0, self_cpu=0.0)
