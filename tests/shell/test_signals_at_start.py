"""A signal at any moment of the sampler's start (docs/behaviour.md §2.4, §5.1, §9.2, §9.3): from the first
statement of the project's code it is held or caught, and then handled as the docs say: plain sampling ends with
status 0 and no line; with `-- COMMAND` it is passed on once COMMAND starts, and the status is COMMAND's. Before that
statement is the interpreter's own start-up, the one window left: there the signal does what it does to any Python
program (kills it; SIGINT may print a traceback of the interpreter's start-up, never of the project's code). Never
status 0 for a COMMAND that did not run.

Signals are sent at moments spread over the first 50 ms, many times; whether the sampler held or caught the signal
when it was sent is read from `/proc/<pid>/status` just before sending, so that what the outcome must be does not
depend on the machine's speed."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.requires_proc

PYTHON = sys.executable
ORCA = str(Path(sys.executable).with_name("orca"))
MOMENTS_MS: tuple[float | None, ...] = (*range(0, 51, 2), None)
"""When a signal is sent, after the sampler's process is started; None: as soon as it holds or catches it (one run
that is sure to reach the sampler's own handling, however slow the machine)."""
PROJECT_FRAME = re.compile(r'File "([^"]*/orca/sample/[^"]*)", line (\d+)')
INIT = Path(__file__).resolve().parents[2] / "src" / "orca" / "sample" / "__init__.py"
HOLD_LINE = next((number for number, line in enumerate(INIT.read_text().splitlines(), start=1)
                  if "pthread_sigmask(" in line), 0)
"""The line of `orca.sample`'s first statements where every signal is held. Python runs a signal's handler at its
next check between bytecodes: a SIGINT that arrived before the hold can still raise `KeyboardInterrupt` at one of
the statements up to it (the interpreter's start-up handing it on), never later."""


def _status(pid: int) -> dict[str, str]:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)


def _taken(pid: int) -> bool:
    """Whether the sampler holds (blocks) or catches its signals now. SIGTERM tells: the project takes SIGINT,
    SIGTERM and SIGHUP in the same step, and the interpreter catches SIGINT itself (KeyboardInterrupt) earlier. A
    sampler that has ended (a zombie still shows the handlers it had) takes nothing: on a loaded machine this process
    can be held up for as long as a whole run takes."""
    status = _status(pid)
    if status.get("State", "Z")[:1] in "ZX":
        return False
    bit = 1 << (signal.SIGTERM - 1)
    return bool((int(status.get("SigCgt", "0"), 16) | int(status.get("SigBlk", "0"), 16)) & bit)


def _signal_state(pid: int) -> str:
    """What a sampler that did not end shows of its signals: its state, pending, held, ignored and caught ones."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError as error:
        return str(error)
    fields = ("State", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt", "Threads")
    return ", ".join(line for line in status.splitlines() if line.split(":")[0] in fields)


@dataclass(frozen=True)
class Outcome:
    taken: bool
    """The sampler held or caught the signal just before it was sent."""
    returncode: int
    stderr: str
    sent_ms: float
    """When the signal was sent, after the sampler's process was started (later than asked on a loaded machine)."""
    state: str
    """The sampler's signals just before it was sent (`_signal_state`): which were held, ignored, caught."""
    went_on: bool = False
    """The sampler did not end (it was then killed): the signal came in the interpreter's start-up and was lost."""


def _signalled(argv: list[str], signum: int, after_ms: float | None) -> Outcome:
    """`signum` sent `after_ms` after the start, or (None) as soon as the sampler holds or catches it."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    started = time.monotonic()
    try:
        if after_ms is None:
            deadline = started + 30
            while not _taken(process.pid):
                if process.poll() is not None:
                    raise AssertionError(f"the sampler ended, status {process.returncode}, before it took its "
                                         f"signals: {process.communicate()[1].decode(errors='replace')}")
                assert time.monotonic() < deadline, f"the sampler never took its signals: {_signal_state(process.pid)}"
        else:
            time.sleep(after_ms / 1000)
        state = _signal_state(process.pid)
        taken = _taken(process.pid)
        sent_ms = (time.monotonic() - started) * 1000
        process.send_signal(signum)
        went_on = False
        try:
            _, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            if taken or signum != signal.SIGINT:
                raise AssertionError(f"{signal.Signals(signum).name} sent {after_ms} ms after the start, taken: "
                                     f"{taken}; the sampler goes on: {_signal_state(process.pid)}") from None
            went_on = True  # see _lost_in_start_up
            os.killpg(process.pid, signal.SIGKILL)
            _, err = process.communicate()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return Outcome(taken, process.returncode, err.decode(errors="replace"), round(sent_ms, 1), state, went_on)


def _lost_in_start_up(outcome: Outcome) -> bool:
    """Whether a SIGINT came in the interpreter's start-up and was lost there (docs/behaviour.md §2.4): Python raised
    its `KeyboardInterrupt` inside a callback of its import machinery, where an exception is printed as ignored and
    dropped, and the sampler went on as if no signal had come."""
    if not outcome.went_on:
        return False
    assert not outcome.taken, outcome
    assert "Exception ignored in" in outcome.stderr and "KeyboardInterrupt" in outcome.stderr, outcome
    _no_traceback_of_the_project(outcome)
    return True


def _entries() -> list[list[str]]:
    entries = [[PYTHON, "-m", "orca.sample"]]
    if os.access(ORCA, os.X_OK):
        entries.append([ORCA, "sample"])  # the console script, where the set-up installed it
    return entries


def _no_traceback_of_the_project(outcome: Outcome) -> None:
    for path, line in PROJECT_FRAME.findall(outcome.stderr):
        assert Path(path) == INIT and int(line) <= HOLD_LINE, outcome.stderr
    if outcome.taken:
        assert "Traceback" not in outcome.stderr, outcome.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_from_the_first_moment_reaches_the_command_or_fails_the_run(tmp_path: Path, signum: int) -> None:
    """`orca sample -- COMMAND` cancelled right after it was started: the status is never 0 unless COMMAND ran, and
    once the sampler has the signal, it is COMMAND's (COMMAND ended by it: 128 + its number)."""
    ran = tmp_path / "ran"
    outcomes = []
    for entry in _entries():
        for moment in MOMENTS_MS:
            ran.unlink(missing_ok=True)
            # COMMAND outlives any hold-up of this process on a loaded machine: a signal sent after it had ended
            # would reach nothing, and the status be its 0. Passed on, the signal ends it at once: `exec`, as sh
            # waits for its running command to end before it ends by a SIGINT of its own.
            argv = [*entry, "--out", str(tmp_path / "m.jsonl"), "--seconds", "0.2", "--", "sh", "-c",
                    f"touch {ran}; exec sleep 20"]
            outcome = _signalled(argv, signum, moment)
            outcomes.append(outcome)
            _no_traceback_of_the_project(outcome)
            assert outcome.returncode != 0 or ran.exists(), (entry, moment, outcome)
            if outcome.taken:
                assert outcome.returncode == 128 + signum, (entry, moment, outcome)
    assert outcomes[-1].taken


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_from_the_first_moment_ends_plain_sampling_with_0(tmp_path: Path, signum: int) -> None:
    """Plain sampling stopped right after it was started: once the sampler has the signal, status 0 and no line."""
    out = tmp_path / "m.jsonl"
    outcomes = []
    for moment in (*MOMENTS_MS[:-1:2], None):
        out.unlink(missing_ok=True)
        outcome = _signalled([PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "5"], signum, moment)
        outcomes.append(outcome)
        if _lost_in_start_up(outcome):
            continue
        _no_traceback_of_the_project(outcome)
        if outcome.taken:
            assert outcome.returncode == 0, (moment, outcome)
            assert not out.exists() or out.read_bytes() == b"", moment
    assert outcomes[-1].taken


def test_importing_orca_sample_elsewhere_holds_and_catches_nothing() -> None:
    """Only the sampler's own start takes its signals: a program that imports `orca.sample` keeps its own."""
    probe = (
        "import signal, sys; sys.argv = ['pipeline', 'sample']; import orca.sample;"
        "print(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, signal.pthread_sigmask(signal.SIG_BLOCK, []))"
    )
    done = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split(None, 1) == ["True", "set()\n"], done.stdout


WATCH = """
import importlib.abc, json, signal, sys

def taken():
    held = signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    return held or signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None)

class Watch(importlib.abc.MetaPathFinder):
    seen = []
    def find_spec(self, name, path, target=None):
        if name.startswith('orca.sample.'):
            self.seen.append((name, taken()))
        return None

sys.meta_path.insert(0, Watch())
sys.argv, sys.orig_argv, entry = json.loads(sys.argv[1])
__import__(entry)
print(json.dumps(Watch.seen))
"""
"""Starts as the sampler would (its `sys.argv` and `sys.orig_argv`) and imports the entry point's module, noting
for each module of the project as it is looked for whether SIGTERM was held or caught by then."""


@pytest.mark.parametrize(
    ("argv", "orig_argv", "entry"),
    [
        (["-m", "--out", "-", "--", "true"], ["python3", "-m", "orca.sample", "--out", "-", "--", "true"],
         "orca.sample.__main__"),
        (["/venv/bin/orca", "sample", "--out", "-"], ["python3", "/venv/bin/orca", "sample", "--out", "-"],
         "orca.sample.shell.cli.main"),
    ],
    ids=["python -m orca.sample", "the console script"],
)
def test_the_signals_are_taken_before_any_other_module_of_the_project_loads(
    argv: list[str], orig_argv: list[str], entry: str
) -> None:
    import json

    # `__main__` would start the sampler: its parent package and the modules it imports are what is watched.
    entry = entry.removesuffix(".__main__") + (".shell.cli.sample" if entry.endswith("__main__") else "")
    done = subprocess.run([PYTHON, "-c", WATCH, json.dumps([argv, orig_argv, entry])], capture_output=True,
                          text=True, timeout=60, check=True)
    seen = json.loads(done.stdout)
    assert seen and all(taken for _, taken in seen), seen
