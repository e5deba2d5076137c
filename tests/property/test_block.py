"""Properties of the /sys/block whole-disk choice and the fallback skip list (docs/behaviour.md §3.6)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.parse.block import skipped_disk, whole_disks
from tests.examples import costly

# The fallback skip list's prefixes (docs/behaviour.md §3.6).
SKIPPED_PREFIXES = ["loop", "ram", "zram", "dm-", "md", "sr", "fd"]
# Names the kernel gives physical disks (sd.c, nvme, virtio_blk, xen-blkfront, mmc_block).
physical_names = st.from_regex(r"(sd[a-z]{1,3}|nvme[0-9]n[0-9]|vd[a-z]|xvd[a-z]|mmcblk[0-9])", fullmatch=True)
device_paths = st.from_regex(
    r"\.\./devices/(pci0000:00/0000:00:0[0-9]\.0/[a-z0-9]+/block|platform/[a-z]+/block)", fullmatch=True
)


@given(st.dictionaries(physical_names, device_paths), st.dictionaries(st.text(max_size=8), st.text(max_size=8)))
@costly(0.5)
def test_only_entries_outside_devices_virtual_are_whole_disks(
    physical: dict[str, str], virtual_names: dict[str, str]
) -> None:
    virtual = {f"v{name}": f"../devices/virtual/block/{name}{tail}" for name, tail in virtual_names.items()}
    assert whole_disks({**virtual, **physical}) == frozenset(physical)


@given(st.dictionaries(st.text(), st.text()))
def test_whole_disks_never_raises_and_keeps_only_given_names(links: dict[str, str]) -> None:
    assert whole_disks(links) <= frozenset(links)


@given(st.sampled_from(SKIPPED_PREFIXES), st.text())
def test_every_name_with_a_skipped_prefix_is_skipped(prefix: str, rest: str) -> None:
    assert skipped_disk(prefix + rest)


@given(physical_names)
def test_physical_disk_names_are_not_skipped(name: str) -> None:
    assert not skipped_disk(name)


@given(st.text())
def test_skipped_disk_never_raises(name: str) -> None:
    assert skipped_disk(name) in (True, False)
