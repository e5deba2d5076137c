"""One line through `Sampler(..., proc=..., sys=...)` over a fixture machine (issue 6 golden line; SPEC 3, 7).

`fixtures/machine/linux-6.18.44-fc-v857-x86_64-2cores/capture/` holds this machine's /proc/stat, /proc/meminfo,
/proc/diskstats and /proc/net/dev byte for byte, `sys/block/` its /sys/block links (same targets). `edited/` is a
copy changed by hand (see `diff -r capture edited`):

/proc/stat (USER_HZ ticks; columns user nice system idle iowait irq softirq steal):
    cpu   user +400, system +100, idle +300, iowait +100      -> total +900
    cpu0  user +400, idle +100                                -> total +500, busy 400
    cpu1  system +100, idle +200, iowait +100                 -> total +400, busy 100
  SPEC 3.3: user = 400/900 = 44.44.. -> 44.4; system = 100/900 = 11.1; iowait = 100/900 = 11.1; steal 0.0;
  busiest = max(100*400/500, 100*100/400) = max(80.0, 25.0) = 80.0.
/proc/meminfo: MemAvailable 24102092 -> 24002092 kB, Active(file) 127564 -> 127664 kB. SPEC 3.4 (edited values):
  total = 24683652 kB * 1024 = 25276059648; available = 24002092 * 1024 = 24578142208;
  used = (24683652 - 24002092) * 1024 = 681560 * 1024 = 697917440;
  cache = Active(file) + Inactive(file) = (127664 + 243544) * 1024 = 371208 * 1024 = 380116992;
  SwapTotal = SwapFree = 0 -> swap_total 0, swap_used 0; rss 0 (no --pid, no --match).
/proc/diskstats: vda sectors read 1942346 -> 1943346 (+1000), written 2151056 -> 2153056 (+2000); loop0 sectors
  read +5000 and zram0 sectors written +7000, but their /sys/block links are under devices/virtual: not counted
  (SPEC 3.6). io read = 1000 * 512 / dt = 512000 / dt, write = 2000 * 512 / dt = 1024000 / dt.
/proc/net/dev: eth0 received 229276201 -> 229281201 (+5000), sent 407811 -> 410811 (+3000); lo received +100000 is
  left out (SPEC 3.7). net in = 5000 / dt, out = 3000 / dt.
cores: the capture has two `cpuN` lines (cpu0, cpu1) -> 2 (SPEC 3.2).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from orca.sample.shell.sampler import Sampler

MACHINE = Path(__file__).parent / "fixtures" / "machine" / "linux-6.18.44-fc-v857-x86_64-2cores"
KEYS = ["v", "t", "dt", "host", "cores", "cpu", "mem", "disk", "io", "net", "self_cpu"]


def rate_bounds(delta: int, dt: float) -> tuple[float, float]:
    """The rate the line may show for `delta` over the line's `dt`, which is the true dt rounded to 3 decimals."""
    return delta / (dt + 0.0005) - 1, delta / (dt - 0.0005) + 1


@pytest.fixture
def machine(tmp_path: Path) -> tuple[Path, Path]:
    proc = tmp_path / "proc"
    shutil.copytree(MACHINE / "capture" / "proc", proc)
    return proc, MACHINE / "sys"


def first_line(proc: Path, sys_root: Path, dirs: list[str]) -> dict[str, Any]:
    sampler = Sampler(0, "", dirs, proc=str(proc), sys=str(sys_root))
    # Some real time between the readings, so the rates' dt is far from its 1 ms rounding.
    time.sleep(0.3)
    shutil.copytree(MACHINE / "edited" / "proc", proc, dirs_exist_ok=True)
    line: dict[str, Any] = json.loads(sampler.line())
    return line


def test_the_fixture_is_what_the_docstring_says() -> None:
    # Guard against an edit of the fixture that the hand-worked values above do not follow.
    capture = (MACHINE / "capture" / "proc" / "stat").read_text().splitlines()[:3]
    edited = (MACHINE / "edited" / "proc" / "stat").read_text().splitlines()[:3]
    assert capture[0].startswith("cpu  14983 0 3145 83436 200 0 40 14")
    assert edited[0].startswith("cpu  15383 0 3245 83736 300 0 40 14")
    assert os.readlink(MACHINE / "sys" / "block" / "vda") == "../devices/pci0000:00/0000:00:02.0/virtio1/block/vda"
    assert os.readlink(MACHINE / "sys" / "block" / "loop0") == "../devices/virtual/block/loop0"


def test_golden_line(machine: tuple[Path, Path], tmp_path: Path) -> None:
    proc, sys_root = machine
    line = first_line(proc, sys_root, [])
    assert list(line) == KEYS  # SPEC 3.1: no containers without --cgroup; no pressure without /proc/pressure
    assert line["v"] == 1
    assert line["host"] == socket.gethostname()
    assert line["cores"] == 2
    dt = line["dt"]
    assert 0.3 <= dt < 5
    assert abs(line["t"] - time.time()) < 5
    assert line["cpu"] == {"user": 44.4, "system": 11.1, "iowait": 11.1, "steal": 0.0, "busiest": 80.0}
    assert line["mem"] == {
        "total": 25276059648,
        "used": 697917440,
        "available": 24578142208,
        "cache": 380116992,
        "swap_total": 0,
        "swap_used": 0,
        "rss": 0,
    }
    assert line["disk"] == []  # --dirs named nothing
    for key, delta in (("read", 512000), ("write", 1024000)):
        low, high = rate_bounds(delta, dt)
        assert low <= line["io"][key] <= high, (key, line["io"], dt)
    for key, delta in (("in", 5000), ("out", 3000)):
        low, high = rate_bounds(delta, dt)
        assert low <= line["net"][key] <= high, (key, line["net"], dt)
    assert isinstance(line["self_cpu"], float)
    assert line["self_cpu"] > 0


def test_disk_of_a_directory_not_made_yet(machine: tuple[Path, Path], tmp_path: Path) -> None:
    """SPEC 3.5: measured at the nearest existing ancestor, reported under its own path; one per file system,
    the first named wins."""
    proc, sys_root = machine
    missing = str(tmp_path / "not" / "made" / "yet")
    line = first_line(proc, sys_root, [missing, str(tmp_path)])
    vfs = os.statvfs(tmp_path)
    [disk] = line["disk"]
    assert disk["path"] == missing
    assert disk["total"] == vfs.f_blocks * vfs.f_frsize
    # Others write to this file system meanwhile: free and used agree within 64 MiB.
    assert abs(disk["free"] - vfs.f_bavail * vfs.f_frsize) < 64 << 20
    assert abs(disk["used"] - (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize) < 64 << 20


def test_unreadable_sources_are_null(tmp_path: Path) -> None:
    """SPEC 3.10: a section whose file cannot be read is null; the rest of the line is still written."""
    proc = tmp_path / "proc"
    shutil.copytree(MACHINE / "capture" / "proc", proc)
    sampler = Sampler(0, "", [], proc=str(proc), sys=str(tmp_path / "no-sys"))
    (proc / "net" / "dev").unlink()
    (proc / "meminfo").write_text("nothing here\n")
    line = json.loads(sampler.line())
    assert line["net"] is None
    assert line["mem"] is None
    assert line["cores"] == 2
    assert line["cpu"] == {"user": 0.0, "system": 0.0, "iowait": 0.0, "steal": 0.0, "busiest": 0.0}
    assert line["io"] == {"read": 0, "write": 0}  # no /sys/block: the skip list, and no counter moved
