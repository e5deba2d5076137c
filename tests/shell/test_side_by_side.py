"""Both readers on this machine over the same interval: the psutil reader (what macOS and the BSDs use) must give
what the /proc reader gives, on the load, memory, writes and traffic this test causes itself.

Each line's readings are taken back to back (the /proc reader's, then the psutil reader's, at the start and at the
end), so both cover the same interval to within milliseconds; what other processes do meanwhile is seen by both.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from orca.sample.shell.sampler import Sampler
from tests.shell.test_psutil_procs import HOLDS, MIB, started_tree

pytest.importorskip("psutil")
pytestmark = [pytest.mark.requires_proc, pytest.mark.slow]

SPIN = "import os\nif hasattr(os, 'sched_setaffinity'):\n    os.sched_setaffinity(0, {0})\nwhile True:\n    pass\n"
WRITTEN = 48 * MIB
DATAGRAMS, DATAGRAM = 2000, 1400
# RFC 5737 documentation address: routed out through the default route's interface, answered by no one.
NOWHERE = ("198.51.100.1", 9)


@contextmanager
def spinning() -> Iterator[None]:
    """A steady load: one process spinning on core 0."""
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        time.sleep(0.3)
        yield
    finally:
        spinner.kill()
        spinner.wait()


def write_then_read_back(path: Path) -> None:
    """`WRITTEN` bytes written and fsync'd to the disk under `path`, dropped from the page cache, and read again
    (so they are read from the disk)."""
    block = os.urandom(MIB)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for _ in range(WRITTEN // MIB):
            os.write(fd, block)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    fd = os.open(path, os.O_RDONLY)
    try:
        while os.read(fd, MIB):
            pass
    finally:
        os.close(fd)


def send_out() -> int:
    """Datagrams to an address outside this machine, through the default route; the bytes sent (0 without one)."""
    sent = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        for _ in range(DATAGRAMS):
            try:
                sent += udp.sendto(b"x" * DATAGRAM, NOWHERE)
            except OSError:  # no route out of this machine
                return 0
    return sent


def within(a: float, b: float, fraction: float) -> bool:
    return abs(a - b) <= fraction * max(abs(a), abs(b))


def test_both_readers_agree(tmp_path: Path) -> None:
    with started_tree() as tree, spinning():
        dirs = [str(tmp_path), "/proc"]
        samplers = {reader: Sampler(tree.pid, "", dirs, reader=reader) for reader in ("proc", "psutil")}
        time.sleep(0.3)
        write_then_read_back(tmp_path / "written")
        sent = send_out()
        time.sleep(0.5)
        lines: dict[str, dict[str, Any]] = {reader: json.loads(sampler.line()) for reader, sampler in samplers.items()}
    proc, psutil_line = lines["proc"], lines["psutil"]

    assert proc["cores"] == psutil_line["cores"]
    assert proc["mem"]["total"] == psutil_line["mem"]["total"]
    assert proc["mem"]["swap_total"] == psutil_line["mem"]["swap_total"]
    assert within(proc["mem"]["available"], psutil_line["mem"]["available"], 0.01)

    # Others write to these file systems meanwhile: the same entries, sizes equal, use within 64 MiB.
    assert [(d["path"], d["total"]) for d in proc["disk"]] == [(d["path"], d["total"]) for d in psutil_line["disk"]]
    for ours, theirs in zip(proc["disk"], psutil_line["disk"], strict=True):
        assert abs(ours["free"] - theirs["free"]) < 64 << 20
        assert abs(ours["used"] - theirs["used"]) < 64 << 20

    # The spinner keeps one core busy for the whole interval.
    assert proc["cpu"]["busiest"] > 75
    for key in ("user", "system", "iowait", "steal", "busiest"):
        assert abs(proc["cpu"][key] - psutil_line["cpu"][key]) <= 5, (key, proc["cpu"], psutil_line["cpu"])

    assert proc["mem"]["rss"] >= 3 * HOLDS * MIB
    assert within(proc["mem"]["rss"], psutil_line["mem"]["rss"], 0.02)

    for line in lines.values():
        # What this test caused is in each reader's rates (others' writes only add to them).
        assert line["io"]["write"] * line["dt"] >= 0.9 * WRITTEN, line
        assert line["io"]["read"] * line["dt"] >= 0.9 * WRITTEN, line
    for key in ("read", "write"):
        assert within(proc["io"][key], psutil_line["io"][key], 0.10), (key, proc["io"], psutil_line["io"])

    if sent:
        for line in lines.values():
            assert line["net"]["out"] * line["dt"] >= 0.9 * sent, line
    # Received bytes are only what arrives by itself: compared as they come (both 0 on a quiet machine).
    for key in ("in", "out"):
        assert within(proc["net"][key], psutil_line["net"][key], 0.10), (key, proc["net"], psutil_line["net"])
