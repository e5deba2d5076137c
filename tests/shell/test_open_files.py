"""The open-files limit (docs/sampling.md; docs/behaviour.md §4.6): the descriptors a sampler keeps
between lines leave room for its output, so no line is lost to them. Real processes, each started with the limit
set in the child."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from orca.sample.shared.sysconf import OTHER_FILES
from tests.shell.run import command, environment, no_traceback, read_lines

SLEEP = "/bin/sleep"


def _limited(soft: int, hard: int) -> Callable[[], None]:
    """A `preexec_fn` that starts the process with RLIMIT_NOFILE (soft, hard), as `ulimit -n` or `prlimit` would."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return limit


@pytest.fixture
def tree() -> Iterator[tuple[int, str]]:
    """A process with 40 children named alike (argv[0] `orca-test-nofile-...`): (its pid, that name)."""
    name = f"orca-test-nofile-{uuid.uuid4().hex[:8]}"
    parent = subprocess.Popen(
        [sys.executable, "-c",
         "import os, sys, time\n"
         f"kids = [os.posix_spawn({SLEEP!r}, [{name!r}, '120'], os.environ) for _ in range(40)]\n"
         "print('ready', flush=True)\n"
         "sys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    assert parent.stdout is not None and parent.stdout.readline() == b"ready\n"
    try:
        yield parent.pid, name
    finally:
        children = Path(f"/proc/{parent.pid}/task/{parent.pid}/children").read_text().split()
        for child in children:
            subprocess.run(["kill", child], check=False)
        parent.communicate(b"\n", timeout=30)


@pytest.mark.requires_proc
@pytest.mark.parametrize("match", [False, True], ids=["pid", "pid-and-match"])
def test_every_line_is_written_under_a_low_open_files_limit(
    tmp_path: Path, tree: tuple[int, str], match: bool
) -> None:
    """`ulimit -n 32`, a 41-process run, and `--match` over every process of the host: all 8 lines, each counting
    the whole run, and not one message."""
    pid, name = tree
    out = tmp_path / "lines.jsonl"
    args = ["--out", str(out), "--pid", str(pid), "--seconds", "0.05", "--count", "8"]
    done = subprocess.run(
        command(*args, *(["--match", name] if match else [])),
        capture_output=True, env=environment(), timeout=60, preexec_fn=_limited(32, 32),
    )
    assert done.returncode == 0
    assert done.stderr == b""
    lines = read_lines(out)
    assert len(lines) == 8
    # The tree's 41 processes in every line: at least the 40 sleeps' resident memory, which is far from 0.
    rss = [line["mem"]["rss"] for line in lines]
    assert min(rss) > 40 * 100_000, rss


@pytest.mark.requires_proc
def test_a_run_that_cannot_be_read_for_want_of_descriptors_is_null_and_said_once(
    tmp_path: Path, tree: tuple[int, str]
) -> None:
    """`ulimit -n 12`: the kernel files' kept descriptors, the output and the wake-up pipes leave none to open a
    process's files with. The run's reading could not be made, so `mem` (whose `rss` it is) and `run`'s figures are
    `null` in every line (never a 0 that reads as an empty run), and that is said once, not once a line."""
    pid, _ = tree
    out = tmp_path / "lines.jsonl"
    done = subprocess.run(
        command("--out", str(out), "--pid", str(pid), "--seconds", "0.05", "--count", "4"),
        capture_output=True, env=environment(), timeout=60, preexec_fn=_limited(12, 12),
    )
    assert done.returncode == 0
    no_traceback(done.stderr)
    lines = read_lines(out)
    assert len(lines) == 4
    unread = {"cpu": None, "procs": None, "io": None, "top": None}
    assert [(line["mem"], line["run"]) for line in lines] == [(None, unread)] * 4
    assert lines[-1]["cpu"] is not None, "the host's readings are made all the same"
    assert done.stderr.decode().splitlines() == [
        "orca sample: cannot read the run's processes in /proc: Too many open files"
    ]


LIMITS_OF = (
    "import resource, sys\n"
    "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
    "sys.stderr.write(f'{soft} {hard}\\n')\n"
)


@pytest.mark.requires_proc  # reads the sampler's limit from /proc/<pid>/limits
def test_the_soft_limit_is_raised_to_the_hard_one_and_a_command_keeps_its_own(tmp_path: Path) -> None:
    """Started with a soft limit of 32 under a hard one of 4096: the sampler raises its own to 4096 as it starts
    sampling, while COMMAND, started before, runs with the 32 it was given."""
    out = tmp_path / "lines.jsonl"
    hard = min(4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    report = tmp_path / "limits"
    child = (
        "import os, pathlib, time\n"
        "time.sleep(1.0)\n"
        f"pathlib.Path({str(report)!r}).write_text(open(f'/proc/{{os.getppid()}}/limits').read())\n"
        f"{LIMITS_OF}"
    )
    done = subprocess.run(
        command("--out", str(out), "--seconds", "0.1", "--", sys.executable, "-c", child),
        capture_output=True, env=environment(), timeout=60, preexec_fn=_limited(32, hard),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().split() == ["32", str(hard)]  # the command's own
    row = next(line for line in report.read_text().splitlines() if line.startswith("Max open files"))
    assert row.split()[3:5] == [str(hard), str(hard)], row  # the sampler's, while it sampled
    assert len(read_lines(out)) >= 1


HOARD = """
import os, resource, sys

def hoard(limit):
    \"\"\"Every descriptor a limit of `limit` allows, taken.\"\"\"
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    held = []
    try:
        while True:
            held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        return held
"""

# An embedding program that holds nearly every descriptor its limit allows, then runs the sampler in-process: the
# sampler's kept descriptors take the last free ones, and opening the output fails with EMFILE unless they are let go.
EMBEDDED = HOARD + """
from orca.sample import sample_main

held = hoard(int(sys.argv[1]))
for _ in range(int(sys.argv[2])):  # this many free for the sampler
    os.close(held.pop())
sys.exit(sample_main(["pipeline", "sample", *sys.argv[3:]]))
"""


@pytest.mark.requires_proc
def test_a_line_is_not_lost_when_the_kept_descriptors_take_the_last_free_ones(
    tmp_path: Path, tree: tuple[int, str]
) -> None:
    pid, name = tree
    out = tmp_path / "lines.jsonl"
    args = ["--out", str(out), "--pid", str(pid), "--match", name, "--seconds", "0.05", "--count", "8"]
    done = subprocess.run(
        [sys.executable, "-c", EMBEDDED, "256", "24", *args], capture_output=True, env=environment(), timeout=60
    )
    assert done.returncode == 0
    no_traceback(done.stderr)
    assert b"Too many open files" not in done.stderr, done.stderr.decode()
    assert len(read_lines(out)) == 8


EXHAUSTED = HOARD + """
from orca.sample.shell.out.files import LineFile

held = hoard(64)
released = []

def release():
    released.append(len(held))
    while held:
        os.close(held.pop())

path, keep = sys.argv[1], (int(sys.argv[2]) or None)
print(LineFile(path, keep, release=release).write(b'{"n":1}'), released)
"""


@pytest.mark.parametrize("keep", [0, 5], ids=["append", "keep"])
def test_out_of_descriptors_the_output_lets_go_of_the_kept_ones_and_tries_again(tmp_path: Path, keep: int) -> None:
    """Every descriptor taken when a line is to be written (EMFILE): the kept ones are let go once, and the line is
    written."""
    out = tmp_path / "lines.jsonl"
    done = subprocess.run([sys.executable, "-c", EXHAUSTED, str(out), str(keep)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    written, released = done.stdout.split(maxsplit=1)
    assert written == "True", done.stderr
    assert json.loads(released) != []
    assert out.read_bytes() == b'{"n":1}\n'


@pytest.mark.requires_proc  # counts the sampler's descriptors in /proc/<pid>/fd
def test_the_kept_descriptors_leave_room_under_the_limit(tmp_path: Path, tree: tuple[int, str]) -> None:
    """Under a limit of 256, a 41-process run and `--match` over the host: however many files there are to keep,
    the sampler never holds more than the limit less `OTHER_FILES`."""
    pid, name = tree
    out = tmp_path / "lines.jsonl"
    sampler = subprocess.Popen(
        command("--out", str(out), "--pid", str(pid), "--match", name, "--seconds", "0.05", "--count", "20"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment(), preexec_fn=_limited(256, 256),
    )
    most = 0
    while sampler.poll() is None:
        try:
            most = max(most, len(os.listdir(f"/proc/{sampler.pid}/fd")))
        except OSError:
            break  # it has ended
    _, stderr = sampler.communicate(timeout=60)
    assert sampler.returncode == 0, stderr
    assert stderr == b""
    assert len(read_lines(out)) == 20
    assert 0 < most <= 256 - OTHER_FILES


def test_an_embedding_program_has_its_own_limit_again_when_sampling_returns(tmp_path: Path) -> None:
    """`sample_main` raises the soft limit while it samples and puts the caller's back when it returns."""
    hard = min(4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    probe = (
        "import resource, sys\n"
        "from orca.sample import sample_main\n"
        f"resource.setrlimit(resource.RLIMIT_NOFILE, (32, {hard}))\n"
        f"status = sample_main(['pipeline', 'sample', '--out', {str(tmp_path / 'm.jsonl')!r}, '--count', '1'])\n"
        "print(status, *resource.getrlimit(resource.RLIMIT_NOFILE))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=environment(), timeout=60)
    assert done.stdout.split() == ["0", "32", str(hard)], done.stderr
