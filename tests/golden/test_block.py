"""/sys/block: which entries are whole disks, from a real listing of this machine (docs/behaviour.md §3.6).

The capture (Linux 6.18.44-fc-v857, x86_64, 2 cores) is `ls -l /sys/block > file`: loop0-7 and zram0 link under
`devices/virtual/block/`, vda under `devices/pci0000:00/0000:00:02.0/virtio1/block/`. The other links are written
by hand after the usual shapes of sysfs (a SATA disk, an NVMe namespace, device-mapper, md RAID).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.block import device_number, skipped_disk, whole_disks

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"
LISTING = (CAPTURES / f"sys_block_ls-l.{MACHINE}.txt").read_bytes().decode()


def links_of(listing: str) -> dict[str, str]:
    """`ls -l` lines `... name -> target` as name → target."""
    return {line.split()[-3]: line.split()[-1] for line in listing.splitlines() if " -> " in line}


def test_the_listing_of_this_machine() -> None:
    links = links_of(LISTING)
    assert len(links) == 10
    assert links["vda"] == "../devices/pci0000:00/0000:00:02.0/virtio1/block/vda"
    assert whole_disks(links) == {"vda"}


def test_hand_written_shapes() -> None:
    links = {
        "sda": "../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda",
        "nvme0n1": "../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1",
        "dm-0": "../devices/virtual/block/dm-0",
        "md127": "../devices/virtual/block/md127",
        "ram0": "../devices/virtual/block/ram0",
        "sr0": "../devices/pci0000:00/0000:00:17.0/ata2/host1/target1:0:0/1:0:0:0/block/sr0",
    }
    # sr0 is a real device, so it is whole; its reads are the run's reads if there are any.
    assert whole_disks(links) == {"sda", "nvme0n1", "sr0"}


def test_no_entries() -> None:
    assert whole_disks({}) == frozenset()


@pytest.mark.parametrize("name", ["loop0", "loop12", "ram0", "zram0", "dm-0", "dm-12", "md0", "md127", "sr0", "fd0"])
def test_the_fallback_skip_list(name: str) -> None:
    assert skipped_disk(name)


@pytest.mark.parametrize("name", ["sda", "sda1", "vda", "nvme0n1", "nvme0n1p2", "xvda", "mmcblk0", "dmz", "", "LOOP0"])
def test_names_not_on_the_skip_list(name: str) -> None:
    # `dmz` is not `dm-`: only the skip list's exact prefixes count, case as the kernel prints them.
    assert not skipped_disk(name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("254:0\n", "254:0", id="vda on Linux 6.18.44-fc-v657 (cat /sys/block/vda/dev)"),
        pytest.param("7:0\n", "7:0", id="loop0 there"),
        pytest.param("259:12\n", "259:12", id="an NVMe namespace (block extended major)"),
        pytest.param("", None, id="empty"),
        pytest.param("254\n", None, id="no minor"),
        pytest.param("254:0:1\n", None, id="three parts"),
        pytest.param("-1:0\n", None, id="negative"),
        pytest.param("٢٥٤:0\n", None, id="Arabic-Indic digits"),
        pytest.param("1" * 11 + ":0\n", None, id="11 digits"),
    ],
)
def test_device_number(text: str, expected: str | None) -> None:
    """`/sys/block/<disk>/dev` holds `MAJ:MIN` and a newline (the dev_t as `%u:%u`)."""
    assert device_number(text) == expected
