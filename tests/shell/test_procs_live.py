"""shell/procs/ against real processes on this machine (docs/behaviour.md §2.3, §3.4, §6).

Every process started here is ended and reaped before its test returns: the trees are built so that killing the
leaves lets each parent's `wait` return, and the test reaps the root.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from orca.sample.shared.sysconf import page_size
from orca.sample.shell.procs import procfs, tree_files
from orca.sample.shell.procs.argv0s import Argv0Files
from orca.sample.shell.procs.portable import alive, tree_rss, tree_usage
from orca.sample.shell.procs.scanner import ProcessScanner
from orca.sample.shell.procs.tree_files import TreeFiles
from orca.sample.shell.procs.walk import ProcRoot, walk_tree
from tests.shell.descriptors import open_descriptors

MIB = 1024 * 1024
SLEEP = "/bin/sleep"
# The sums below are compared with psutil's, read a moment apart: idle processes barely change, but allow the 2%
# of slack rather than demand byte equality between two passes.
TOLERANCE = 0.02

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def psutil_tree_rss(root: int) -> int:
    """What psutil says the tree holds: `memory_info().rss` of the root and `children(recursive=True)`."""
    parent = psutil.Process(root)
    return sum(process.memory_info().rss for process in [parent, *parent.children(recursive=True)])


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def stat_ppid(pid: int) -> int:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return -1
    return int(data[data.rfind(b")") + 1 :].split()[1])


def stat_state(pid: int) -> str:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return ""
    return data[data.rfind(b")") + 1 :].split()[0].decode()


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def end_tree(root: subprocess.Popen[bytes]) -> None:
    """End `root` and everything under it, each parent reaping its own children.

    Only the leaves are killed: each root here `wait`s for its children (sh's `wait`, or a Python root once its
    stdin closes), so it reaps them and ends by itself; then this test reaps the root.
    """
    tree = descendants(root.pid)
    for process in tree:
        try:
            if not process.children():
                process.kill()
        except psutil.NoSuchProcess:
            pass
    if root.stdin is not None:
        root.stdin.close()
    if not tree:
        root.kill()
    try:
        root.wait(timeout=20)
    except subprocess.TimeoutExpired:
        root.kill()
        root.wait(timeout=20)


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts: whatever happens, each one's tree is ended and the process reaped."""
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        end_tree(process)


def python(code: str, started: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    started.append(process)
    return process


def read_ready(process: subprocess.Popen[bytes]) -> None:
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"


# A child that makes `touched` bytes resident (bytes * n writes every byte), says so, and waits for stdin to close.
TOUCHING_CHILD = "import sys; held = b'\\x01' * {touched}; print('ready', flush=True); sys.stdin.read()"
# A root that starts `count` children from `child`, waits until each is ready, then waits for stdin to close.
ROOT = """
import subprocess, sys
kids = [subprocess.Popen([sys.executable, '-c', {child!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for _ in range({count})]
for kid in kids:
    kid.stdout.readline()
print('ready', flush=True)
sys.stdin.read()
for kid in kids:
    kid.stdin.close()
for kid in kids:
    kid.wait()
"""


def test_a_tree_holding_known_memory(started: list[subprocess.Popen[bytes]]) -> None:
    """Three children touching 64 MiB each: the tree's rss (docs/behaviour.md §3.4) is at least the 192 MiB
    they touched, plus four interpreters, and agrees with psutil. tree_usage gives the same bytes and the CPU they
    spent touching."""
    touched = 64 * MIB
    root = python(ROOT.format(child=TOUCHING_CHILD.format(touched=touched), count=3), started)
    read_ready(root)

    rss = tree_rss(root.pid)
    tree = {root.pid, *(p.pid for p in descendants(root.pid))}
    assert held_for(tree) == [], "a one-shot reading keeps nothing open"
    expected = psutil_tree_rss(root.pid)
    assert rss >= 3 * touched
    assert rss <= 3 * touched + 4 * 64 * MIB, "more than an interpreter's worth over what was touched"
    assert abs(rss - expected) <= TOLERANCE * expected

    usage = tree_usage([root.pid, os.getpid()])
    assert set(usage) == {root.pid, os.getpid()}
    usage_bytes, usage_seconds = usage[root.pid]
    assert abs(usage_bytes - expected) <= TOLERANCE * expected
    assert usage_seconds > 0  # writing 192 MiB and starting four interpreters takes CPU
    assert usage[os.getpid()][0] >= usage_bytes, "the test process's tree contains the root's"


def test_fifty_small_processes_agree_with_psutil(started: list[subprocess.Popen[bytes]]) -> None:
    """A tree of 50 small processes (sh, 7 sh children, 6 sleeps under each): run rss within 2% of psutil.

    Stat's field 24 would undercount such a tree by several percent (docs/behaviour.md §3.4); statm agrees with psutil.
    """
    sleeps = " ".join(["sleep 600 &"] * 6)
    middle = f"{sleeps} wait"
    script = " ".join([f"sh -c '{middle}' &"] * 7) + " wait"
    root = subprocess.Popen(["sh", "-c", script])
    started.append(root)
    wait_until(lambda: len(descendants(root.pid)) == 49, "49 descendants")
    wait_until(
        lambda: all(p.name() == "sleep" for p in psutil.Process(root.pid).children() for p in p.children()),
        "the sleeps to exec",
    )

    before = psutil_tree_rss(root.pid)
    measured = ProcessScanner().run_rss(root.pid, "")
    after = psutil_tree_rss(root.pid)
    reference = (before + after) / 2
    assert abs(measured - reference) <= TOLERANCE * reference, (measured, before, after)


def test_match_counts_processes_outside_the_tree_once(started: list[subprocess.Popen[bytes]]) -> None:
    """docs/behaviour.md §3.4 `--match`: processes whose argv[0] is the name count though they are not the root's
    children, and a matched process inside the tree counts once."""
    name = f"orca-test-match-{uuid.uuid4().hex[:8]}"
    in_tree_child = f"import os; os.execv({SLEEP!r}, [{name!r}, '600'])"
    root = python(
        "import subprocess, sys\n"
        f"kids = [subprocess.Popen([sys.executable, '-c', {in_tree_child!r}]) for _ in range(2)]\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
        "for kid in kids: kid.wait()\n",
        started,
    )
    read_ready(root)
    outside = [subprocess.Popen([name, "600"], executable=SLEEP) for _ in range(2)]
    started.extend(outside)
    all_matched = [*(p.pid for p in descendants(root.pid)), *(p.pid for p in outside)]
    wait_until(
        lambda: all(Path(f"/proc/{pid}/cmdline").read_bytes().startswith(name.encode()) for pid in all_matched),
        "the matched processes to exec",
    )
    # Asleep, done loading: until then their resident size still grows between psutil's reading and the scanner's.
    wait_until(lambda: all(_state(pid) == "S" for pid in all_matched), "the matched processes to sleep")

    tree = psutil_tree_rss(root.pid)
    outside_rss = sum(psutil.Process(p.pid).memory_info().rss for p in outside)
    scanner = ProcessScanner()
    assert abs(scanner.run_rss(None, name) - (tree - psutil.Process(root.pid).memory_info().rss + outside_rss)) <= (
        TOLERANCE * (tree + outside_rss)
    )
    both = scanner.run_rss(root.pid, name)
    assert abs(both - (tree + outside_rss)) <= TOLERANCE * (tree + outside_rss), "each process counted once"
    assert scanner.run_rss(None, name + "-nothing") == 0


def test_match_notices_an_exec_after_the_first_scan(started: list[subprocess.Popen[bytes]]) -> None:
    """argv0 is cached per process image: a process scanned before it exec'd the matched binary must match after."""
    name = f"orca-test-exec-{uuid.uuid4().hex[:8]}"
    process = python(
        f"import os, sys; print('ready', flush=True); sys.stdin.readline(); os.execv({SLEEP!r}, [{name!r}, '600'])",
        started,
    )
    read_ready(process)
    scanner = ProcessScanner()
    assert scanner.run_rss(None, name) == 0
    assert process.stdin is not None
    process.stdin.write(b"go\n")
    process.stdin.flush()
    wait_until(lambda: Path(f"/proc/{process.pid}/cmdline").read_bytes().startswith(name.encode()), "the exec")
    wait_until(lambda: stat_state(process.pid) == "S", "the sleep to settle")
    assert scanner.run_rss(None, name) == psutil.Process(process.pid).memory_info().rss


def start_sleepers(name: str, count: int, started: list[subprocess.Popen[bytes]]) -> list[subprocess.Popen[bytes]]:
    """`count` sleeps whose argv[0] is `name`, returned once each has exec'd and is asleep: until then it is still
    loading, so its resident size, which the tests compare with psutil's, still grows."""
    sleepers = [subprocess.Popen([name, "600"], executable=SLEEP) for _ in range(count)]
    started.extend(sleepers)
    wait_until(
        lambda: all(Path(f"/proc/{p.pid}/cmdline").read_bytes().startswith(name.encode()) for p in sleepers),
        "the sleepers to exec",
    )
    wait_until(lambda: all(_state(p.pid) == "S" for p in sleepers), "the sleepers to sleep")
    return sleepers


def _state(pid: int) -> str:
    """The process's state letter, from its `stat` (after the `)` that ends its name)."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


def test_match_beyond_the_kept_descriptors_still_sees_every_process_and_its_exec(
    started: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`comm` descriptors are kept for a bounded number of processes; the others are read by path and
    still match, exec included. The bound holds, and a line's descriptors are closed once their processes end."""
    monkeypatch.setattr(Argv0Files, "KEPT_AT_MOST", 3)
    name = f"orca-test-many-{uuid.uuid4().hex[:8]}"
    sleepers = start_sleepers(name, 4, started)
    execing = python(
        f"import os, sys; print('ready', flush=True); sys.stdin.readline(); os.execv({SLEEP!r}, [{name!r}, '600'])",
        started,
    )
    read_ready(execing)
    baseline = len(open_descriptors())
    scanner = ProcessScanner()
    held = sum(psutil.Process(p.pid).memory_info().rss for p in sleepers)
    assert scanner.run_rss(None, name) == held, "all four, though only three descriptors may be kept"
    assert len(open_descriptors()) - baseline <= 3

    assert execing.stdin is not None
    execing.stdin.write(b"go\n")
    execing.stdin.flush()
    wait_until(lambda: Path(f"/proc/{execing.pid}/cmdline").read_bytes().startswith(name.encode()), "the exec")
    wait_until(lambda: stat_state(execing.pid) == "S", "the sleep to settle")
    both = held + psutil.Process(execing.pid).memory_info().rss
    assert scanner.run_rss(None, name) == both


def test_match_closes_the_descriptors_of_ended_processes(started: list[subprocess.Popen[bytes]]) -> None:
    """A matched process's `comm` stays open between lines, and is closed on the line after it ends."""
    name = f"orca-test-ended-{uuid.uuid4().hex[:8]}"
    sleepers = start_sleepers(name, 3, started)
    scanner = ProcessScanner()
    assert scanner.run_rss(None, name) == sum(psutil.Process(p.pid).memory_info().rss for p in sleepers)
    theirs = {f"/proc/{p.pid}/comm" for p in sleepers}
    assert theirs <= set(open_descriptors()), "kept open between lines"
    for process in sleepers:
        process.kill()
        process.wait()
    assert scanner.run_rss(None, name) == 0
    assert not [link for link in open_descriptors() if link.split(" ")[0] in theirs]


def test_a_matched_processs_io_refused_is_not_asked_for_again(
    started: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A matched process whose `io` may not be opened (another user's: EACCES, which root never meets, so made here)
    reads as unknown, and its `io` is not asked for again while its `stat` is kept; another process's is still read
    through a kept descriptor."""
    name = f"orca-test-io-{uuid.uuid4().hex[:8]}"
    refused, other = start_sleepers(name, 2, started)
    files = Argv0Files(ProcRoot.at("/proc"))
    assert sorted(files.matching(name)) == sorted([refused.pid, other.pid])
    assert files.stat(refused.pid) and files.stat(other.pid)
    assert {f"/proc/{refused.pid}/stat", f"/proc/{other.pid}/stat"} <= set(open_descriptors()), "kept"
    real_open = os.open
    asked: list[str] = []

    def open_refusing(path: str, flags: int, *args: Any) -> int:
        if path == f"/proc/{refused.pid}/io":
            asked.append(path)
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", open_refusing)
    assert files.io(refused.pid) is None
    assert files.io(other.pid) == Path(f"/proc/{other.pid}/io").read_bytes()
    monkeypatch.setattr(os, "open", real_open)
    assert files.io(refused.pid) is None, "not opened, nor read by path, again"
    assert asked == [f"/proc/{refused.pid}/io"]
    assert f"/proc/{other.pid}/io" in set(open_descriptors())
    files.close()


def test_match_reads_a_kernel_threads_cmdline_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernel threads never exec, though a kworker's comm follows its work: after the first line, no kernel
    thread's cmdline is read again (each was read every line before, a third of this machine's processes)."""
    kernel_threads = {
        int(name)
        for name in os.listdir("/proc")
        if name.isdigit() and (name == "2" or stat_ppid(int(name)) == 2)
    }
    if not kernel_threads:
        pytest.skip("no kernel threads visible (a pid namespace)")
    read: list[int] = []
    real_argv0 = ProcRoot.argv0

    def counting(root: ProcRoot, pid: int | str) -> str:
        read.append(int(pid))
        return real_argv0(root, pid)

    monkeypatch.setattr(ProcRoot, "argv0", counting)
    scanner = ProcessScanner()
    scanner.run_rss(None, "orca-test-no-such-argv0")
    assert any(pid in kernel_threads for pid in read), "the first line reads them"
    read.clear()
    for _ in range(3):
        scanner.run_rss(None, "orca-test-no-such-argv0")
    assert not [pid for pid in read if pid in kernel_threads]


def test_alive_on_a_live_process_a_zombie_and_no_process(started: list[subprocess.Popen[bytes]]) -> None:
    """docs/behaviour.md §2.3: a running process is alive; an exited child not yet reaped (state Z) is dead; so is no
    process."""
    assert alive(os.getpid())
    sleeper = subprocess.Popen([SLEEP, "600"])
    started.append(sleeper)
    assert alive(sleeper.pid)

    exiting = subprocess.Popen([sys.executable, "-c", "pass"])
    started.append(exiting)
    # Not `poll()`: that would reap it. The kernel's own word on the state is the file.
    wait_until(lambda: stat_state(exiting.pid) == "Z", "the child to become a zombie")
    assert not alive(exiting.pid)
    exiting.wait()
    assert not alive(exiting.pid)

    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    assert not alive(pid_max + 1)


# A root whose children are forked from a second thread that stays alive: the kernel lists them in that thread's
# own `children` file (they move to another thread's list only when the forking thread exits).
THREAD_FORKING_ROOT = f"""
import subprocess, sys, threading
kids, forked, done = [], threading.Event(), threading.Event()
def start():
    kids.extend(subprocess.Popen([{SLEEP!r}, '600']) for _ in range(3))
    forked.set()
    done.wait()
threading.Thread(target=start, daemon=True).start()
forked.wait(timeout=20)
main_kid = subprocess.Popen([{SLEEP!r}, '600'])
print('ready', flush=True)
sys.stdin.read()
for kid in [*kids, main_kid]:
    kid.kill()
    kid.wait()
done.set()
"""


def test_children_walk_and_proc_scan_agree(started: list[subprocess.Popen[bytes]]) -> None:
    """The two ways of finding the tree (the walk down `children` files, and one pass over every stat) give
    the same processes and bytes, children forked by a non-main thread included (a thread's own `children` file);
    the walk is what `/proc` here uses by default."""
    root = python(THREAD_FORKING_ROOT, started)
    read_ready(root)
    assert ProcRoot.at("/proc").has_children_files()
    expected = {root.pid, *(p.pid for p in descendants(root.pid))}
    assert len(expected) == 5
    # A `sleep` just exec'd is still paging itself in: its resident set grows until it sleeps. Both ways read the
    # same settled tree only once every one of them does.
    wait_until(lambda: all(stat_state(pid) == "S" for pid in expected - {root.pid}), "the sleeps to settle")
    assert walk_tree(ProcRoot.at("/proc"), root.pid) == expected
    walked = ProcessScanner(walk_children=True).run_rss(root.pid, "")
    scanned = ProcessScanner(walk_children=False).run_rss(root.pid, "")
    reference = psutil_tree_rss(root.pid)
    assert abs(walked - scanned) <= TOLERANCE * reference
    assert abs(walked - reference) <= TOLERANCE * reference
    usage = tree_usage([root.pid, 2**22 + 1])
    assert list(usage) == [root.pid]
    assert abs(usage[root.pid][0] - reference) <= TOLERANCE * reference


def test_walk_of_a_missing_root_is_empty() -> None:
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    assert walk_tree(ProcRoot.at("/proc"), pid_max + 1) == frozenset()
    assert ProcessScanner().run_rss(pid_max + 1, "") == 0


def held_for(pids: set[int]) -> list[str]:
    """This process's descriptors of files of `pids` under /proc."""
    return [link for link in open_descriptors() if link.startswith("/proc/") and link.split("/")[2].isdigit()
            and int(link.split("/")[2]) in pids]


def test_kept_descriptors_follow_the_tree(started: list[subprocess.Popen[bytes]]) -> None:
    """The tree's files stay open between lines, and a process that leaves the tree (killed, reaped) has its
    descriptors closed: the sums stay right and nothing grows over many lines."""
    root = python(ROOT.format(child="import sys; print('ready', flush=True); sys.stdin.read()", count=3), started)
    read_ready(root)
    tree = {root.pid, *(p.pid for p in descendants(root.pid))}
    scanner = ProcessScanner()
    first = scanner.run_rss(root.pid, "")
    held = held_for(tree)
    assert {int(link.split("/")[2]) for link in held} == tree, "each process's files kept"
    assert abs(first - psutil_tree_rss(root.pid)) <= TOLERANCE * first
    total_before = len(open_descriptors())
    for _ in range(50):
        assert abs(scanner.run_rss(root.pid, "") - first) <= TOLERANCE * first
    assert sorted(held_for(tree)) == sorted(held), "the same descriptors, line after line"
    assert len(open_descriptors()) <= total_before
    assert root.stdin is not None
    root.stdin.close()  # the root closes its children's stdin and reaps them, then ends
    root.wait(timeout=20)
    assert scanner.run_rss(root.pid, "") == 0
    assert held_for(tree) == [], "the ended processes' descriptors are closed"
    scanner.close()


def test_close_closes_every_kept_descriptor(
    started: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Sampler.close()` (and the scanner's) leaves nothing of the run's processes open; `with` does the same."""
    from orca.sample.shell.procs import argv0s
    from orca.sample.shell.sampler import Sampler

    # `--match` keeps the files of the host's first processes only, by pid; the rest are read by path. Other tests'
    # processes (a chain's zombies) can outnumber that share, so it is lifted: the sleeps' files are kept too.
    monkeypatch.setattr(argv0s.Argv0Files, "KEPT_AT_MOST", 1 << 20)
    monkeypatch.setattr(argv0s, "kept_files_at_most", lambda: 1 << 20)
    name = f"orca-test-close-{uuid.uuid4().hex[:8]}"
    sleepers = start_sleepers(name, 2, started)
    root = python(ROOT.format(child="import sys; print('ready', flush=True); sys.stdin.read()", count=2), started)
    read_ready(root)
    theirs = {root.pid, *(p.pid for p in descendants(root.pid)), *(p.pid for p in sleepers)}
    with Sampler(root.pid, name, []) as sampler:
        for _ in range(3):
            sampler.line()
        assert {int(link.split("/")[2]) for link in held_for(theirs)} == theirs
    assert held_for(theirs) == []


def test_a_tree_that_is_most_of_the_host_is_scanned_and_gives_what_the_walk_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """tree_usage walks a small tree but reads a tree that is a large share of the host in one pass over every
    stat: the pass is taken for this one, and its answer is the walk's (same processes, bytes and ticks)."""
    host = sum(1 for name in os.listdir("/proc") if name.isdigit())
    sleeps = host // 2 + 70  # more than a third of the host once they run, and more than a small tree
    script = " ".join(f"({SLEEP} 600) &" for _ in range(sleeps)) + " wait"
    root = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    try:
        wait_until(lambda: len(descendants(root.pid)) >= sleeps, "the sleeps to start")
        wait_until(lambda: all(p.status() == "sleeping" for p in descendants(root.pid)), "the sleeps to settle")
        scans: list[int] = []
        plain_stats = ProcRoot.stats

        def counted_stats(self: ProcRoot) -> Iterator[tuple[int, bytes]]:
            scans.append(1)
            return plain_stats(self)

        monkeypatch.setattr(ProcRoot, "stats", counted_stats)
        chosen = tree_usage([root.pid])
        assert scans == [1]
        # The walk forced, to compare its answer with the pass's: the choice between them is the thing under test.
        monkeypatch.setattr(procfs, "walked_unless_wide", lambda tree, roots: procfs.walked_within(tree, roots, 2**30))
        walked = tree_usage([root.pid])
        assert scans == [1]
        assert chosen == walked
        assert walked[root.pid][0] > 0
    finally:
        os.killpg(root.pid, 9)
        root.wait()


def test_a_small_tree_is_walked_without_a_pass_over_the_host(
    started: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = python(THREAD_FORKING_ROOT, started)
    read_ready(root)
    monkeypatch.setattr(ProcRoot, "stats", lambda self: pytest.fail("a small tree made a pass over every process"))
    monkeypatch.setattr(ProcRoot, "pid_names", lambda self: pytest.fail("a small tree counted the host"))
    assert set(tree_usage([root.pid])) == {root.pid}


# A root that, on each line of its stdin, starts a child (`spawn`), starts one from a new thread that stays alive
# (`thread`: the child is in that thread's `children` file only), makes 64 MiB resident (`hold`), lets those threads
# end (`release`: their children pass to the main thread), or ends and reaps its first child (`end`); it prints the
# child's pid (or `held`, `released`). It ends when stdin closes, reaping its children.
CONTROLLED_ROOT = f"""
import subprocess, sys, threading
kids, held, done = [], [], threading.Event()
def spawn():
    kids.append(subprocess.Popen([{SLEEP!r}, '600']))
    print(kids[-1].pid, flush=True)
def spawn_and_stay():
    spawn()
    done.wait()
for line in sys.stdin:
    if line == 'spawn\\n':
        spawn()
    elif line == 'thread\\n':
        threading.Thread(target=spawn_and_stay, daemon=True).start()
    elif line == 'hold\\n':
        held.append(b'\\x01' * {64 * MIB})
        print('held', flush=True)
    elif line == 'release\\n':
        done.set()
        print('released', flush=True)
    elif line == 'end\\n':
        ended = kids.pop(0)
        ended.kill()
        ended.wait()
        print(ended.pid, flush=True)
for kid in kids:
    kid.kill()
    kid.wait()
done.set()
"""


def ask(root: subprocess.Popen[bytes], command: str) -> str:
    assert root.stdin is not None and root.stdout is not None
    root.stdin.write(f"{command}\n".encode())
    root.stdin.flush()
    return root.stdout.readline().decode().strip()


def test_lines_alike_read_no_process_one_by_one_and_still_see_every_change(
    started: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a line's batches read as the last one's, the walk reads no process on its own; a new child (forked by
    the main thread, or by a second thread, which shows only in the thread count), memory made resident, and a
    child that ends are each seen on the next line."""
    root = python(CONTROLLED_ROOT, started)
    files = TreeFiles(ProcRoot.at("/proc"))
    one_by_one: list[int] = []
    read_alone = files.children

    def counted(pid: int) -> list[int]:
        one_by_one.append(pid)
        return read_alone(pid)

    monkeypatch.setattr(files, "children", counted)

    def line() -> tuple[frozenset[int], int]:
        tree = files.walk(root.pid)
        files.keep_only(tree)
        return tree, sum(files.resident(tree).values())

    first = int(ask(root, "spawn"))
    wait_until(lambda: stat_state(first) == "S", "the sleep to settle")
    for _ in range(3):
        tree, pages = line()
        assert tree == {root.pid, first}
    one_by_one.clear()
    assert line() == (tree, pages)
    assert one_by_one == [], "a line alike walked from the batches alone"

    # Each change comes after lines alike (the third line after one is alike again).
    second = int(ask(root, "spawn"))
    for _ in range(3):
        assert line()[0] == {root.pid, first, second}
    threaded = int(ask(root, "thread"))
    for _ in range(3):
        assert line()[0] == {root.pid, first, second, threaded}
    assert ask(root, "hold") == "held"
    _, grown = line()
    assert grown >= pages + 64 * MIB // page_size()
    assert int(ask(root, "end")) == first
    assert line()[0] == {root.pid, second, threaded}
    files.close()


def host_forks() -> int:
    """/proc/stat's `processes`: every process and thread the host created since boot (proc(5))."""
    with open("/proc/stat") as stat:
        return next(int(line.split()[1]) for line in stat if line.startswith("processes "))


def test_with_no_task_created_since_the_last_walk_the_tree_is_taken_until_a_member_ends(
    started: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given the host's fork count, a walk at the count of the last one takes its tree without reading a thread
    count or a `children` file; a new count walks again and finds a new child; a member that ends (reaped, or a
    zombie not yet reaped) is still noticed at the same count."""
    root = python(CONTROLLED_ROOT, started)
    files = TreeFiles(ProcRoot.at("/proc"))
    batches: list[int] = []
    # Counted, to see the walk skip its `children` batches: no public count of the reads a walk makes.
    read_batches = tree_files._kept_children

    def counted(*args: Any) -> dict[int, Sequence[int]]:
        batches.append(1)
        return read_batches(*args)

    monkeypatch.setattr(tree_files, "_kept_children", counted)

    def line(forks: int) -> tuple[frozenset[int], int]:
        tree = files.walk(root.pid, forks)
        files.keep_only(tree)
        return tree, sum(files.resident(tree).values())

    first, second = int(ask(root, "spawn")), int(ask(root, "spawn"))
    wait_until(lambda: stat_state(first) == stat_state(second) == "S", "the sleeps to settle")
    count = host_forks()
    tree, pages = line(count)
    assert tree == {root.pid, first, second}
    assert line(count) == (tree, pages)
    batches.clear()
    assert line(count) == (tree, pages)
    assert batches == [], "no task created: the last tree, its sum from the statm files alone"

    # A new child: the count has moved, and the walk finds it; then the count stays, and so does the tree.
    third = int(ask(root, "spawn"))
    wait_until(lambda: stat_state(third) == "S", "the sleep to settle")
    count = host_forks()
    tree, pages = line(count)
    assert tree == {root.pid, first, second, third}
    assert line(count) == (tree, pages)

    # A member reaped: its statm no longer reads, so the tree is walked again, at the same count.
    assert int(ask(root, "end")) == first
    assert line(count)[0] == {root.pid, second, third}
    assert batches, "walked again"

    # A member ended but not reaped (its parent has not waited for it): a zombie's statm holds no memory.
    os.kill(second, signal.SIGKILL)
    wait_until(lambda: stat_state(second) == "Z", "the sleep to be a zombie")
    batches.clear()
    assert line(count) == (walk_tree_now(root.pid), pages_now(root.pid))
    assert batches, "walked again"
    files.close()


def walk_tree_now(root: int) -> frozenset[int]:
    return frozenset(walk_tree(ProcRoot.at("/proc"), root))


def pages_now(root: int) -> int:
    return tree_rss(root) // page_size()


def threads_children_held(pid: int) -> set[str]:
    """The threads of `pid` other than its main one whose `children` file this process holds open."""
    prefix = f"/proc/{pid}/task/"
    return {link.removeprefix(prefix).split("/")[0] for link in open_descriptors()
            if link.startswith(prefix) and link.endswith("/children")} - {str(pid)}


def test_a_process_with_more_threads_keeps_each_threads_children_file(started: list[subprocess.Popen[bytes]]) -> None:
    """A kept process with a second thread: that thread's `children` file stays open from line to line (its child
    found each time), and is closed once the thread ends, its child then found through the main thread."""
    root = python(CONTROLLED_ROOT, started)
    files = TreeFiles(ProcRoot.at("/proc"))

    def line() -> frozenset[int]:
        tree = files.walk(root.pid)
        files.keep_only(tree)
        return tree

    threaded = int(ask(root, "thread"))
    second_thread = set(os.listdir(f"/proc/{root.pid}/task")) - {str(root.pid)}
    assert len(second_thread) == 1
    assert line() == {root.pid, threaded}
    held = threads_children_held(root.pid)
    assert held == second_thread
    total_before = len(open_descriptors())
    for _ in range(5):
        assert line() == {root.pid, threaded}
    assert threads_children_held(root.pid) == held and len(open_descriptors()) == total_before

    assert ask(root, "release") == "released"
    wait_until(lambda: len(os.listdir(f"/proc/{root.pid}/task")) == 1, "the second thread to end")
    assert line() == {root.pid, threaded}, "the child passed to the main thread"
    assert threads_children_held(root.pid) == set()
    files.close()
    assert held_for({root.pid, threaded}) == []
