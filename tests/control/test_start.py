"""How a control-placed run starts: an argv that cannot start is refused before anything is made (docs/behaviour.md
§12.2), and every process of a run carries its mark (§12.3; read back from /proc, never through the code under
test)."""

from __future__ import annotations

import errno
import os
import sys
import textwrap
from pathlib import Path

import pytest

from orca.control import ControlLimits, control_stage, start_run
from tests.control.processes import Runs, stat_fields, wait_for_lines

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
def stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run's staging file under a staging root of its own, nothing of it made yet."""
    monkeypatch.setenv("ORCA_LOG_STAGE", str(tmp_path / "orca-logs"))
    return Path(control_stage("etl", 9, 1, os.environ))


def _nothing_made(stage: Path) -> bool:
    return not stage.exists() and not (stage.parents[2]).exists()


@pytest.mark.parametrize(
    ("argv", "error", "message"),
    [
        ([], errno.EINVAL, "argv is empty"),
        (["sh", "-c", "echo a\0b"], errno.EINVAL, r"argv\[2\] holds a NUL byte"),
        (["sh\0", "-c", "true"], errno.EINVAL, r"argv\[0\] holds a NUL byte"),
        (["/nonexistent/binary"], errno.ENOENT, "/nonexistent/binary"),
        (["orca-control-test-no-such-program"], errno.ENOENT, "orca-control-test-no-such-program"),
    ],
)
def test_an_argv_that_cannot_start_is_an_oserror_before_anything_is_made(
    stage: Path, argv: list[str], error: int, message: str
) -> None:
    with pytest.raises(OSError, match=message) as raised:
        start_run(argv, [], ControlLimits(), str(stage))
    assert raised.value.errno == error
    assert _nothing_made(stage)


def test_a_program_that_is_not_executable_is_refused_before_anything_is_made(stage: Path, tmp_path: Path) -> None:
    program = tmp_path / "not-executable"
    program.write_text("#!/bin/sh\necho started\n")
    program.chmod(0o644)  # no execute bit: not even root may execute it
    with pytest.raises(PermissionError) as raised:
        start_run([str(program)], [], ControlLimits(), str(stage))
    assert raised.value.errno == errno.EACCES
    assert _nothing_made(stage)


def test_the_program_is_looked_for_on_the_runs_own_path(stage: Path, tmp_path: Path) -> None:
    place = tmp_path / "bin"
    place.mkdir()
    program = place / "orca-control-test-program"
    program.write_text('#!/bin/sh\necho "started as $0"\n')
    program.chmod(0o755)
    process = start_run([program.name], [f"PATH={place}:/usr/bin:/bin"], ControlLimits(), str(stage))
    assert process.wait() == 0
    assert stage.read_text() == f"started as {program}\n"


# The root and a grandchild that leaves its session print the mark they carry, and the root its own /proc identity.
MARKED = textwrap.dedent("""
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(sys.argv[1], "a") as f:
                f.write(f"escapee {os.getpid()}\\n")
            time.sleep(300)
        os._exit(0)
    os.wait()
    with open(sys.argv[1], "a") as f:
        f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")


def test_every_process_of_a_run_carries_its_mark(runs: Runs) -> None:
    root, found = runs.start("marked", [sys.executable, "-c", MARKED], ready=2)
    # proc(5) field 22, starttime: the root's, as the kernel gives it.
    expected = f"ORCA_CONTROL_RUN={root}:{stat_fields(root)[19]}".encode()
    for role, pid in found.items():
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert expected in environ, role
    assert int(stat_fields(found["escapee"])[3]) != root  # in a session of its own, yet marked


def test_a_mark_in_the_schedulers_environment_or_the_entries_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_CONTROL_RUN", "1:1")
    pids, log = tmp_path / "mark.pids", tmp_path / "mark.log"
    code = 'import os, sys, time; open(sys.argv[1], "a").write(f"root {os.getpid()}\\n"); time.sleep(300)'
    process = start_run([sys.executable, "-c", code, str(pids)], ["ORCA_CONTROL_RUN=2:2"], ControlLimits(), str(log))
    try:
        root = wait_for_lines(pids, 1, log)["root"]
        environ = Path(f"/proc/{root}/environ").read_bytes().split(b"\0")
        assert [entry for entry in environ if entry.startswith(b"ORCA_CONTROL_RUN=")] == [
            f"ORCA_CONTROL_RUN={root}:{stat_fields(root)[19]}".encode()
        ]
    finally:
        process.kill()
        process.wait()
