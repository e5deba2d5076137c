"""Which entries of /sys/block are whole physical disks (SPEC 3.6)."""

from __future__ import annotations

from collections.abc import Mapping


def whole_disks(links: Mapping[str, str]) -> frozenset[str]:
    """The names in /sys/block whose link target is not under `devices/virtual/` (no loop, ram, zram, dm, md)."""
    raise NotImplementedError  # issue 2: being written


def skipped_disk(name: str) -> bool:
    """The seed's `_skipped_disk`: loop, ram, zram, dm-, md, sr, fd devices (the fallback without /sys/block)."""
    raise NotImplementedError  # issue 2: being written
