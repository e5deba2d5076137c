"""The baseline read before the sampler loads (docs/behaviour.md §2.2): the kernel files' bytes and the clocks taken
first, parsed into the `Sampler`'s baseline later, the first line covering the time from them.

The fixture machine is the golden test's (tests/golden/test_sampler_line.py has the hand-worked values): its
`capture` readings are taken early, then `edited` is copied over them before the `Sampler` is made, so only a
baseline parsed from the early bytes gives the capture-to-edited differences.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orca.sample.compute.snapshot import host_readings
from orca.sample.shared.bounded import KeptFiles
from orca.sample.shell.cli import sample as cli
from orca.sample.shell.machine.early import KernelTexts, read_early, read_kernel_texts
from orca.sample.shell.machine.fs import FS
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


def early_of(proc: Path) -> KernelTexts:
    return read_early(FS(str(proc)))


def test_the_early_readings_are_the_kernel_files_bytes_or_why_not(proc: Path) -> None:
    before = time.monotonic_ns()
    early = early_of(proc)
    assert before <= early.monotonic_ns <= time.monotonic_ns()
    assert early.fs == FS(str(proc))
    assert early.stat == (str(proc / "stat"), (proc / "stat").read_bytes())
    assert early.meminfo == (str(proc / "meminfo"), (proc / "meminfo").read_bytes())
    assert early.net_dev == (str(proc / "net" / "dev"), (proc / "net" / "dev").read_bytes())
    [cpu, memory, io] = early.pressure
    assert cpu == (str(proc / "pressure" / "cpu"), PRESSURE_BEFORE.encode())
    assert memory[0] == str(proc / "pressure" / "memory") and isinstance(memory[1], FileNotFoundError)
    assert io[0] == str(proc / "pressure" / "io") and isinstance(io[1], FileNotFoundError)


def test_the_first_line_covers_the_time_from_the_early_readings(proc: Path) -> None:
    """The files change and time passes (the loading of the sampler) between the early readings and the Sampler:
    the first line's differences are from the early bytes, over the time since they were read."""
    early = early_of(proc)
    edit(proc)
    time.sleep(0.3)
    with Sampler(0, "", [], proc=str(proc), sys=str(MACHINE / "sys"), baseline=early) as sampler:
        assert sampler.started_ns == early.monotonic_ns
        line = json.loads(sampler.line())
    assert line["dt"] >= 0.3
    # `t` is the line's wall clock and `dt` its time since the baseline: together they date the early readings.
    assert abs(line["t"] - line["dt"] - early.wall) < 0.01
    assert_rates(line)


def test_later_lines_read_the_files_again(proc: Path) -> None:
    early = early_of(proc)
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
    early = early_of(proc)
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
    early = early_of(proc)
    other = tmp_path / "other"
    shutil.copytree(proc, other)
    with Sampler(0, "", [], proc=str(other), sys=str(MACHINE / "sys"), baseline=early) as sampler:
        assert sampler.started_ns > early.monotonic_ns
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    with Sampler(0, "", [], cgroup=str(cgroup), proc=str(proc), sys=str(MACHINE / "sys"), baseline=early) as sampler:
        assert sampler.started_ns > early.monotonic_ns


def test_the_command_takes_its_baseline_from_the_early_readings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`orca sample` hands what it read first to the Sampler: with time passing after the early readings (a slow
    start), the first line still covers the time from them."""
    taken: list[KernelTexts] = []

    def slow_start() -> KernelTexts:
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


def test_the_early_baseline_is_the_one_read_every_line(proc: Path) -> None:
    """From the same files, the readings parsed from the early bytes and those of a line's read (through kept
    descriptors) are the same; only their moment differs."""
    fs = FS(str(proc))
    early = host_readings(read_early(fs))
    files = KeptFiles(8)
    try:
        later = host_readings(read_kernel_texts(fs, files.read_each))
    finally:
        files.close()
    assert early.stat is not None and early.pressure is not None
    assert (early.stat, early.meminfo, early.diskstats, early.net, early.pressure, early.failures) == (
        later.stat, later.meminfo, later.diskstats, later.net, later.pressure, later.failures
    )
    assert early.monotonic_ns < later.monotonic_ns


class _PreemptedClocks:
    """The two clocks of a machine whose wall clock is `OFFSET` s ahead of its monotonic one; each call takes 1 µs,
    and the process is preempted for 10 ms between its first call and its second."""

    OFFSET = 1_796_000_000.0

    def __init__(self) -> None:
        self.now_ns = 5_000_000_000
        self.calls = 0

    def _tick(self) -> int:
        self.calls += 1
        self.now_ns += 1_000 + (10_000_000 if self.calls == 2 else 0)
        return self.now_ns

    def monotonic_ns(self) -> int:
        return self._tick()

    def time(self) -> float:
        return self.OFFSET + self._tick() / 1e9


def test_t_and_the_monotonic_reading_are_of_one_moment_though_preempted_between(
    proc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line's `t` steps by its `dt` only when both clocks are read at one moment: a preemption of 10 ms between
    the two calls must not put `t` 10 ms after the readings' monotonic time."""
    clocks = _PreemptedClocks()
    monkeypatch.setattr("orca.sample.shell.machine.early.time", clocks)
    texts = read_kernel_texts(FS(str(proc)))
    assert abs(texts.wall - (clocks.OFFSET + texts.monotonic_ns / 1e9)) < 0.001
