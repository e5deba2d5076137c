"""The /sys/block reader: which list of whole disks the io section sums over (SPEC 3.6)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from orca.sample.shell.readers import read_whole_disks


def _sys_block(root: Path, links: dict[str, str]) -> str:
    block = root / "block"
    block.mkdir(parents=True)
    for name, target in links.items():
        os.symlink(target, block / name)
    return str(root)


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
    assert read_whole_disks(str(tmp_path / "missing")) is None


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.requires_proc
def test_kernel_files_are_kept_open_and_read_fresh() -> None:
    """issue 5: a /proc file's descriptor is kept between lines, and each read gives the kernel's values now."""
    from orca.sample.shell.readers import KernelFiles

    files = KernelFiles()
    first = files.read("/proc/uptime")
    fds = _open_fds()
    later = [files.read("/proc/uptime") for _ in range(50)]
    assert _open_fds() == fds, "no descriptor opened or leaked per read"
    assert first is not None and all(text is not None for text in later)
    uptimes = [float(text.split()[0]) for text in [first, *later] if text is not None]
    assert uptimes == sorted(uptimes)
    time.sleep(0.05)
    now = files.read("/proc/uptime")
    assert now is not None and float(now.split()[0]) > uptimes[0], "a kept descriptor must not give stale values"
    files.read("/proc/self/schedstat")
    assert _open_fds() == fds + 1
    files.close()
    assert _open_fds() == fds - 1


def test_regular_files_are_read_through_their_path_every_time(tmp_path: Path) -> None:
    """A fixture (a regular file) replaced between two lines is read anew: its descriptor is never kept."""
    from orca.sample.shell.readers import KernelFiles

    files = KernelFiles()
    path = tmp_path / "stat"
    path.write_text("cpu  1 2 3 4\n")
    assert files.read(str(path)) == b"cpu  1 2 3 4\n"
    replacement = tmp_path / "stat.new"
    replacement.write_text("cpu  5 6 7 8\n")
    os.replace(replacement, path)
    assert files.read(str(path)) == b"cpu  5 6 7 8\n"
    empty = tmp_path / "empty"
    empty.write_text("")
    assert files.read(str(empty)) == b""
    empty.write_text("now something\n")
    assert files.read(str(empty)) == b"now something\n"
    assert files.read(str(tmp_path / "missing")) is None
    files.close()


def test_read_from_gives_every_byte_whatever_the_size(tmp_path: Path) -> None:
    """issue 5: a read under 2 KiB ends the loop; no size around that or the chunk's may lose a byte."""
    from orca.sample.shell.readers import read_bytes

    chunk = 1 << 16
    for size in (0, 1, 2047, 2048, 2049, 4096, chunk - 1, chunk, chunk + 1, chunk + 2047, chunk + 2048, 3 * chunk + 7):
        path = tmp_path / f"file-{size}"
        content = bytes(i % 251 for i in range(size))
        path.write_bytes(content)
        assert read_bytes(str(path)) == content, size


def test_read_from_reads_a_seq_file_longer_than_a_chunk_to_its_end() -> None:
    """A seq_file of many records comes back whole, though each read returns only about a page (kallsyms: megabytes
    of ~40-byte records, the same on every read)."""
    from orca.sample.shell.readers import read_bytes

    if not Path("/proc/kallsyms").exists():
        pytest.skip("no /proc/kallsyms here")
    with open("/proc/kallsyms", "rb") as file:
        expected = file.read()
    assert len(expected) > 1 << 17
    assert read_bytes("/proc/kallsyms") == expected
