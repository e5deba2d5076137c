"""What `orca metrics` and `orca schema` do when standard output will not take what they print: a reader that has gone
(`| head`) ends the output quietly; a full disk, an I/O error or a closed standard output is one message and exit 1,
never a traceback nor an `Exception ignored` at exit. Run as a user runs them, with standard output buffered."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

from tests.reader.test_hostile_input import one_line_runs

ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
"""Buffered, as a user's shell runs it: a write that fails may then fail at exit's last flush, not where it was made."""


@pytest.fixture(params=["many", "one", "json", "fleet"])
def arguments(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    many = one_line_runs(tmp_path / "cron.jsonl", 3000)
    one = tmp_path / "one" / "run.jsonl"
    one.parent.mkdir()
    one.write_text(many.read_text().splitlines(keepends=True)[0])
    return {"many": [str(many)], "one": [str(one)], "json": ["--json", str(many)],
            "fleet": [str(many), str(one)]}[request.param]


def started(command: list[str], stdout: int | IO[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "orca.sample", *command], env=ENVIRONMENT, stdout=stdout,
                            stderr=subprocess.PIPE)


def test_a_reader_that_goes_ends_the_output_quietly(arguments: list[str]) -> None:
    process = started(["metrics", *arguments], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()
        status = process.wait(timeout=60)
        assert (status, process.stderr.read().decode()) == (0, "")
    finally:
        process.kill()
        process.wait()


FULL = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")


def full_disk(command: list[str]) -> tuple[int, str]:
    with open("/dev/full", "w") as full:
        process = started(command, stdout=full)
        _, err = process.communicate(timeout=60)
    return process.returncode, err.decode()


@FULL
def test_a_full_disk_is_one_message_and_exit_1(arguments: list[str]) -> None:
    assert full_disk(["metrics", *arguments]) == (1, f"orca metrics: cannot write to standard output: "
                                                     f"{os.strerror(28)}\n")


@FULL
def test_the_schema_to_a_full_disk_is_one_message_and_exit_1() -> None:
    assert full_disk(["schema"]) == (1, f"orca schema: cannot write to standard output: {os.strerror(28)}\n")


def test_a_closed_standard_output_is_one_message_and_exit_1(arguments: list[str]) -> None:
    done = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "orca.sample", "metrics",
                           *arguments], env=ENVIRONMENT, capture_output=True, timeout=60)
    assert (done.returncode, done.stderr.decode()) == (1, "orca metrics: cannot write to standard output: it is "
                                                          "closed\n")
