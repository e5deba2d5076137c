"""A fleet's files read through the local executor (`readback/shell/many.py`): what `orca metrics` prints is the same
as when one process reads them all, a process that dies costs only time, and a file that cannot be read is said
once."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from orca.sample.readback.shell import many
from orca.sample.readback.shell.cli.metrics import metrics_main
from orca.sample.readback.shell.sources import sources_at
from tests.fleet.fleets import mixed, write_fleet
from tests.reader.test_parts import counting_forks


def printed(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = metrics_main(arguments)
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture
def fleet_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_fleet(tmp_path, mixed(9))
    monkeypatch.setattr(many, "MIN_SPREAD_BYTES", 0)  # a small fleet spread all the same
    return tmp_path


@pytest.mark.parametrize("arguments", [["--json"], []])
def test_spread_over_cores_as_read_by_one(fleet_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], arguments: list[str]) -> None:
    monkeypatch.setattr(many, "usable_cores", lambda: 1)
    alone = printed([*arguments, str(fleet_dir)], capsys)
    monkeypatch.setattr(many, "usable_cores", lambda: 3)
    forks = counting_forks(monkeypatch)
    spread = printed([*arguments, str(fleet_dir)], capsys)
    assert spread == alone and alone[0] == 0
    assert forks == [1, 1, 1]  # the pool's three processes; this one reads nothing


def test_a_process_that_dies_costs_only_time(fleet_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(many, "usable_cores", lambda: 1)
    alone = printed(["--json", str(fleet_dir)], capsys)
    here = os.getpid()
    real = sources_at
    read_here: list[str] = []

    def dies_elsewhere(places: Any) -> Any:
        if os.getpid() != here:
            os.kill(os.getpid(), signal.SIGKILL)  # as a process killed for its memory would
        read_here.extend(name for name, _ in places)
        return real(places)

    monkeypatch.setattr(many, "sources_at", dies_elsewhere)
    monkeypatch.setattr(many, "usable_cores", lambda: 2)
    forks = counting_forks(monkeypatch)
    status, out, err = printed(["--json", str(fleet_dir)], capsys)
    assert (status, out) == alone[:2]
    assert forks == [1, 1]
    assert sorted(read_here) == sorted(str(path) for path in fleet_dir.glob("*.jsonl"))  # every group, here
    # Each task that failed is said once, naming its first file: a worker killed shows as what it is.
    said = [line for line in err.splitlines() if DIED.fullmatch(line)]
    assert said and [line for line in err.splitlines() if line not in said] == alone[2].splitlines(), err
    firsts = sorted(line.split(": ")[1].split(" and ")[0] for line in said)
    assert len(set(firsts)) == len(firsts) and set(firsts) <= set(read_here)


DIED = re.compile(r"orca metrics: \S+(?: and \d+ more)?: a worker failed reading (?:it|them): BrokenProcessPool: A "
                  r"process in the process pool was terminated abruptly.*; (?:it was|they were) read here")


def test_when_no_process_can_be_made_it_is_said_once(fleet_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(many, "usable_cores", lambda: 1)
    alone = printed(["--json", str(fleet_dir)], capsys)

    def no_fork() -> int:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setattr(many, "usable_cores", lambda: 2)
    status, out, err = printed(["--json", str(fleet_dir)], capsys)
    assert (status, out) == alone[:2]
    first = sorted(fleet_dir.glob("*.jsonl"))[0]
    assert err == (f"orca metrics: {first} and 8 more: no worker could be started for them: Too many open files; "
                   f"they were read here\n{alone[2]}")


def test_a_file_that_cannot_be_read_among_them(fleet_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/proc/self/mem").exists():
        pytest.skip("no /proc")
    bad = fleet_dir / "worker-001.jsonl"
    bad.unlink()
    bad.symlink_to("/proc/self/mem")  # opened, but cannot be read from its start
    monkeypatch.setattr(many, "usable_cores", lambda: 2)
    status, out, err = printed([str(fleet_dir)], capsys)
    assert status == 1
    assert err.splitlines() == [f"orca metrics: {bad}: Input/output error"]
    assert "no lines (1):\n  worker-001  could not be read\n" in out
    assert out.startswith("instance") and "total: 8 runs" in out
