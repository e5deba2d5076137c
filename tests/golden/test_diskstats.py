"""/proc/diskstats: a real capture from this machine and every format variant (docs/behaviour.md §3.6, §6).

The capture (Linux 6.18.44-fc-v857, x86_64, 2 cores) was taken with `cat /proc/diskstats > file`: ten 20-field
lines (5.5+ format), loop0-7, vda and zram0. Field numbers are those of Documentation/ABI/testing/procfs-diskstats:
6 is sectors read, 10 sectors written; sectors are 512 bytes whatever the device (iostats.rst). The 7-field lines
are iostats.rst's partition format of 2.6.25 and older: major minor name reads sectors-read writes sectors-written.
Expected values were typed from the lines by a person.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.compute.rates import parse_diskstats
from orca.sample.parse.block import whole_disks
from orca.sample.parse.diskstats import DiskIo, DiskStats, device_line, parse

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"
CAPTURE = (CAPTURES / f"proc_diskstats.{MACHINE}.txt").read_bytes().decode()
SYS_BLOCK = (CAPTURES / f"sys_block_ls-l.{MACHINE}.txt").read_bytes().decode()

# 254       0 vda 8547 4230 1313514 4801 4263 57048 2130992 5168 0 2588 10219 3957 41 57432 235 329 13
VDA = DiskIo("vda", sectors_read=1313514, sectors_written=2130992)
VDA_BYTES = (1313514 * 512, 2130992 * 512)


def test_the_capture_gives_every_device_in_file_order() -> None:
    loops = tuple(DiskIo(f"loop{n}", 0, 0) for n in range(8))
    assert parse(CAPTURE).unwrap() == DiskStats((*loops, VDA, DiskIo("zram0", 0, 0)))


def test_the_adapter_over_this_machines_whole_disks() -> None:
    # `ls -l /sys/block` of the same machine: only vda links outside devices/virtual/ (docs/behaviour.md §3.6).
    links = {line.split()[-3]: line.split()[-1] for line in SYS_BLOCK.splitlines() if " -> " in line}
    assert whole_disks(links) == {"vda"}
    assert parse_diskstats(CAPTURE, whole_disks(links)) == VDA_BYTES
    assert VDA_BYTES == (672519168, 1091067904)  # multiplied by hand


def test_with_no_disk_list_every_line_but_the_skipped_ones_counts() -> None:
    # loop* and zram0 are on the skip list; they read nothing here anyway, so vda alone remains.
    assert parse_diskstats(CAPTURE, []) == VDA_BYTES
    assert parse_diskstats(CAPTURE, ["loop0", "zram0"]) == (0, 0)


FOURTEEN = "   8       0 sda 100 5 2048 30 40 6 4096 50 0 70 80\n"
EIGHTEEN = "   8      16 sdb 100 5 2048 30 40 6 4096 50 0 70 80 9 1 8192 3\n"
TWENTY = " 259       0 nvme0n1 100 5 2048 30 40 6 4096 50 0 70 80 9 1 8192 3 11 2\n"
OLD_DISK_AND_PARTITIONS = (
    "   3    0 hda 446216 784926 9550688 4382310 424847 312726 5922052 19310380 0 3376340 23705160\n"
    "   3    1 hda1 35486 38030 38030 38030\n"
    "   3    2 hda2 1 8 0 0\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (FOURTEEN, DiskIo("sda", 2048, 4096)),  # before 4.18
        (EIGHTEEN, DiskIo("sdb", 2048, 4096)),  # 4.18+: four discard fields
        (TWENTY, DiskIo("nvme0n1", 2048, 4096)),  # 5.5+: two flush fields
    ],
)
def test_lines_of_14_18_and_20_fields(text: str, expected: DiskIo) -> None:
    assert parse(text).unwrap().devices == (expected,)


def test_old_7_field_partition_lines_beside_a_14_field_disk_line() -> None:
    assert parse(OLD_DISK_AND_PARTITIONS).unwrap().devices == (
        DiskIo("hda", 9550688, 5922052),
        DiskIo("hda1", 38030, 38030),
        DiskIo("hda2", 8, 0),
    )
    # Named whole disks only: the partitions are not counted twice.
    assert parse_diskstats(OLD_DISK_AND_PARTITIONS, ["hda"]) == (9550688 * 512, 5922052 * 512)
    # No list: the fallback counts partitions too (docs/behaviour.md §3.6 says so).
    assert parse_diskstats(OLD_DISK_AND_PARTITIONS, []) == ((9550688 + 38030 + 8) * 512, (5922052 + 38030) * 512)


def test_a_disk_named_twice_counts_once_and_an_absent_one_counts_nothing() -> None:
    assert parse_diskstats(FOURTEEN, ["sda", "sda", "sdz"]) == (2048 * 512, 4096 * 512)
    assert parse_diskstats(FOURTEEN, ["sdz"]) == (0, 0)


@pytest.mark.parametrize("name", ["loop3", "ram0", "zram1", "dm-0", "md127", "sr0", "fd0"])
def test_the_fallback_skips_its_list(name: str) -> None:
    text = FOURTEEN + f"   7       3 {name} 1 0 64 0 1 0 64 0 0 0 0\n"
    assert parse_diskstats(text, []) == (2048 * 512, 4096 * 512)


@pytest.mark.parametrize("count", [3, 6, 8, 13, 15, 17, 19, 21])
def test_lines_of_other_lengths_are_skipped(count: int) -> None:
    odd = "   8 1 sdx " + " ".join(["1"] * (count - 3)) + "\n"
    assert parse(FOURTEEN + odd).unwrap().devices == (DiskIo("sda", 2048, 4096),)


@pytest.mark.parametrize("spoiled", ["-5", "+5", "1_0", "5.0", "٣", "x", "18446744073709551616"])
def test_a_line_with_a_counter_the_kernel_cannot_print_is_skipped(spoiled: str) -> None:
    # On purpose: skipped, not zeroed: no counter is ever negative or invented.
    bad = f"   8      16 sdb 1 0 {spoiled} 0 1 0 8 0 0 0 0\n"
    assert parse(FOURTEEN + bad).unwrap().devices == (DiskIo("sda", 2048, 4096),)
    assert parse_diskstats(FOURTEEN + bad, ["sdb"]) == (0, 0)


def test_a_file_cut_mid_line_keeps_the_whole_lines_before_the_cut() -> None:
    cut = CAPTURE[: CAPTURE.index(" vda 8547 4230 13") + len(" vda 8547 4230 13")]
    loops = tuple(DiskIo(f"loop{n}", 0, 0) for n in range(8))
    assert parse(cut).unwrap().devices == loops


@pytest.mark.parametrize("text", ["", "\n", "  \n \n", "major minor name\n"])
def test_no_device_line_is_a_failure(text: str) -> None:
    assert parse(text).failure().source == "/proc/diskstats"
    assert parse_diskstats(text, []) == (0, 0)


@pytest.mark.parametrize("garbage", ["\x00" * 30, "\ufffd " * 14, "a b c d e f g\n", "9 " * 20000])
def test_garbage_is_a_failure_not_an_exception(garbage: str) -> None:
    assert parse_diskstats(garbage, []) == (0, 0)


def test_a_line_read_again_unchanged_gives_the_same_device_and_a_changed_one_its_new_counters() -> None:
    # Idle devices print the same line every time: the parsed line is kept and handed out again.
    first = parse(FOURTEEN + EIGHTEEN).unwrap().devices
    assert first == (DiskIo("sda", 2048, 4096), DiskIo("sdb", 2048, 4096))
    assert parse(FOURTEEN + EIGHTEEN).unwrap().devices == first
    # The same sda with 8 more sectors read (field 6 of the line: 2048 -> 2056).
    assert parse(FOURTEEN.replace(" 2048 ", " 2056 ")).unwrap().devices == (DiskIo("sda", 2056, 4096),)


def test_a_line_longer_than_any_kernel_prints_is_still_parsed_but_never_looked_up_in_the_cache() -> None:
    # Leading zeros are still decimals: the in-flight field (the 12th) padded to 600 digits keeps the line valid.
    fields = FOURTEEN.split()
    fields[11] = "0" * 599 + "7"
    long_line = " ".join(fields) + "\n"
    looked_up_before = device_line.cache_info().misses
    assert parse(long_line).unwrap().devices == (DiskIo("sda", 2048, 4096),)
    assert device_line.cache_info().misses == looked_up_before
