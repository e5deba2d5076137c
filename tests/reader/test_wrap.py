"""`orca sample -- COMMAND`: the command's exit status, its standard streams untouched, signals passed on, and the
run's memory in the lines. Real processes throughout."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from orca.sample.shell.cli.wrap import exit_status

PYTHON = sys.executable


def sample_command(out: Path, *command: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--", *command],
        input=stdin, capture_output=True, timeout=60,
    )


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(raw) for raw in path.read_bytes().splitlines()]


@pytest.mark.parametrize(("code", "expected"), [("0", 0), ("3", 3)])
def test_the_commands_exit_status(tmp_path: Path, code: str, expected: int) -> None:
    out = tmp_path / "m.jsonl"
    done = sample_command(out, "sh", "-c", f"sleep 0.5; exit {code}")
    assert done.returncode == expected, done.stderr
    assert done.stderr == b""
    # Sampled while it ran (about 0.5 s at 0.2 s), and one line at least however short.
    assert 1 <= len(lines(out)) <= 10


def test_killed_by_a_signal_is_128_plus_its_number(tmp_path: Path) -> None:
    done = sample_command(tmp_path / "m.jsonl", "sh", "-c", "kill -KILL $$")
    assert done.returncode == 128 + signal.SIGKILL


def test_a_command_not_found_is_127_and_not_executable_is_126(tmp_path: Path) -> None:
    missing = sample_command(tmp_path / "m.jsonl", str(tmp_path / "no-such-command"))
    assert missing.returncode == 127
    assert missing.stderr.decode().startswith("orca sample: cannot run ")
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    if os.access(script, os.X_OK):
        pytest.skip("running as a user for whom every file is executable")
    refused = sample_command(tmp_path / "m.jsonl", str(script))
    assert refused.returncode == 126
    assert "Permission denied" in refused.stderr.decode()


def test_standard_streams_pass_through_untouched(tmp_path: Path) -> None:
    data = bytes(range(256)) * 64 + b"no newline at the end"
    done = sample_command(tmp_path / "m.jsonl", PYTHON, "-c",
                          "import sys; d = sys.stdin.buffer.read(); sys.stdout.buffer.write(d); "
                          "sys.stderr.buffer.write(d[:10])", stdin=data)
    assert done.returncode == 0
    assert done.stdout == data
    assert done.stderr == data[:10]


def test_the_runs_memory_is_the_commands(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    # 64 MiB touched by a grandchild (the command's own child): the tree's rss counts it.
    grandchild = "import time; x = bytearray(64 << 20); time.sleep(1.2)"
    done = sample_command(out, PYTHON, "-c", f"import subprocess; subprocess.run([{PYTHON!r}, '-c', {grandchild!r}])")
    assert done.returncode == 0
    rss = [line["mem"]["rss"] for line in lines(out) if isinstance(line["mem"], dict)]
    assert max(rss) >= 64 << 20


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signals_go_on_to_the_command_and_the_last_line_is_still_written(tmp_path: Path, signum: int) -> None:
    out, ready, got = tmp_path / "m.jsonl", tmp_path / "ready", tmp_path / "got"
    child = (
        "import pathlib, signal, sys, time\n"
        "def stop(n, f):\n"
        f"    pathlib.Path({str(got)!r}).write_text(f'{{n}} {{time.time()}}')\n"
        "    time.sleep(0.5)\n"
        "    sys.exit(7)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "signal.signal(signal.SIGINT, stop)\n"
        "signal.signal(signal.SIGHUP, stop)\n"
        f"pathlib.Path({str(ready)!r}).touch()\n"
        "time.sleep(60)\n"
    )
    sampler = subprocess.Popen([PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--",
                                PYTHON, "-c", child], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not ready.exists() or not out.exists():
        assert time.monotonic() < deadline, "the command did not start"
        time.sleep(0.05)
    sampler.send_signal(signum)
    _, err = sampler.communicate(timeout=30)
    assert sampler.returncode == 7, err
    received, at = got.read_text().split()
    assert int(received) == signum
    # The sampler kept sampling after the signal and wrote a line once the command ended (0.5 s later).
    assert float(lines(out)[-1]["t"]) > float(at)  # type: ignore[arg-type]


def test_pid_with_a_command_is_malformed(tmp_path: Path) -> None:
    done = subprocess.run([PYTHON, "-m", "orca.sample", "--out", "-", "--pid", "1", "--", "true"],
                          capture_output=True, timeout=30)
    assert done.returncode == 2
    assert b"--pid and a COMMAND" in done.stderr


def test_exit_status_as_a_shell_reports_it() -> None:
    assert [exit_status(code) for code in (0, 1, 255, -2, -15)] == [0, 1, 255, 130, 143]


@pytest.mark.parametrize("args", [["--count", "1"], ["--count", "1", "--", "true"]])
def test_the_sampler_never_loads_the_reader_or_the_plotting(tmp_path: Path, args: list[str]) -> None:
    """Nor boto3 or pandas. (msgspec it does load: the line's records are its Structs, as the reader's are.)"""
    out = tmp_path / "m.jsonl"
    probe = (
        "import sys\n"
        "from orca.sample.shell.cli.main import dispatch\n"
        f"status = dispatch(['orca', 'sample', '--out', {str(out)!r}, *{args!r}])\n"
        "reader = ('orca.sample.readback.sample_line', 'orca.sample.readback.shell.cli.metrics',\n"
        "          'orca.sample.readback.shell.sources')\n"
        "others = ('matplotlib', 'boto3', 'botocore', 'pandas')\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in others or m in reader]\n"
        "print(status, sorted(loaded))\n"
    )
    done = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "0 []", done.stderr
    assert len(lines(out)) >= 1


# --- signals ignored when orca sample started (docs/sampling.md, "Sampling a command") -------------------------


def _ignoring(*signums: int) -> Callable[[], None]:
    """A `preexec_fn` that starts the process with `signums` ignored, as `nohup` or `trap '' HUP INT` would."""

    def ignore() -> None:
        for signum in signums:
            signal.signal(signum, signal.SIG_IGN)

    return ignore


def _ignored_mask(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16)


def _bit(signum: int) -> int:
    return 1 << (signum - 1)


@pytest.mark.requires_proc  # reads SigIgn in /proc/<pid>/status
def test_signals_ignored_at_start_stay_ignored_for_the_command(tmp_path: Path) -> None:
    """What the command inherits: the dispositions of `trap '' HUP INT`, not orca's forwarding handlers."""
    report = tmp_path / "ignored"
    command = f"import os, pathlib; pathlib.Path({str(report)!r}).write_text(str(os.getpid()) + ' ' + " \
              "next(l for l in open('/proc/self/status') if l.startswith('SigIgn:')).split()[1])"
    done = subprocess.run([PYTHON, "-m", "orca.sample", "--out", str(tmp_path / "m.jsonl"), "--seconds", "0.2",
                           "--", PYTHON, "-c", command], capture_output=True, timeout=60,
                          preexec_fn=_ignoring(signal.SIGHUP, signal.SIGINT))
    assert done.returncode == 0, done.stderr
    ignored = int(report.read_text().split()[1], 16)
    assert ignored & _bit(signal.SIGHUP) and ignored & _bit(signal.SIGINT), hex(ignored)
    assert not ignored & _bit(signal.SIGTERM), hex(ignored)  # not ignored at start: not ignored for the command


CATCHER = (
    "import pathlib, signal, sys, time\n"
    "got = pathlib.Path(sys.argv[1])\n"
    "def note(n, f):\n"
    "    got.write_text(got.read_text() + f'{n} ' if got.exists() else f'{n} ')\n"
    "    if n == signal.SIGTERM:\n"
    "        sys.exit(5)\n"
    "for s in (signal.SIGINT, signal.SIGTERM):\n"  # SIGINT caught even though it came in ignored
    "    signal.signal(s, note)\n"
    "pathlib.Path(sys.argv[2]).touch()\n"
    "time.sleep(60)\n"
)


def _wait_for(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert process.poll() is None and time.monotonic() < deadline, "the command did not start"
        time.sleep(0.02)


def test_a_signal_ignored_at_start_is_not_passed_on(tmp_path: Path) -> None:
    """SIGINT ignored when orca started (a shell's background job): orca neither dies of it nor passes it on, while
    SIGTERM, which it caught, still goes on to the command."""
    out, got, ready = tmp_path / "m.jsonl", tmp_path / "got", tmp_path / "ready"
    sampler = subprocess.Popen([PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--",
                                PYTHON, "-c", CATCHER, str(got), str(ready)], stderr=subprocess.PIPE,
                               preexec_fn=_ignoring(signal.SIGINT))
    try:
        _wait_for(ready, sampler)
        sampler.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert sampler.poll() is None
        assert not got.exists()
        sampler.send_signal(signal.SIGTERM)
        _, err = sampler.communicate(timeout=30)
    finally:
        sampler.kill()
    assert sampler.returncode == 5, err
    assert got.read_text().split() == [str(int(signal.SIGTERM))]


@pytest.mark.skipif(shutil.which("nohup") is None, reason="no nohup on this machine")
def test_nohup_orca_sample_survives_a_hangup(tmp_path: Path) -> None:
    """`nohup orca sample -- long-job`, and the terminal goes away: SIGHUP to the whole process group. Both go on,
    the command's own status is the exit status, and the line written when it ends is written."""
    out, ready = tmp_path / "m.jsonl", tmp_path / "ready"
    job = f"import pathlib, sys, time; pathlib.Path({str(ready)!r}).touch(); time.sleep(1); sys.exit(3)"
    sampler = subprocess.Popen(["nohup", PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--",
                                PYTHON, "-c", job], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        _wait_for(ready, sampler)
        hung_up_at = time.time()
        os.killpg(sampler.pid, signal.SIGHUP)
        _, err = sampler.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sampler.pid, signal.SIGKILL)
    assert sampler.returncode == 3, err
    assert float(lines(out)[-1]["t"]) > hung_up_at + 0.5  # type: ignore[arg-type]


def _caller(ignored: int, blocked: int) -> Callable[[], None]:
    """A `preexec_fn`: the process starts with `ignored` ignored and `blocked` blocked, as its caller left them."""

    def set_up() -> None:
        signal.signal(ignored, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {blocked})

    return set_up


@pytest.mark.requires_proc  # reads SigIgn and SigBlk in /proc/<pid>/status
def test_the_command_starts_with_the_callers_dispositions_and_mask(tmp_path: Path) -> None:
    """COMMAND's signals are what `orca sample`'s caller left: SIGHUP ignored, SIGUSR2 blocked, every other signal at
    its default and unblocked, those the sampler's own process changed included (Python's SIGPIPE and SIGXFSZ, the C
    library's own, 32 and 33 in glibc), as a shell would start it."""
    done = subprocess.run([PYTHON, "-m", "orca.sample", "--out", str(tmp_path / "m.jsonl"), "--seconds", "0.2", "--",
                           "grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status"],  # a shell or Python would change them
                          capture_output=True, timeout=60, preexec_fn=_caller(signal.SIGHUP, signal.SIGUSR2))
    assert done.returncode == 0, done.stderr
    masks = {name.rstrip(":"): int(value, 16) for name, value in map(str.split, done.stdout.decode().splitlines())}
    expected = {"SigIgn": _bit(signal.SIGHUP), "SigBlk": _bit(signal.SIGUSR2)}
    assert masks == expected, {name: hex(mask) for name, mask in masks.items()}


def test_sampling_that_breaks_before_the_command_starts_still_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/behaviour.md §9.2: a sampler never fails its run, nor reads as its success: COMMAND runs unsampled, and
    its status is returned."""
    from orca.sample.shell.cli import flags
    from orca.sample.shell.cli.sample import sample_main

    def broken(args: list[str]) -> object:
        raise RuntimeError("a fault in the sampler")

    monkeypatch.setattr(flags, "parse", broken)
    ran = tmp_path / "ran"
    status = sample_main(["orca", "sample", "--out", str(tmp_path / "m.jsonl"), "--", "sh", "-c",
                          f"touch {ran}; exit 3"])
    assert (status, ran.exists()) == (3, True)
