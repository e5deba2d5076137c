"""SIGTERM right after start (SPEC 2.4): the handlers are in place before the sampler loads its readers."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def _catches_sigterm(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & SIGTERM_BIT)


def test_the_signal_module_loads_nothing_of_the_sampler() -> None:
    probe = (
        "import sys, orca.sample.shell.signals;"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('returns', 'toolz', 'orjson', 'boto3')"
        " or m.startswith(('orca.sample.parse', 'orca.sample.compute', 'orca.sample.shell.sampler'))];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.requires_proc  # watches /proc/<pid>/status for the moment the handler is in place
def test_sigterm_as_soon_as_it_is_caught_exits_0_without_a_line(tmp_path: Path) -> None:
    """A runner that stops a sampler it just started: exit 0, nothing written, no traceback."""
    out = tmp_path / "lines.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "orca.sample", "--out", str(out), "--seconds", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while not _catches_sigterm(process.pid):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.001)
    caught_at = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 0, stderr
    assert b"Traceback" not in stderr
    assert not out.exists() or out.read_bytes() == b""
    assert time.monotonic() - caught_at < 5
