"""A fleet's files read through the local executor (`readback/shell/many.py`): what `orca metrics` prints is the same
as when one process reads them all, a process that dies costs only time, and a file that cannot be read is said
once."""

from __future__ import annotations

import os
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
    assert printed(["--json", str(fleet_dir)], capsys) == alone
    assert forks == [1, 1]
    assert sorted(read_here) == sorted(str(path) for path in fleet_dir.glob("*.jsonl"))  # every group, here


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
