"""The /sys/block reader: which list of whole disks the io section sums over (SPEC 3.6)."""

from __future__ import annotations

import os
from pathlib import Path

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
