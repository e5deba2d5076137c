"""The `Sampler`'s quick path (README, "Performance"): on the fixture machine, a sampler taking it and one making every
line by the general path write the same lines through files that change, fail and come back, and a disk that
appears; the quick path makes the usual line, hands the unusual one to the general path, and is given up after
`QUICK_MISSES_AT_MOST` general lines in a row.

Both samplers read the same files at the same clock (the clocks are set by the test), so only `self_cpu`, the
sampler's own CPU, can differ.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orca.sample.compute import quick
from orca.sample.shell.sampler import QUICK_MISSES_AT_MOST, Sampler
from tests.golden.test_sampler_line import MACHINE

PARTITION = " 254       1 vda1 0 0 {} 0 0 0 {} 0 0 0 0 0 0 0 0 0 0\n"
"""A partition of the fixture's one whole disk (vda): counted only by the skip list, which /sys/block's list
replaces."""
PRESSURE = "some avg10=0.00 avg60=0.00 avg300=0.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"


@pytest.fixture
def proc(tmp_path: Path) -> Path:
    """The fixture machine's capture, with all three pressure files, as a kernel with PSI has them."""
    root = tmp_path / "proc"
    shutil.copytree(MACHINE / "capture" / "proc", root)
    (root / "pressure").mkdir()
    for resource in ("cpu", "memory", "io"):
        (root / "pressure" / resource).write_text(PRESSURE.format(1000))
    diskstats = root / "diskstats"
    diskstats.write_text(diskstats.read_text() + PARTITION.format(0, 0))
    return root


class Clock:
    """`time.monotonic_ns` and `time.time` as the test sets them: 2 s a line."""

    def __init__(self) -> None:
        self.ns = 10**12

    def monotonic_ns(self) -> int:
        return self.ns

    def time(self) -> float:
        return 1_796_000_000.0 + self.ns / 1e9


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(time, "monotonic_ns", fake.monotonic_ns)
    monkeypatch.setattr(time, "time", fake.time)
    return fake


@pytest.fixture
def quick_lines(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each call of `quick.line` made the line (True) or left it to the general path (False)."""
    made: list[bool] = []
    real = quick.line

    def spy(*args: Any, **kwargs: Any) -> bytes | None:
        data = real(*args, **kwargs)
        made.append(data is not None)
        return data

    monkeypatch.setattr(quick, "line", spy)
    return made


def both(proc: Path) -> Iterator[Sampler]:
    sys_root = str(MACHINE / "sys")
    yield Sampler(0, "", [str(proc)], proc=str(proc), sys=sys_root)
    yield Sampler(0, "", [str(proc)], proc=str(proc), sys=sys_root, quick_lines=False)


def lines_of(samplers: list[Sampler], clock: Clock) -> list[dict[str, Any]]:
    clock.ns += 2 * 10**9
    lines = [json.loads(sampler.line()) for sampler in samplers]
    for line in lines:
        line.pop("self_cpu")
    return lines


def test_the_quick_path_writes_the_general_paths_lines(proc: Path, clock: Clock, quick_lines: list[bool]) -> None:
    samplers = list(both(proc))
    diskstats = proc / "diskstats"
    diskstats.write_text(diskstats.read_text().replace(PARTITION.format(0, 0), PARTITION.format(800, 1600)))
    fast, general = lines_of(samplers, clock)
    assert fast == general
    assert fast["io"] == {"read": 0, "write": 0}  # the first line already knows vda1 is not a whole disk
    assert quick_lines == [True]  # the fixture's files read as the kernel prints them

    # Every counter moves (the golden test's edited machine) and the pressure totals with them.
    shutil.copytree(MACHINE / "edited" / "proc", proc, dirs_exist_ok=True)
    diskstats.write_text(diskstats.read_text() + PARTITION.format(800, 1600))
    for resource, total in (("cpu", 11000), ("memory", 5000), ("io", 1_001_000)):
        (proc / "pressure" / resource).write_text(PRESSURE.format(total))
    fast, general = lines_of(samplers, clock)
    assert fast == general
    # 10,000, 4,000 and 1,000,000 µs of stall in 2 s (Documentation/accounting/psi.rst: totals in µs).
    assert fast["pressure"] == {"cpu": 0.5, "memory": 0.2, "io": 50.0}
    assert quick_lines == [True, True]

    # A disk appears: the general path reads /sys/block again and makes that line; the next one is quick again.
    diskstats.write_text(diskstats.read_text() + " 254      16 vdb 0 0 800 0 0 0 1600 0 0 0 0 0 0 0 0 0 0\n")
    for _ in range(2):
        fast, general = lines_of(samplers, clock)
        assert fast == general
    assert quick_lines == [True, True, False, True]


def test_a_failure_goes_to_the_general_path_which_tells_it_until_it_reads_again(
    proc: Path, clock: Clock, quick_lines: list[bool], capfd: pytest.CaptureFixture[str]
) -> None:
    samplers = list(both(proc))
    meminfo = proc / "meminfo"
    good = meminfo.read_bytes()
    meminfo.write_text("nothing here\n")
    capfd.readouterr()
    for _ in range(QUICK_MISSES_AT_MOST + 1):  # a failure that lasts does not make the quick path give up
        fast, general = lines_of(samplers, clock)
        assert fast == general and fast["mem"] is None
    # Each sampler said it once.
    assert capfd.readouterr().err.splitlines() == [f"orca sample: cannot read {meminfo}: no `Key: value` line"] * 2
    assert quick_lines == [False]  # the later lines were not even tried: the failure had not read well since
    meminfo.write_bytes(good)
    fast, general = lines_of(samplers, clock)
    assert fast == general and fast["mem"] is not None
    fast, general = lines_of(samplers, clock)
    assert fast == general
    assert quick_lines == [False, True]
    meminfo.unlink()
    fast, general = lines_of(samplers, clock)
    assert fast == general and fast["mem"] is None
    assert capfd.readouterr().err.splitlines() == [f"orca sample: cannot read {meminfo}: No such file or directory"] * 2


def test_the_quick_path_is_given_up_after_lines_it_cannot_make(
    proc: Path, clock: Clock, quick_lines: list[bool]
) -> None:
    """A kernel with one pressure file of three (not how any kernel prints them): every line is the general
    path's, and after `QUICK_MISSES_AT_MOST` of them the quick one is no longer tried."""
    (proc / "pressure" / "io").unlink()
    samplers = list(both(proc))
    for _ in range(QUICK_MISSES_AT_MOST + 3):
        fast, general = lines_of(samplers, clock)
        assert fast == general and set(fast["pressure"]) == {"cpu", "memory"}
    assert quick_lines == []  # the counters do not read as the quick path expects: never a quick line
    assert samplers[0]._quick_paths is None
