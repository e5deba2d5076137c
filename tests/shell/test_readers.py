"""The shell's file readers: the bounded small-file reader, the kept kernel files, and the /sys/block reader
(which list of whole disks the io section sums over, docs/behaviour.md §3.6)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from orca.sample.shared.bounded import (
    KeptFiles,
    NotRegularFile,
    TooLarge,
    is_kernel_procfs,
    read_file,
    read_or_none,
)
from orca.sample.shell.machine.fs import FS
from orca.sample.shell.machine.kernel import read_whole_disks
from tests.shell.descriptors import open_descriptors


def _sys_block(root: Path, links: dict[str, str]) -> FS:
    block = root / "block"
    block.mkdir(parents=True)
    for name, target in links.items():
        os.symlink(target, block / name)
    return FS(sys=str(root))


def test_physical_disks_are_the_list(tmp_path: Path) -> None:
    sys = _sys_block(tmp_path, {
        "vda": "../devices/pci0000:00/0000:00:02.0/virtio1/block/vda",
        "loop0": "../devices/virtual/block/loop0",
        "nvme0n1": "../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1",
    })
    assert read_whole_disks(sys) == frozenset({"vda", "nvme0n1"})


def test_only_virtual_devices_fall_back_to_the_skip_list(tmp_path: Path) -> None:
    """A /sys/block with no physical disk (a container's partial /sys) must not silence `io`: None = skip list."""
    sys = _sys_block(tmp_path, {"loop0": "../devices/virtual/block/loop0", "zram0": "../devices/virtual/block/zram0"})
    assert read_whole_disks(sys) is None


def test_no_sys_block_is_no_list(tmp_path: Path) -> None:
    assert read_whole_disks(FS(sys=str(tmp_path / "missing"))) is None


@pytest.mark.requires_proc
def test_kept_files_read_fresh_values_and_do_not_grow() -> None:
    """A /proc file's descriptor is kept between lines, and each read gives the kernel's values now: many reads
    hold one descriptor for it, and `close()` closes it."""
    files = KeptFiles(8)
    first = files.read("/proc/uptime")
    after_one = open_descriptors().count("/proc/uptime")
    later = [files.read("/proc/uptime") for _ in range(200)]
    assert after_one == open_descriptors().count("/proc/uptime") >= 1, "one kept descriptor, however many reads"
    uptimes = [float(text.split()[0]) for text in [first, *later]]
    assert uptimes == sorted(uptimes)
    time.sleep(0.05)
    assert float(files.read("/proc/uptime").split()[0]) > uptimes[0], "a kept descriptor must not give stale values"
    files.close()
    assert "/proc/uptime" not in open_descriptors()


@pytest.mark.requires_proc
def test_kept_files_are_bounded() -> None:
    files = KeptFiles(2)
    for path in ("/proc/uptime", "/proc/loadavg", "/proc/version", "/proc/stat"):
        assert files.read(path)
    assert len(files) == 2
    files.close()
    assert len(files) == 0


def test_regular_files_are_read_through_their_path_every_time(tmp_path: Path) -> None:
    """A fixture (a regular file) replaced between two lines is read anew: its descriptor is never kept."""
    files = KeptFiles(8)
    path = tmp_path / "stat"
    path.write_text("cpu  1 2 3 4\n")
    assert files.read(str(path)) == b"cpu  1 2 3 4\n"
    replacement = tmp_path / "stat.new"
    replacement.write_text("cpu  5 6 7 8\n")
    os.replace(replacement, path)
    assert files.read(str(path)) == b"cpu  5 6 7 8\n"
    assert len(files) == 0
    empty = tmp_path / "empty"
    empty.write_text("")
    assert files.read(str(empty)) == b""
    empty.write_text("now something\n")
    assert files.read(str(empty)) == b"now something\n"
    with pytest.raises(FileNotFoundError):
        files.read(str(tmp_path / "missing"))
    files.close()


@pytest.mark.requires_proc
def test_read_each_gives_what_read_gives(tmp_path: Path) -> None:
    """The files read together every line, in one call: each path's bytes as `read` gives them, or the error it
    raises."""
    fixture = tmp_path / "stat"
    fixture.write_text("cpu  1 2 3 4\n")
    paths = ("/proc/loadavg", "/proc/version", str(fixture), str(tmp_path / "missing"))
    files = KeptFiles(8)
    for _ in range(2):  # the second time through the descriptors kept by the first
        got = files.read_each(paths)
        assert list(got) == list(paths)
        assert got["/proc/version"] == files.read("/proc/version")
        loadavg = got["/proc/loadavg"]
        assert isinstance(loadavg, bytes) and len(loadavg.split()) == 5  # proc(5): three loads, runnable/all, last pid
        assert got[str(fixture)] == b"cpu  1 2 3 4\n"
        assert isinstance(got[str(tmp_path / "missing")], FileNotFoundError)
    files.close()


def test_a_kept_descriptor_that_reads_empty_is_opened_again(tmp_path: Path) -> None:
    """A file of size 0 is kept open (as the kernel's are); once its path names another file (as a removed and
    recreated cgroup's does), the kept descriptor reads nothing: the path is opened again, in `read_each` as in
    `read`, rather than the file taken for an empty one."""
    files = KeptFiles(8)
    for read in (lambda path: files.read_each((path,))[path], files.read):
        path = tmp_path / f"file-{len(files)}"
        path.write_bytes(b"")
        assert read(str(path)) == b""
        kept = len(files)
        assert kept >= 1, "a file of size 0 is kept open"
        replacement = tmp_path / "replacement"
        replacement.write_bytes(b"cpu  1 2 3 4\n")
        os.replace(replacement, path)  # the kept descriptor still reads the old, empty file
        assert read(str(path)) == b"cpu  1 2 3 4\n"
        assert len(files) == kept - 1, "and it is let go (the new file has a size: not kept)"
    files.close()


@pytest.mark.timeout(30)
def test_a_fifo_or_device_is_never_read(tmp_path: Path) -> None:
    """A reader never blocks: a FIFO nothing writes to (an open or read of it would wait for good), a device that
    streams forever and a directory are refused, by the path and by the kept-file reader alike."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    files = KeptFiles(8)
    for path in (str(fifo), "/dev/zero", str(tmp_path)):
        with pytest.raises(NotRegularFile):
            read_file(path)
        with pytest.raises(NotRegularFile):
            files.read(path)
    assert read_or_none(str(fifo)) is None
    assert len(files) == 0


def test_a_file_over_the_bound_is_refused_unless_a_prefix_is_wanted(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"a" * 5000 + b"\0" + b"b" * 5000)
    with pytest.raises(TooLarge):
        read_file(str(path), 4096)
    assert read_file(str(path), 10001) == path.read_bytes()
    assert read_file(str(path), 4096, up_to=b"\0") == b"a" * 4096, "a prefix of the bound"
    assert read_file(str(path), 1 << 20, up_to=b"\0").startswith(b"a" * 5000 + b"\0")


def test_read_file_gives_every_byte_whatever_the_size(tmp_path: Path) -> None:
    """A read under 2 KiB ends the loop; no size around that or the chunk's may lose a byte."""
    chunk = 1 << 16
    for size in (0, 1, 2047, 2048, 2049, 4096, chunk - 1, chunk, chunk + 1, chunk + 2047, chunk + 2048, 3 * chunk + 7):
        path = tmp_path / f"file-{size}"
        content = bytes(i % 251 for i in range(size))
        path.write_bytes(content)
        assert read_file(str(path)) == content, size


def test_read_file_reads_a_seq_file_longer_than_a_chunk_to_its_end() -> None:
    """A seq_file of many records comes back whole, though each read returns only about a page (kallsyms: megabytes
    of ~40-byte records, the same on every read)."""
    if not Path("/proc/kallsyms").exists():
        pytest.skip("no /proc/kallsyms here")
    with open("/proc/kallsyms", "rb") as file:
        expected = file.read()
    assert len(expected) > 1 << 17
    assert read_file("/proc/kallsyms") == expected


@pytest.mark.requires_proc
def test_only_the_kernels_procfs_is_trusted(tmp_path: Path) -> None:
    """Process files are read unchecked only under the kernel's own procfs, whose `self` names this process."""
    assert is_kernel_procfs("/proc")
    (tmp_path / "self").symlink_to("1")
    assert not is_kernel_procfs(str(tmp_path))
    assert not is_kernel_procfs(str(tmp_path / "missing"))
