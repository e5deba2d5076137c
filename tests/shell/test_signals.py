"""SIGTERM right after start (docs/behaviour.md §2.4): the handlers are in place before the sampler loads its
readers."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.shell.run import no_traceback, read_lines, start

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
        "import sys, orca.sample.shell.cli.signals;"
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


# The runner's SIGTERM lands just after the sampler has ended by itself (its last line written, `--count` reached):
# the hook sends it between the end of sampling and the exit of the process, where the handlers used to be the
# default ones again.
LATE_SIGNAL = """
import os, runpy, signal, sys
import orca.sample.shell.cli.sample as cli

real = cli.sample_main
signum = int(sys.argv[1])

def sample_main_then_a_signal(*args, **kwargs):
    status = real(*args, **kwargs)
    os.kill(os.getpid(), signum)
    return status

cli.sample_main = sample_main_then_a_signal
sys.argv = ["orca.sample", *sys.argv[2:]]
runpy.run_module("orca.sample", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_after_the_end_condition_still_exits_0(tmp_path: Path, signum: signal.Signals) -> None:
    """A signal at any moment from the handlers' installation to the process's exit gives exit 0."""
    out = tmp_path / "lines.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", LATE_SIGNAL, str(int(signum)), "--out", str(out), "--count", "1", "--seconds", "0.05"],
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, (done.returncode, done.stderr)
    no_traceback(done.stderr)
    assert len(read_lines(out)) == 1


def _sighup_after(process: subprocess.Popen[bytes], out: Path, lines: int) -> bytes:
    """SIGHUP to `process` once `out` holds `lines` lines; its standard error once it has ended."""
    try:
        deadline = time.monotonic() + 20
        while (not out.exists() or len(out.read_bytes().splitlines()) < lines) and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGHUP)
        _, stderr = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0, stderr
    return stderr


def test_sighup_ends_the_sampler_like_sigterm(tmp_path: Path) -> None:
    """The terminal or session that started the sampler went away: no further line, exit 0."""
    out = tmp_path / "lines.jsonl"
    assert _sighup_after(start("--out", str(out), "--seconds", "0.1"), out, 2) == b""
    assert len(read_lines(out)) >= 2


def _ignore_sighup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def test_a_sampler_started_under_nohup_is_not_ended_by_sighup(tmp_path: Path) -> None:
    """SIGHUP ignored when the sampler started (`nohup orca sample ...`) stays ignored: the hangup ends nothing, and
    every `--count` line is written."""
    out = tmp_path / "lines.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "orca.sample", "--out", str(out), "--seconds", "0.1", "--count", "6"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_ignore_sighup,
    )
    assert _sighup_after(process, out, 1) == b""
    assert len(read_lines(out)) == 6
