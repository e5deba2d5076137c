"""Which reader a sampler uses: ORCA_SAMPLE_READER forces one; otherwise psutil where /proc/stat cannot be read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orca.sample.shell.cli.sample import sample_main
from orca.sample.shell.machine import choice as reader_choice
from orca.sample.shell.machine.choice import (
    READER_VARIABLE,
    ReaderUnavailable,
    choose_reader,
    forced_reader,
    proc_stat_readable,
)
from orca.sample.shell.sampler import Sampler
from tests.conftest import HAS_PROC

needs_psutil = pytest.mark.skipif(not reader_choice.psutil_installed(), reason="psutil is not installed")


@pytest.mark.parametrize(("value", "expected"), [(None, None), ("", None), ("proc", "proc")])
def test_forced_values(value: str | None, expected: str | None) -> None:
    environ = {} if value is None else {READER_VARIABLE: value}
    assert forced_reader(environ) == expected


@pytest.mark.parametrize("value", ["Proc", "psutil ", "sysctl", "0"])
def test_any_other_value_is_refused_by_name(value: str) -> None:
    with pytest.raises(ReaderUnavailable, match=READER_VARIABLE):
        forced_reader({READER_VARIABLE: value})


def test_psutil_forced_without_psutil_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_choice, "psutil_installed", lambda: False)
    with pytest.raises(ReaderUnavailable, match="psutil is not installed"):
        forced_reader({READER_VARIABLE: "psutil"})


@needs_psutil
def test_psutil_forced_with_psutil() -> None:
    assert forced_reader({READER_VARIABLE: "psutil"}) == "psutil"
    assert choose_reader("psutil", "/a/fixture/tree", environ={}) == "psutil"


def test_the_argument_wins_over_the_environment() -> None:
    assert choose_reader("proc", environ={READER_VARIABLE: "psutil"}) == "proc"
    with pytest.raises(ReaderUnavailable):
        choose_reader("nope", environ={})


def test_without_a_readable_proc_stat_psutil_is_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's /proc/stat unreadable (as on macOS): psutil; and without psutil the /proc readers stay."""
    monkeypatch.setattr(reader_choice, "proc_stat_readable", lambda proc="/proc": False)
    monkeypatch.setattr(reader_choice, "psutil_installed", lambda: True)
    assert choose_reader(environ={}) == "psutil"
    monkeypatch.setattr(reader_choice, "psutil_installed", lambda: False)
    assert choose_reader(environ={}) == "proc"


def test_a_fixture_root_is_read_by_the_proc_readers(tmp_path: Path) -> None:
    """A `proc` root given in the machine's /proc's place is read as it is, even one without `stat`."""
    assert not proc_stat_readable(str(tmp_path))
    assert choose_reader(proc=str(tmp_path), environ={}) == "proc"


@pytest.mark.requires_proc
def test_this_machines_proc_is_read() -> None:
    assert proc_stat_readable()
    assert choose_reader(environ={}) == "proc"


@pytest.mark.parametrize(
    ("value", "installed", "reason"),
    [
        ("sysctl", True, "ORCA_SAMPLE_READER: 'sysctl' is neither `proc` nor `psutil`"),
        ("psutil", False, "ORCA_SAMPLE_READER=psutil, but psutil is not installed (pip install psutil)"),
    ],
)
def test_the_command_refuses_with_one_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str,
    installed: bool,
    reason: str,
) -> None:
    monkeypatch.setenv(READER_VARIABLE, value)
    monkeypatch.setattr(reader_choice, "psutil_installed", lambda: installed)
    out = tmp_path / "m.jsonl"
    assert sample_main(["orca", "sample", "--out", str(out), "--count", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"orca sample: {reason}"
    assert err[1].startswith("usage: orca sample")
    assert not out.exists()


@needs_psutil
def test_the_psutil_reader_line_has_the_same_keys_null_containers_and_no_pressure(tmp_path: Path) -> None:
    """With --cgroup the psutil reader's `containers` is null (cgroups are Linux's); `pressure` is absent."""
    sampler = Sampler(os.getpid(), "", [str(tmp_path)], cgroup=str(tmp_path), reader="psutil")
    line = json.loads(sampler.line())
    assert list(line) == [
        "v", "t", "dt", "host", "cores", "cpu", "mem", "disk", "io", "net", "containers", "self_cpu", "run", "start"
    ]
    assert line["containers"] is None
    assert line["cores"] >= 1
    assert line["mem"]["rss"] > 4 << 20  # this test's own interpreter, at least
    assert [disk["path"] for disk in line["disk"]] == [str(tmp_path)]


@pytest.mark.skipif(HAS_PROC, reason="this machine has a /proc: the automatic choice is the /proc reader")
@needs_psutil
def test_without_proc_the_sampler_reads_through_psutil() -> None:  # pragma: no cover - runs on macOS
    line = json.loads(Sampler(0, "", []).line())
    assert line["cpu"] is not None and line["mem"] is not None and line["net"] is not None
