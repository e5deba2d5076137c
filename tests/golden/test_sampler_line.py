"""One line through `Sampler(..., proc=..., sys=...)` over a fixture machine (docs/behaviour.md §3, §7).

`fixtures/machine/linux-6.18.44-fc-v857-x86_64-2cores/capture/` holds this machine's /proc/stat, /proc/meminfo,
/proc/diskstats and /proc/net/dev byte for byte, `sys/block/` its /sys/block links (same targets). `edited/` is a
copy changed by hand (see `diff -r capture edited`):

/proc/stat (USER_HZ ticks; columns user nice system idle iowait irq softirq steal):
    cpu   user +400, system +100, idle +300, iowait +100      -> total +900
    cpu0  user +400, idle +100                                -> total +500, busy 400
    cpu1  system +100, idle +200, iowait +100                 -> total +400, busy 100
  docs/behaviour.md §3.3: user = 400/900 = 44.44.. -> 44.4; system = 100/900 = 11.1; iowait = 100/900 = 11.1; steal 0.0;
  busiest = max(100*400/500, 100*100/400) = max(80.0, 25.0) = 80.0.
/proc/meminfo: MemAvailable 24102092 -> 24002092 kB, Active(file) 127564 -> 127664 kB. docs/behaviour.md
§3.4 (edited values):
  total = 24683652 kB * 1024 = 25276059648; available = 24002092 * 1024 = 24578142208;
  used = (24683652 - 24002092) * 1024 = 681560 * 1024 = 697917440;
  cache = Active(file) + Inactive(file) = (127664 + 243544) * 1024 = 371208 * 1024 = 380116992;
  SwapTotal = SwapFree = 0 -> swap_total 0, swap_used 0; rss 0 (no --pid, no --match).
/proc/diskstats: vda sectors read 1942346 -> 1943346 (+1000), written 2151056 -> 2153056 (+2000); loop0 sectors
  read +5000 and zram0 sectors written +7000, but their /sys/block links are under devices/virtual: not counted
  (docs/behaviour.md §3.6). io read = 1000 * 512 / dt = 512000 / dt, write = 2000 * 512 / dt = 1024000 / dt.
/proc/net/dev: eth0 received 229276201 -> 229281201 (+5000), sent 407811 -> 410811 (+3000); lo received +100000 is
  left out (docs/behaviour.md §3.7). net in = 5000 / dt, out = 3000 / dt.
cores: the capture has two `cpuN` lines (cpu0, cpu1) -> 2 (docs/behaviour.md §3.2).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orca.sample.parse import net_dev
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
    with Sampler(0, "", dirs, proc=str(proc), sys=str(sys_root)) as sampler:
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
    # docs/behaviour.md §3.1: no containers without --cgroup; no pressure without /proc/pressure
    assert list(line) == [*KEYS, "start"]
    assert line["v"] == 1
    assert line["host"] == socket.gethostname()
    assert line["cores"] == 2
    dt = line["dt"]
    assert 0.3 <= dt < 5
    assert abs(line["t"] - time.time()) < 5
    # docs/behaviour.md §3.2: `start` is the wall clock of the baseline, one `dt` before the first line's `t`.
    assert abs(line["t"] - dt - line["start"]) < 0.01
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
    """docs/behaviour.md §3.5: measured at the nearest existing ancestor, reported under its own path; one per
    file system, the first named wins."""
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
    """docs/behaviour.md §3.10: a section whose file cannot be read is null; the rest of the line is still written."""
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


CAPTURES = Path(__file__).parent / "captures"
PROCS = Path(__file__).parent / "fixtures" / "procs" / "linux-6.18.44-fc-v857-x86_64-sh-and-two-sleeps"
PAGE = os.sysconf("SC_PAGE_SIZE")
SOURCE_TREE = Path(__file__).parents[2] / "src"


def whole_machine(tmp_path: Path) -> Path:
    """The captured machine's /proc with its pressure files and the captured `sh` and two `sleep`s (9204-9206)."""
    proc = tmp_path / "proc"
    shutil.copytree(MACHINE / "capture" / "proc", proc)
    shutil.copytree(PROCS, proc, dirs_exist_ok=True)
    (proc / "pressure").mkdir()
    for resource in ("cpu", "memory", "io"):
        capture = CAPTURES / f"proc_pressure_{resource}.linux-6.18.44-fc-v857.x86_64-2cores.txt"
        shutil.copy(capture, proc / "pressure" / resource)
    return proc


SAMPLE_ONE_LINE = """
import json, sys
from orca.sample.parse import net_dev
from orca.sample.shell.sampler import Sampler
with Sampler(0, "sleep", [], proc=sys.argv[1], sys=sys.argv[2]) as sampler:
    print(sampler.line())
"""


def line_in_a_child(proc: Path, sys_root: Path) -> tuple[dict[str, Any], str]:
    """One line of a Sampler made in a child process (this source tree's), and what it said on standard error.

    A child, so that a reader blocked for good fails this test after a timeout instead of hanging the suite."""
    environment = {**os.environ, "PYTHONPATH": str(SOURCE_TREE)}
    done = subprocess.run(
        [sys.executable, "-c", SAMPLE_ONE_LINE, str(proc), str(sys_root)],
        capture_output=True,
        env=environment,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    line: dict[str, Any] = json.loads(done.stdout)
    return line, done.stderr.decode()


# `--match sleep` over the captured processes: 9205 and 9206, statm's 460 + 452 pages (fixtures/procs/README.md).
@pytest.mark.parametrize(
    ("fifo", "section", "expected"),
    [
        pytest.param("stat", "cpu", None, id="stat"),
        pytest.param("meminfo", "mem", None, id="meminfo"),
        pytest.param("diskstats", "io", None, id="diskstats"),
        pytest.param("net/dev", "net", None, id="net-dev"),
        pytest.param("pressure/cpu", "pressure", ["memory", "io"], id="pressure-cpu"),
        pytest.param("9205/statm", "rss", 452 * PAGE, id="pid-statm"),
        pytest.param("9206/cmdline", "rss", 460 * PAGE, id="pid-cmdline"),
        pytest.param("9206/stat", "rss", 460 * PAGE, id="pid-stat"),
    ],
)
def test_a_fifo_where_a_kernel_file_is_expected_is_never_read(
    tmp_path: Path, fifo: str, section: str, expected: object
) -> None:
    """A reader never blocks on a file: a FIFO (which nothing writes to) in place of a kernel file makes only its
    own reading missing, and the line still comes. An open or read of it would wait for good."""
    proc = whole_machine(tmp_path)
    (proc / fifo).unlink()
    os.mkfifo(proc / fifo)
    line, said = line_in_a_child(proc, MACHINE / "sys")
    if section == "rss":
        assert line["mem"]["rss"] == expected
    elif section == "pressure":
        assert list(line["pressure"]) == expected
    else:
        assert line[section] is expected
        assert f"{proc / fifo}: not a regular file" in said, said
    untouched = {"cpu", "mem", "io", "net"} - {section}
    assert all(line[key] is not None for key in untouched), line


def test_a_failing_source_is_told_once_until_it_reads_again(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A section that becomes null says which file and why on standard error: once for a run of failures, and
    again only after the file has read well in between. An unexpected exception in a reader is told the same way,
    with its type and no traceback."""
    proc = tmp_path / "proc"
    shutil.copytree(MACHINE / "capture" / "proc", proc)
    meminfo = proc / "meminfo"
    good = meminfo.read_bytes()
    with Sampler(0, "", [], proc=str(proc), sys=str(MACHINE / "sys")) as sampler:
        capfd.readouterr()
        meminfo.write_text("nothing here\n")
        lines = [json.loads(sampler.line()) for _ in range(3)]
        assert [line["mem"] for line in lines] == [None, None, None]
        said = capfd.readouterr().err.splitlines()
        # meminfo.parse's reason for text without one `Key: value` line.
        assert said == [f"orca sample: cannot read {meminfo}: no `Key: value` line"]
        meminfo.write_bytes(good)
        assert json.loads(sampler.line())["mem"] is not None
        meminfo.unlink()
        assert json.loads(sampler.line())["mem"] is None
        assert json.loads(sampler.line())["mem"] is None
        assert capfd.readouterr().err.splitlines() == [f"orca sample: cannot read {meminfo}: No such file or directory"]

        def broken(text: str) -> object:
            raise ZeroDivisionError("division by zero")

        monkeypatch.setattr(net_dev, "parse", broken)
        assert [json.loads(sampler.line())["net"] for _ in range(2)] == [None, None]
        assert capfd.readouterr().err.splitlines() == [
            f"orca sample: cannot read {proc}/net/dev: ZeroDivisionError: division by zero"
        ]


def write_disk(proc: Path, sys_block: Path, name: str, target: str, sectors: tuple[int, int]) -> None:
    """A whole disk `name` in /sys/block (a link to `target`) and its /proc/diskstats line (major 254, minor 16):
    `sectors` read (field 6) and written (field 10), every other counter 0."""
    (sys_block / name).unlink(missing_ok=True)
    os.symlink(target, sys_block / name)
    read, written = sectors
    kept = [row for row in (proc / "diskstats").read_text().splitlines() if row.split()[2] != name]
    kept.append(f" 254      16 {name} 0 0 {read} 0 0 0 {written} 0 0 0 0 0 0 0 0 0 0")
    (proc / "diskstats").write_text("\n".join(kept) + "\n")


def remove_disk(proc: Path, sys_block: Path, name: str) -> None:
    (sys_block / name).unlink()
    kept = [row for row in (proc / "diskstats").read_text().splitlines() if row.split()[2] != name]
    (proc / "diskstats").write_text("\n".join(kept) + "\n")


def test_a_disk_that_appears_or_vanishes_between_lines(tmp_path: Path) -> None:
    """/sys/block is read again when /proc/diskstats lists other devices: a physical disk plugged in after the
    start counts (from its first reading, 0 in the line where it appears); once it is gone and a virtual device
    takes its name, that device is not counted. Nothing else moves, so `io` is exactly the new disk's sectors."""
    proc = tmp_path / "proc"
    shutil.copytree(MACHINE / "capture" / "proc", proc)
    sys_root = tmp_path / "sys"
    shutil.copytree(MACHINE / "sys", sys_root, symlinks=True)
    block = sys_root / "block"
    physical = "../devices/pci0000:00/0000:00:05.0/virtio3/block/vdb"
    with Sampler(0, "", [], proc=str(proc), sys=str(sys_root)) as sampler:
        time.sleep(0.05)
        assert json.loads(sampler.line())["io"] == {"read": 0, "write": 0}
        write_disk(proc, block, "vdb", physical, (8000, 16000))
        time.sleep(0.05)
        assert json.loads(sampler.line())["io"] == {"read": 0, "write": 0}, "its first reading"
        write_disk(proc, block, "vdb", physical, (9000, 19000))
        time.sleep(0.1)
        line = json.loads(sampler.line())
        # 1000 sectors read and 3000 written, 512 bytes each (the kernel's sector unit in diskstats).
        for key, delta in (("read", 1000 * 512), ("write", 3000 * 512)):
            low, high = rate_bounds(delta, line["dt"])
            assert low <= line["io"][key] <= high, (key, line["io"], line["dt"])
        remove_disk(proc, block, "vdb")
        assert json.loads(sampler.line())["io"] == {"read": 0, "write": 0}
        write_disk(proc, block, "vdb", "../devices/virtual/block/vdb", (0, 0))
        assert json.loads(sampler.line())["io"] == {"read": 0, "write": 0}
        write_disk(proc, block, "vdb", "../devices/virtual/block/vdb", (5000, 5000))
        time.sleep(0.05)
        assert json.loads(sampler.line())["io"] == {"read": 0, "write": 0}, "a virtual device is not a whole disk"
