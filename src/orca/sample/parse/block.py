"""Which entries of /sys/block are whole physical disks (docs/behaviour.md §3.6)."""

from __future__ import annotations

import re
from collections.abc import Mapping

# The fallback skip list: devices layered on others (loop, dm-, md), in memory (ram, zram) or removable
# media (sr, fd), whose sectors would otherwise be counted twice or are not the run's disk I/O.
_SKIPPED_PREFIXES = ("loop", "ram", "zram", "dm-", "md", "sr", "fd")
# MAJ:MIN as the kernel prints a dev_t (`%u:%u`): a 12-bit major and a 20-bit minor fit in 10 digits each.
_DEVICE_NUMBER = re.compile(r"[0-9]{1,10}:[0-9]{1,10}")


def whole_disks(links: Mapping[str, str]) -> frozenset[str]:
    """The names in /sys/block whose link target is not under `devices/virtual/` (no loop, ram, zram, dm, md).

    `links` maps each entry's name to its link target as `readlink` gives it.

    >>> sorted(whole_disks({"vda": "../devices/pci0000:00/0000:00:02.0/virtio1/block/vda",
    ...                     "loop0": "../devices/virtual/block/loop0"}))
    ['vda']
    """
    return frozenset(name for name, target in links.items() if "devices/virtual/" not in target)


def skipped_disk(name: str) -> bool:
    """Whether a device is left out when /sys/block gives no list: loop, ram, zram, dm-, md, sr, fd devices.

    >>> [skipped_disk(name) for name in ("loop0", "dm-1", "md127", "sr0", "nvme0n1", "sda")]
    [True, True, True, True, False, False]
    """
    return name.startswith(_SKIPPED_PREFIXES)


def device_number(text: str) -> str | None:
    """The `MAJ:MIN` of `/sys/block/<disk>/dev` (or an `io.stat` line's key); None for anything else.

    >>> device_number("253:0\\n"), device_number("8:0:1"), device_number("")
    ('253:0', None, None)
    """
    stripped = text.strip()
    return stripped if _DEVICE_NUMBER.fullmatch(stripped) else None
