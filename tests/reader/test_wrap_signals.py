"""`orca sample -- COMMAND` and where a signal comes from (docs/behaviour.md §9.3, §9.5): a terminal's Ctrl-C
reaches COMMAND once, as the kernel sends it to the whole foreground process group; a signal sent to `orca sample`
alone is passed on, once; and as pid 1 or a child subreaper, `orca sample` reaps the orphans given to it while
COMMAND's own status stays COMMAND's. Real processes, a real pseudo-terminal and a real pid namespace."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

PYTHON = sys.executable
pytestmark = pytest.mark.requires_proc

CLEANS_UP = """\
import os, pathlib, select, signal, sys, time
delivered, wakeup = os.pipe()
os.set_blocking(wakeup, False)
signal.set_wakeup_fd(wakeup)  # a byte for each signal delivered, however close together (a handler may run once)
for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(signum, lambda signum, frame: None)
ready = pathlib.Path(sys.argv[1])
ready.touch()
select.select([delivered], [], [])
ready.with_name('got').touch()
while not ready.with_name('go').exists():
    time.sleep(0.01)
time.sleep(0.3)  # the clean-up: long enough for a second signal to land
sys.exit(0 if len(os.read(delivered, 64)) == 1 else 1)  # a second one: the user insisted, the clean-up given up
"""
"""A program that cleans up on a SIGINT, SIGTERM or SIGHUP and exits 0, or 1 when a second one came meanwhile. It
says it got the first (`got` beside `ready`) and waits for `go` before its clean-up's last 0.3 s."""


class CleansUp:
    """CLEANS_UP's files in a directory."""

    def __init__(self, directory: Path) -> None:
        self.ready, self.got, self.go = (directory / name for name in ("ready", "got", "go"))

    def sampled(self, out: Path) -> list[str]:
        """`orca sample` running it."""
        return [PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--", PYTHON, "-c", CLEANS_UP,
                str(self.ready)]


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert process.poll() is None and time.monotonic() < deadline, f"{path.name} did not come"
        time.sleep(0.01)


def controlling_terminal() -> None:
    """In the child, a session leader already (`start_new_session`): its standard input, a pty's slave, becomes
    its controlling terminal, its process group the terminal's foreground group."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """The master side of a pseudo-terminal."""

    def __init__(self, master: int) -> None:
        self.master = master

    def hang_up(self) -> None:
        """Close it, the terminal going away (once: its number may be another file's afterwards)."""
        if self.master >= 0:
            os.close(self.master)
            self.master = -1


@contextlib.contextmanager
def at_a_terminal(command: list[str]) -> Iterator[tuple[subprocess.Popen[bytes], Terminal]]:
    """`command` started as the session leader of a new pseudo-terminal, as a shell starts a job in the foreground;
    its session is killed at the end."""
    master, slave = os.openpty()
    terminal = Terminal(master)
    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                               preexec_fn=controlling_terminal)
    os.close(slave)
    try:
        yield process, terminal
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        terminal.hang_up()


def test_ctrl_c_at_a_terminal_reaches_the_command_once(tmp_path: Path) -> None:
    """The terminal's ^C: the kernel sends SIGINT to the foreground process group, `orca sample` and COMMAND both;
    passing it on as well would be a second Ctrl-C. `orca sample` is held stopped until COMMAND has taken the
    terminal's, so a copy passed on could not merge with it into one pending signal."""
    out, command = tmp_path / "m.jsonl", CleansUp(tmp_path)
    with at_a_terminal(command.sampled(out)) as (sampler, terminal):
        wait_for(command.ready, sampler)
        os.kill(sampler.pid, signal.SIGSTOP)
        interrupt = termios.tcgetattr(terminal.master)[6][termios.VINTR]
        os.write(terminal.master, interrupt)  # the terminal's Ctrl-C
        wait_for(command.got, sampler)
        os.kill(sampler.pid, signal.SIGCONT)
        command.go.touch()
        assert sampler.wait(timeout=30) == 0
    assert "exit" in json.loads(out.read_bytes().splitlines()[-1])["run"]  # sampled to COMMAND's end


def test_a_hangup_of_the_terminal_reaches_the_command_once(tmp_path: Path) -> None:
    """The terminal goes away: the kernel sends SIGHUP to the session's leader, `orca sample`, alone; it is passed
    on."""
    out, command = tmp_path / "m.jsonl", CleansUp(tmp_path)
    with at_a_terminal(command.sampled(out)) as (sampler, terminal):
        wait_for(command.ready, sampler)
        terminal.hang_up()
        wait_for(command.got, sampler)
        command.go.touch()
        assert sampler.wait(timeout=30) == 0


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_sent_to_orca_sample_alone_reaches_the_command_once(tmp_path: Path, signum: int) -> None:
    """`kill -INT <pid of orca sample>`, a runner's SIGTERM: COMMAND has it only because it is passed on."""
    out, command = tmp_path / "m.jsonl", CleansUp(tmp_path)
    sampler = subprocess.Popen(command.sampled(out), stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(command.ready, sampler)
        sampler.send_signal(signum)
        wait_for(command.got, sampler)
        command.go.touch()
        _, err = sampler.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sampler.pid, signal.SIGKILL)
    assert sampler.returncode == 0, err


# --- as pid 1 or a child subreaper ----------------------------------------------------------------------------------

ORPHANS = """\
import os, pathlib, sys, time
reaper = os.getppid()  # orca sample, to which the orphans are given
for _ in range(10):
    child = os.fork()
    if child == 0:
        if os.fork() == 0:
            os._exit(0)  # the grandchild, an orphan once its parent has gone
        os._exit(0)
    os.waitpid(child, 0)

def orphans():
    found = []
    for name in os.listdir('/proc'):
        if name.isdigit() and int(name) != os.getpid():
            try:
                fields = open(f'/proc/{name}/stat').read().rpartition(')')[2].split()
            except OSError:
                continue  # reaped meanwhile
            if int(fields[1]) == reaper:
                found.append(fields[0])
    return found

deadline = time.monotonic() + 5
while orphans() and time.monotonic() < deadline:
    time.sleep(0.02)
pathlib.Path(sys.argv[1]).write_text(' '.join(orphans()))
sys.exit(3)
"""
"""COMMAND: ten orphans that end at once, then waits (5 s at most) for every process given to `orca sample` but
itself to be gone, writes the states of those left (`Z`: a zombie nobody reaps), and exits 3."""


def assert_orphans_reaped(done: subprocess.CompletedProcess[bytes], left: Path, out: Path) -> None:
    assert done.returncode == 3, done.stderr  # COMMAND's own status: not taken by the reaping
    assert left.read_text() == ""
    assert json.loads(out.read_bytes().splitlines()[-1])["run"]["exit"]["code"] == 3


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="a pid namespace needs root")
def test_as_pid_1_the_orphans_are_reaped(tmp_path: Path) -> None:
    """A container's entrypoint: `orca sample` is its pid namespace's init, to which every orphan goes."""
    out, left = tmp_path / "m.jsonl", tmp_path / "left"
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", PYTHON, "-m", "orca.sample", "--out",
                           str(out), "--seconds", "0.2", "--", PYTHON, "-c", ORPHANS, str(left)],
                          capture_output=True, timeout=60)
    assert_orphans_reaped(done, left, out)


PR_SET_CHILD_SUBREAPER = 36


def subreaper() -> None:
    """In the child before its exec: it becomes a child subreaper (prctl(2); kept across execve)."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        os._exit(99)


def test_as_a_child_subreaper_the_orphans_are_reaped(tmp_path: Path) -> None:
    out, left = tmp_path / "m.jsonl", tmp_path / "left"
    done = subprocess.run([PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--", PYTHON, "-c",
                           ORPHANS, str(left)], capture_output=True, timeout=60, preexec_fn=subreaper)
    assert_orphans_reaped(done, left, out)


# --- every catchable signal, not only the stop signals (docs/behaviour.md §9.3) ---------------------------------

PASSED_ON = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGQUIT)
"""A log reopen, a second user signal, a JVM's thread dump: the last one ends COMMAND."""

TAKES_EACH = """\
import pathlib, signal, sys, time
got = pathlib.Path(sys.argv[1])
def note(signum, frame):
    got.write_text(got.read_text() + f'{signum} ' if got.exists() else f'{signum} ')
    if signum == signal.SIGQUIT:
        sys.exit(7)
for signum in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGQUIT):
    signal.signal(signum, note)
pathlib.Path(sys.argv[2]).touch()
time.sleep(60)
"""
"""COMMAND: notes each of PASSED_ON it is given, and exits 7 on SIGQUIT."""


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _send_each_and_wait(sampler: subprocess.Popen[bytes], target: int, got: Path) -> bytes:
    """PASSED_ON sent to `target` (orca sample), one at a time, each once COMMAND has noted the one before."""
    for count, signum in enumerate(PASSED_ON, start=1):
        os.kill(target, signum)
        deadline = time.monotonic() + 30
        while len(got.read_text().split() if got.exists() else []) < count:
            assert sampler.poll() is None or signum == signal.SIGQUIT, "orca sample ended"
            assert time.monotonic() < deadline, f"{signum} did not reach COMMAND"
            time.sleep(0.01)
    _, err = sampler.communicate(timeout=30)
    return err


def _assert_each_passed_on(sampler: subprocess.Popen[bytes], err: bytes, got: Path, out: Path) -> None:
    assert got.read_text().split() == [str(int(signum)) for signum in PASSED_ON]
    assert sampler.returncode == 7, err  # COMMAND's status, not the signal's
    assert json.loads(out.read_bytes().splitlines()[-1])["run"]["exit"]["code"] == 7  # sampled to its end


def test_user_signals_and_sigquit_reach_the_command(tmp_path: Path) -> None:
    """`kill -USR1 <pid of orca sample>` (a log reopen), SIGUSR2, SIGQUIT: passed on, none ends the sampler."""
    out, got, ready = tmp_path / "m.jsonl", tmp_path / "got", tmp_path / "ready"
    sampler = subprocess.Popen([PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--", PYTHON,
                                "-c", TAKES_EACH, str(got), str(ready)], stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        wait_for(ready, sampler)
        err = _send_each_and_wait(sampler, sampler.pid, got)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sampler.pid, signal.SIGKILL)
        sampler.wait()
    _assert_each_passed_on(sampler, err, got, out)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="a pid namespace needs root")
def test_as_pid_1_user_signals_and_sigquit_reach_the_command(tmp_path: Path) -> None:
    """`docker kill -s USR1` of a container whose entrypoint is `orca sample -- COMMAND`: the kernel drops a signal
    that pid 1 leaves at its default, so the sampler must take each to pass it on."""
    out, got, ready = tmp_path / "m.jsonl", tmp_path / "got", tmp_path / "ready"
    sampler = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", PYTHON, "-m",
                                "orca.sample", "--out", str(out), "--seconds", "0.2", "--", PYTHON, "-c", TAKES_EACH,
                                str(got), str(ready)], stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(ready, sampler)
        (init,) = _children(sampler.pid)  # orca sample, pid 1 of the namespace
        err = _send_each_and_wait(sampler, init, got)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sampler.pid, signal.SIGKILL)
        sampler.wait()
    _assert_each_passed_on(sampler, err, got, out)


COUNTS_QUITS = """\
import pathlib, signal, sys, time
quits = []
signal.signal(signal.SIGQUIT, lambda signum, frame: quits.append(signum))
pathlib.Path(sys.argv[1]).touch()
time.sleep(1)
sys.exit(len(quits))
"""
"""COMMAND: exits with the number of SIGQUITs it got within a second of being ready."""


def test_ctrl_backslash_at_a_terminal_reaches_the_command_once(tmp_path: Path) -> None:
    """The terminal's SIGQUIT (a JVM's thread dump) goes to the foreground process group, as Ctrl-C's SIGINT does:
    COMMAND has it once, and the sampler, which takes it, neither dies of it nor passes it on."""
    out, ready = tmp_path / "m.jsonl", tmp_path / "ready"
    with at_a_terminal([PYTHON, "-m", "orca.sample", "--out", str(out), "--seconds", "0.2", "--", PYTHON, "-c",
                        COUNTS_QUITS, str(ready)]) as (sampler, terminal):
        wait_for(ready, sampler)
        os.write(terminal.master, termios.tcgetattr(terminal.master)[6][termios.VQUIT])
        assert sampler.wait(timeout=30) == 1
    assert json.loads(out.read_bytes().splitlines()[-1])["run"]["exit"]["code"] == 1
