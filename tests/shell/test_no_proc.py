"""The command on a machine without /proc, made here by hiding /proc in a user and mount namespace of its own.

That is not macOS: psutil itself reads /proc on Linux, so most sections are `null` here. What it shows is the
choice made in a real process (no /proc/stat: the psutil reader, whose `io` comes from /sys/block), and that the
sampler still writes whole lines and exits 0 with its sources gone.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shell.run import PREFIX, environment


def _can_hide_proc() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    try:
        done = subprocess.run(
            [unshare, "-r", "-m", "sh", "-c", "mount -t tmpfs none /proc"], capture_output=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


pytestmark = [
    pytest.mark.requires_proc,
    pytest.mark.skipif(not _can_hide_proc(), reason="no unprivileged user and mount namespaces here"),
]


def test_without_proc_the_psutil_reader_is_chosen_and_lines_are_whole(tmp_path: Path) -> None:
    pytest.importorskip("psutil")
    script = (
        "mount -t tmpfs none /proc && exec \"$0\" -m orca.sample --out - --count 2 --seconds 0.2 --dirs \"$1\""
    )
    done = subprocess.run(
        ["unshare", "-r", "-m", "sh", "-c", script, sys.executable, str(tmp_path)],
        capture_output=True,
        timeout=60,
        env=environment(),
    )
    assert done.returncode == 0, done.stderr
    # psutil reads /proc on Linux: the sections it cannot give say why, once each over the two lines.
    said = sorted(done.stderr.decode().splitlines())
    assert [message.split(": FileNotFoundError: ")[0] for message in said] == [
        "orca sample: cannot read the CPU times through psutil",
        "orca sample: cannot read the memory figures through psutil",
        "orca sample: cannot read the network counters through psutil",
    ], said
    raws = done.stdout.decode().splitlines()
    assert len(raws) == 2
    for raw in raws:
        assert raw.startswith(PREFIX)
        line = json.loads(raw.removeprefix(PREFIX))
        # psutil finds the disks' counters in /sys/block when /proc/diskstats is gone; the /proc reader has none.
        assert line["io"] is not None
        assert "pressure" not in line
        assert list(line)[:4] == ["v", "t", "dt", "host"]
        assert [disk["path"] for disk in line["disk"]] == [str(tmp_path)]  # statvfs needs no /proc
        assert line["cpu"] is None  # psutil reads /proc on Linux: nothing to read here
