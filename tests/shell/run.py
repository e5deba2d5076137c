"""Helpers for tests that run the real sampler as a process (real processes, files and signals)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PREFIX = "orca-sample "


def command(*args: str) -> list[str]:
    """`python -m orca.sample ARGS` with the interpreter running the tests (the project's .venv)."""
    return [sys.executable, "-m", "orca.sample", *args]


def environment(**changes: str | None) -> dict[str, str]:
    """This environment without ORCA_SAMPLE_SECONDS, with `changes` applied (None removes a variable)."""
    env = {key: value for key, value in os.environ.items() if key != "ORCA_SAMPLE_SECONDS"}
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def start(*args: str, env: dict[str, str] | None = None, stdout: int = subprocess.PIPE) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command(*args), stdout=stdout, stderr=subprocess.PIPE, env=env if env is not None else environment()
    )


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 30) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        command(*args), capture_output=True, env=env if env is not None else environment(), timeout=timeout
    )


def parse_lines(data: bytes) -> list[dict[str, Any]]:
    """Every line of a sampler file: each must end with a newline and be one whole JSON object."""
    assert data == b"" or data.endswith(b"\n"), data[-200:]
    lines: list[dict[str, Any]] = []
    for raw in data.splitlines():
        value = json.loads(raw)
        assert isinstance(value, dict), raw
        lines.append(value)
    return lines


def read_lines(path: Path) -> list[dict[str, Any]]:
    return parse_lines(path.read_bytes())


def stdout_lines(data: bytes) -> list[dict[str, Any]]:
    """Lines of `--out -`: each prefixed `orca-sample ` (docs/behaviour.md §4.1)."""
    text = data.decode()
    assert text.endswith("\n"), text[-200:]
    lines = text.splitlines()
    assert all(line.startswith(PREFIX) for line in lines), lines
    return parse_lines("".join(line[len(PREFIX) :] + "\n" for line in lines).encode())


def no_traceback(stderr: bytes) -> None:
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")


def one_message(stderr: bytes, about: str) -> str:
    """What a run of failures leaves on standard error: no traceback, one line, naming `about`."""
    no_traceback(stderr)
    messages = stderr.decode().splitlines()
    assert len(messages) == 1, messages
    assert about in messages[0], messages
    return messages[0]
