"""The run's processes through psutil (platforms without /proc), with real processes; and the portable pipe."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

psutil = pytest.importorskip("psutil")

from orca.sample.shell.procs import portable, psutil_procs  # noqa: E402
from orca.sample.shell.procs.psutil_procs import RunRss, alive, tree_members, tree_rss, tree_usage  # noqa: E402
from tests.shell.psutil_trees import HOLDS, MEMBER, MIB, started_tree  # noqa: E402

# What the process runs after its exec: a line to say it is there, then a wait.
EXEC = "'echo; sleep 60'"


def test_alive_running_missing_and_zombie() -> None:
    assert alive(os.getpid())
    assert not alive(0) and not alive(-1)
    assert not alive(2**40)  # beyond any pid
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 10
        while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(child.pid), "exited but not reaped: a zombie has ended"
    finally:
        child.wait()
    assert not alive(child.pid)


@pytest.mark.slow
def test_tree_rss_and_usage_of_a_started_tree() -> None:
    with started_tree() as parent:
        members = tree_members(parent.pid)
        assert len(members) == 3
        assert parent.pid in members
        rss = tree_rss(parent.pid)
        assert rss >= 3 * HOLDS * MIB
        [(root, (resident, seconds))] = tree_usage([parent.pid, 2**40]).items()
        assert root == parent.pid
        assert abs(resident - rss) <= 0.02 * rss
        assert seconds > 0  # three interpreters started and touched their ballast
        assert tree_rss(2**40) == 0 and tree_usage([2**40]) == {}


@pytest.mark.slow
def test_match_counts_each_process_once_and_follows_an_exec() -> None:
    """--match through psutil: the processes whose argv[0] is the name, the --pid tree's own counted once; a
    process that execs to another argv[0] (its name changes) is read again."""
    name = f"orca-psutil-match-{os.getpid()}"
    holder = subprocess.Popen([name, "-c", MEMBER], executable=sys.executable, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None
        holder.stdout.readline()
        run = RunRss()
        alone = run.run_rss(None, name)
        assert alone >= HOLDS * MIB
        both = run.run_rss(holder.pid, name)  # the same process as tree and match: counted once
        assert abs(both - alone) <= 0.02 * alone
        assert run.run_rss(None, "no-such-argv0-anywhere") == 0
    finally:
        holder.kill()
        holder.wait()
    assert run.run_rss(None, name) == 0
    # Seen first as a Python interpreter; then the same process (same pid and start time) execs a shell as `name`.
    execing = subprocess.Popen(
        [sys.executable, "-c", f"import os, sys; sys.stdin.readline(); os.execv('/bin/sh', [{name!r}, '-c', {EXEC}])"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert execing.stdin is not None and execing.stdout is not None
        assert run.run_rss(None, name) == 0
        execing.stdin.write(b"go\n")
        execing.stdin.flush()
        execing.stdout.readline()
        assert run.run_rss(None, name) > 0
    finally:
        execing.kill()
        execing.wait()


@pytest.mark.requires_proc
@pytest.mark.slow
def test_psutil_and_proc_trees_agree() -> None:
    """The same tree through psutil and through /proc: resident bytes within 2%, the same CPU seconds within 2%
    (the two reads are a few milliseconds apart and the members sleep)."""
    from orca.sample.shell.procs import scanner as procs

    with started_tree() as parent:
        through_proc = procs.tree_usage([parent.pid])[parent.pid]
        through_psutil = tree_usage([parent.pid])[parent.pid]
        assert abs(through_proc[0] - through_psutil[0]) <= 0.02 * through_proc[0]
        assert abs(through_proc[1] - through_psutil[1]) <= max(0.02 * through_proc[1], 0.02)
        assert procs.alive(parent.pid) == alive(parent.pid) is True


def test_portable_functions_ask_psutil_without_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where there is no /proc, the API's functions answer through psutil (here: /proc made to look absent)."""
    monkeypatch.setattr(portable, "_psutil_instead", lambda proc: True)
    asked: list[str] = []

    def recording(name: str) -> Callable[..., object]:
        real = getattr(psutil_procs, name)

        def record(*args: object) -> object:
            asked.append(name)
            return real(*args)

        return record

    for name in ("alive", "tree_rss", "tree_usage"):
        monkeypatch.setattr(psutil_procs, name, recording(name))
    assert portable.alive(os.getpid())
    assert portable.tree_rss(os.getpid()) > 0
    assert os.getpid() in portable.tree_usage([os.getpid()])
    assert asked == ["alive", "tree_rss", "tree_usage"]


@pytest.mark.parametrize("has_pipe2", [True, False])
def test_the_wake_up_pipe_with_and_without_pipe2(monkeypatch: pytest.MonkeyPatch, has_pipe2: bool) -> None:
    """macOS has no pipe2: the pipe is made non-blocking and non-inheritable afterwards."""
    if not has_pipe2:
        monkeypatch.delattr(os, "pipe2", raising=False)
    elif not hasattr(os, "pipe2"):
        pytest.skip("no pipe2 on this platform")
    read_fd, write_fd = portable.nonblocking_pipe()
    try:
        for fd in (read_fd, write_fd):
            assert not os.get_blocking(fd)
            assert not os.get_inheritable(fd)
        with pytest.raises(BlockingIOError):
            os.read(read_fd, 1)
        os.write(write_fd, b"x")
        assert os.read(read_fd, 1) == b"x"
    finally:
        os.close(read_fd)
        os.close(write_fd)
