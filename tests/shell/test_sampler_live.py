"""The Sampler on this live machine: values that must agree with the kernel's own files and statvfs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from orca.sample.shell.sampler import Sampler
from tests.shell.run import read_lines, run

# The live line has the same keys and values whichever reader took it.
pytestmark = pytest.mark.usefixtures("sample_reader")


def mem_total_kb() -> int:
    # proc(5): "MemTotal %lu" in kB; read here by the test itself, not through the project's parser.
    match = re.search(r"^MemTotal:\s*(\d+) kB$", Path("/proc/meminfo").read_text(), re.MULTILINE)
    assert match is not None
    return int(match.group(1))


def live_line(dirs: list[str]) -> dict[str, Any]:
    with Sampler(0, "", dirs) as sampler:
        line: dict[str, Any] = json.loads(sampler.line())
    return line


@pytest.mark.requires_proc
def test_mem_total_is_memtotal_times_1024() -> None:
    """docs/behaviour.md §3.4: bytes are kB × 1024."""
    line = live_line([])
    assert line["mem"]["total"] == mem_total_kb() * 1024
    assert 0 <= line["mem"]["available"] <= line["mem"]["total"]
    assert line["mem"]["used"] == line["mem"]["total"] - line["mem"]["available"]


@pytest.mark.requires_proc
def test_disks_agree_with_statvfs(tmp_path: Path) -> None:
    """docs/behaviour.md §3.5: per file system, total = f_blocks × f_frsize, free = f_bavail × f_frsize, used =
    (f_blocks − f_bfree) × f_frsize; /proc is a file system of its own, `tmp_path` and its child share one."""
    child = tmp_path / "child"
    child.mkdir()
    line = live_line([str(tmp_path), "/proc", str(child)])
    assert [disk["path"] for disk in line["disk"]] == [str(tmp_path), "/proc"]
    for disk in line["disk"]:
        vfs = os.statvfs(disk["path"])
        assert disk["total"] == vfs.f_blocks * vfs.f_frsize
        # The tests and other engineers write meanwhile: free and used agree within 64 MiB.
        assert abs(disk["free"] - vfs.f_bavail * vfs.f_frsize) < 64 << 20
        assert abs(disk["used"] - (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize) < 64 << 20


@pytest.mark.requires_proc
def test_cores_host_and_keys() -> None:
    """docs/behaviour.md §3.1, §3.2: key order, cores = the `cpuN` lines of /proc/stat, host = the host name."""
    line = live_line([])
    cpu_lines = [row for row in Path("/proc/stat").read_text().splitlines() if re.match(r"cpu\d+ ", row)]
    assert line["cores"] == len(cpu_lines)
    assert line["host"] == os.uname().nodename
    assert list(line)[:11] == ["v", "t", "dt", "host", "cores", "cpu", "mem", "disk", "io", "net", "self_cpu"]
    assert "containers" not in line


def test_pid_rss_is_counted(tmp_path: Path) -> None:
    """docs/behaviour.md §3.4: with --pid, `rss` is the resident bytes of that process's tree: here this test's own
    process, which holds a Python interpreter (well over 4 MiB resident) and the sampler it runs as a child."""
    out = tmp_path / "m.jsonl"
    done = run("--out", str(out), "--pid", str(os.getpid()), "--count", "2", "--seconds", "0.2", "--dirs", "/")
    assert done.returncode == 0
    for line in read_lines(out):
        assert line["mem"]["rss"] > 4 << 20
