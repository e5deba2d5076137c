"""A tree of real processes holding known memory, for the tests that compare readers and process functions."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

psutil = pytest.importorskip("psutil")

MIB = 1 << 20
# Each member holds this many MiB of touched memory, so its resident size is at least that.
HOLDS = 24
MEMBER = (
    "import sys, time\n"
    f"ballast = bytearray({HOLDS} << 20)\n"
    "for i in range(0, len(ballast), 4096):\n"
    "    ballast[i] = 1\n"
    "print(flush=True)\n"
    "time.sleep(120)\n"
)
# A parent that starts two members (which inherit its stdout) and then is one itself.
PARENT = (
    "import subprocess, sys\n"
    f"kids = [subprocess.Popen([sys.executable, '-c', {MEMBER!r}]) for _ in range(2)]\n" + MEMBER
)


@contextmanager
def started_tree() -> Iterator[subprocess.Popen[bytes]]:
    """A parent and two children, each holding `HOLDS` MiB, all ready when this yields; all ended after."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE)
    try:
        assert parent.stdout is not None
        for _ in range(3):
            parent.stdout.readline()
        yield parent
    finally:
        for child in psutil.Process(parent.pid).children(recursive=True):
            child.kill()
        parent.kill()
        parent.wait()
