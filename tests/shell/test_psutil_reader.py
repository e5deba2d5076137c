"""The psutil reader tells its failures as the /proc readers do (docs/behaviour.md §3.10, §8): a psutil call that
raises makes only its section null, says why once on standard error, and says it again only after it has read
well in between."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from orca.sample.shell.machine import choice as reader_choice
from orca.sample.shell.sampler import Sampler

pytestmark = pytest.mark.skipif(not reader_choice.psutil_installed(), reason="psutil is not installed")


class Switch:
    """A psutil function that raises while `failing`, else answers as the real one."""

    def __init__(self, real: Callable[..., object], error: Exception) -> None:
        self.real, self.error, self.failing = real, error, True

    def __call__(self, *args: object, **kwargs: object) -> object:
        if self.failing:
            raise self.error
        return self.real(*args, **kwargs)


def test_a_failing_psutil_call_nulls_its_section_and_is_told_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import psutil

    cpu = Switch(psutil.cpu_times, PermissionError("not allowed here"))
    monkeypatch.setattr(psutil, "cpu_times", cpu)
    capfd.readouterr()
    with Sampler(0, "", [str(tmp_path)], reader="psutil") as sampler:
        failing = [json.loads(sampler.line()) for _ in range(3)]
        said = capfd.readouterr().err.splitlines()
        cpu.failing = False
        sampler.line()  # the baseline reads again
        recovered = json.loads(sampler.line())
        cpu.failing = True
        json.loads(sampler.line())
        said_again = capfd.readouterr().err.splitlines()
    assert all(line["cpu"] is None and line["cores"] is None for line in failing)
    assert all(line["mem"] is not None and line["disk"] is not None for line in failing)  # only its own section
    assert said == ["orca sample: cannot read the CPU times through psutil: PermissionError: not allowed here"]
    assert recovered["cpu"] is not None and recovered["cores"] is not None
    assert said_again == said


def test_a_platform_without_disk_counters_is_null_without_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import psutil

    monkeypatch.setattr(psutil, "disk_io_counters", lambda perdisk=False: {})
    capfd.readouterr()
    with Sampler(0, "", [str(tmp_path)], reader="psutil") as sampler:
        lines = [json.loads(sampler.line()) for _ in range(2)]
    assert all(line["io"] is None and line["net"] is not None for line in lines)
    assert capfd.readouterr().err == ""


def test_a_directory_that_cannot_be_measured_names_itself(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    missing = "bad\0path"
    with Sampler(0, "", [missing], reader="psutil") as sampler:
        line = json.loads(sampler.line())
    assert line["disk"] is None
    [said] = capfd.readouterr().err.splitlines()
    assert said.startswith(f"orca sample: cannot read {missing}: ")
