"""A pid namespace of its own for a test whose processes leave every session and group the test could kill.

The test's scenario runs as a child of the namespace's init, a reaper: a process whose parent ends is reparented to
it and, once it ends, waited for, so that nothing (a zombie parent, a parent left unreaped by a host's pid 1) keeps a
link the test means to break. When the scenario ends, so does the init, and the kernel kills every process left in
the namespace; `unshare --kill-child` kills the init if `unshare` itself is killed, and the test kills `unshare`'s
process group whatever happens. Needs `unshare` (util-linux) and the privilege to make a pid namespace (root, or
CAP_SYS_ADMIN): tests skip cleanly without them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
UNSHARE = [shutil.which("unshare") or "unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]

# pid 1 of the namespace: starts the scenario, reaps every process that ends, and exits as the scenario did.
REAPER = """
import os, sys
scenario = os.fork()
if scenario == 0:
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
while True:
    pid, status = os.wait()
    if pid == scenario:
        code = os.waitstatus_to_exitcode(status)
        os._exit(code if code >= 0 else 128 - code)
"""

# pid 1 of a namespace that reaps nothing but the scenario, as a container's entrypoint that is not an init: every
# orphan that ends stays a zombie, in its process group and session, until the namespace ends.
NON_REAPER = """
import os, sys
scenario = os.fork()
if scenario == 0:
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
code = os.waitstatus_to_exitcode(os.waitpid(scenario, 0)[1])
os._exit(code if code >= 0 else 128 - code)
"""


def _available() -> str:
    """Why a pid namespace cannot be made here, or "" when it can."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return "needs Linux and unshare(1) from util-linux"
    try:
        done = subprocess.run([*UNSHARE, "true"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unshare could not run: {error}"
    if done.returncode != 0:
        return f"needs the privilege to make a pid namespace (root or CAP_SYS_ADMIN): {done.stderr.decode().strip()}"
    return ""


WHY_NOT = _available()
needs_pid_namespace = pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT)


def run_in_pid_namespace(scenario: str, *args: str, timeout: float = 120, reaps: bool = True) -> dict[str, Any]:
    """Runs the Python `scenario` (with `args`) in a pid namespace of its own, whose init reaps every orphan or,
    without `reaps`, none, and returns the JSON object it prints last; every process of the namespace has ended
    when this returns."""
    # A staging root of its own: the ledger of what a scheduler froze (under it) names processes by their pids in
    # this namespace, which another namespace's scenario must not read as its own.
    stage = tempfile.TemporaryDirectory()
    path = os.pathsep.join([str(REPOSITORY / "src"), str(REPOSITORY)])
    env = {**os.environ, "PYTHONPATH": path, "ORCA_LOG_STAGE": os.path.join(stage.name, "stage")}
    argv = [*UNSHARE, sys.executable, "-c", REAPER if reaps else NON_REAPER, "-c", scenario, *args]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)  # unshare and the init: the namespace goes with its init
        process.wait()
        stage.cleanup()
    assert process.returncode == 0, err.decode()
    return dict(json.loads(out.decode().splitlines()[-1]))
