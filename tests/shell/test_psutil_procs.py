"""The run's processes through psutil (platforms without /proc), with real processes: the API's functions as they
answer where psutil is the platform, and the sampler's psutil scanner; and the portable pipe."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

psutil = pytest.importorskip("psutil")

from orca.sample.shell.procs import portable  # noqa: E402
from orca.sample.shell.procs.portable import alive, tree_rss, tree_usage  # noqa: E402
from orca.sample.shell.procs.psutil_procs import PsutilReadings, PsutilScanner, tree_members  # noqa: E402
from orca.sample.shell.procs.states import DEAD_STATES  # noqa: E402
from tests.shell.psutil_trees import HOLDS, MEMBER, MIB, started_tree  # noqa: E402


@pytest.fixture
def through_psutil(monkeypatch: pytest.MonkeyPatch) -> None:
    """The API's functions answering as on a platform without /proc: psutil is the one chosen at import."""
    monkeypatch.setattr(portable, "machine_readings", PsutilReadings)


def run_rss(scanner: PsutilScanner, root: int | None, argv0: str) -> int:
    rss = scanner.reading(root, argv0).unwrap().rss_bytes
    assert rss is not None
    return rss

# What the process runs after its exec: a line to say it is there, then a wait.
EXEC = "'echo; sleep 60'"


@pytest.mark.usefixtures("through_psutil")
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
@pytest.mark.usefixtures("through_psutil")
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
        run = PsutilScanner()
        alone = run_rss(run, None, name)
        assert alone >= HOLDS * MIB
        both = run_rss(run, holder.pid, name)  # the same process as tree and match: counted once
        assert abs(both - alone) <= 0.02 * alone
        assert run_rss(run, None, "no-such-argv0-anywhere") == 0
    finally:
        holder.kill()
        holder.wait()
    assert run_rss(run, None, name) == 0
    # Seen first as a Python interpreter; then the same process (same pid and start time) execs a shell as `name`.
    execing = subprocess.Popen(
        [sys.executable, "-c", f"import os, sys; sys.stdin.readline(); os.execv('/bin/sh', [{name!r}, '-c', {EXEC}])"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert execing.stdin is not None and execing.stdout is not None
        assert run_rss(run, None, name) == 0
        execing.stdin.write(b"go\n")
        execing.stdin.flush()
        execing.stdout.readline()
        assert run_rss(run, None, name) > 0
    finally:
        execing.kill()
        execing.wait()


@pytest.mark.requires_proc
@pytest.mark.slow
def test_psutil_and_proc_trees_agree() -> None:
    """The same tree through psutil and through /proc: resident bytes within 2%, the same CPU seconds within 2%
    (the two reads are a few milliseconds apart and the members sleep)."""
    from orca.sample.shell.procs.procfs import ProcReadings

    with started_tree() as parent:
        readings: dict[str, ProcReadings | PsutilReadings] = {"proc": ProcReadings("/proc"), "psutil": PsutilReadings()}
        usage = {}
        for name, platform in readings.items():
            trees, resident, used = platform.tree_figures([parent.pid])
            [tree] = trees.values()
            usage[name] = (sum(map(resident.get, tree, [0] * len(tree))), sum(used[pid] for pid in tree)
                           / platform.ticks_per_second)
        through_proc, through_psutil = usage["proc"], usage["psutil"]
        assert abs(through_proc[0] - through_psutil[0]) <= 0.02 * through_proc[0]
        assert abs(through_proc[1] - through_psutil[1]) <= max(0.02 * through_proc[1], 0.02)
        states = {name: platform.state(parent.pid) for name, platform in readings.items()}
        assert all(state is not None and state not in DEAD_STATES for state in states.values()), states


def test_the_platform_is_chosen_once_at_import_and_the_functions_ask_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The API's functions answer through the platform's readings (here psutil's, as where there is no /proc), and
    the platform is that of this machine, decided when the module was imported: no call asks again."""
    assert ("proc" if os.path.isdir("/proc") else "psutil") == portable.PLATFORM
    isdir = os.path.isdir

    def asked_again(path: str) -> bool:
        assert path != "/proc", "asked again whether there is a /proc"
        return isdir(path)

    with monkeypatch.context() as patched:
        patched.setattr(os.path, "isdir", asked_again)
        assert portable.alive(os.getpid())
        assert os.getpid() in portable.tree_usage([os.getpid()])
    asked: list[str] = []

    class Recording(PsutilReadings):
        def state(self, pid: int) -> str | None:
            asked.append("state")
            return super().state(pid)

        def run_resident(self, root: int | None, argv0: str) -> dict[int, int]:
            asked.append("run_resident")
            return dict(super().run_resident(root, argv0))

        def tree_figures(self, roots: list[int]) -> tuple[dict[int, frozenset[int]], dict[int, int], dict[int, int]]:
            asked.append("tree_figures")
            return super().tree_figures(roots)

    monkeypatch.setattr(portable, "machine_readings", Recording)
    assert portable.alive(os.getpid())
    assert portable.tree_rss(os.getpid()) > 0
    assert os.getpid() in portable.tree_usage([os.getpid()])
    assert asked == ["state", "run_resident", "tree_figures"]


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
