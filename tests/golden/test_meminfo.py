"""/proc/meminfo: a real capture from this machine and hand-written variants (docs/behaviour.md §3.4, §6; proc(5)).

The capture (Linux 6.18.44-fc-v857, x86_64, 2 cores) was taken with `cat /proc/meminfo > file`: 54 lines. The
expected values below were typed from it by a person; proc(5): values are in kibibytes where the line says `kB`
(docs/behaviour.md §3.4: × 1024), and the HugePages_* counts have no unit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.meminfo import MemInfo, parse, parse_meminfo

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"
CAPTURE = (CAPTURES / f"proc_meminfo.{MACHINE}.txt").read_bytes().decode()
KIB = 1024

# Read off the capture: every key docs/behaviour.md §3.4 uses, and the extremes.
CAPTURED = {
    "MemTotal": 24683652 * KIB,
    "MemFree": 24399508 * KIB,
    "MemAvailable": 24369780 * KIB,
    "Buffers": 6020 * KIB,
    "Cached": 87432 * KIB,
    "Active(file)": 33248 * KIB,
    "Inactive(file)": 51244 * KIB,
    "SwapTotal": 0,
    "SwapFree": 0,
    "VmallocTotal": 34359738367 * KIB,
    "HugePages_Total": 0,
    "HugePages_Free": 0,
    "Hugepagesize": 2048 * KIB,
    "DirectMap1G": 25165824 * KIB,
}


def test_the_capture_gives_every_line_in_bytes() -> None:
    by_key = parse(CAPTURE).unwrap().bytes_by_key
    assert len(by_key) == 54  # one key per line of the capture, none skipped
    assert {key: by_key[key] for key in CAPTURED} == CAPTURED
    assert list(by_key)[:3] == ["MemTotal", "MemFree", "MemAvailable"]


def test_the_adapter_on_the_capture() -> None:
    by_key = parse_meminfo(CAPTURE)
    assert by_key["MemAvailable"] == 24954654720  # 24369780 kB × 1024, multiplied by hand
    assert by_key["Committed_AS"] == 66452 * KIB


def test_key_with_no_space_after_the_colon() -> None:
    # Some kernels print `Key:123 kB`, with no space; docs/behaviour.md §6 tolerates it.
    assert parse_meminfo("MemTotal:123 kB\nMemFree:7 kB\n") == {"MemTotal": 125952, "MemFree": 7168}


def test_a_value_without_a_unit_is_taken_as_it_is() -> None:
    assert parse_meminfo("HugePages_Total:       3\nHugePages_Free:3\n") == {"HugePages_Total": 3, "HugePages_Free": 3}


@pytest.mark.parametrize(
    "bad_line",
    [
        "MemFree: -5 kB",  # on purpose: a value that is not unsigned is skipped, never negative
        "MemFree: +5 kB",
        "MemFree: 5 MB",  # the kernel only ever prints kB
        "MemFree: 5 kB extra",
        "MemFree:",
        "MemFree: kB",
        ": 5 kB",
        "Mem Free: 5 kB",
        "MemFree 5 kB",
        "MemFree: 5.5 kB",
        "MemFree: ٣ kB",
        "MemFree: 1_000 kB",
        "MemFree: 18446744073709551616 kB",  # one more than an unsigned long can hold
    ],
)
def test_a_line_that_does_not_parse_is_skipped(bad_line: str) -> None:
    text = f"MemTotal:       1000 kB\n{bad_line}\nSwapTotal:         0 kB\n"
    assert parse_meminfo(text) == {"MemTotal": 1024000, "SwapTotal": 0}


def test_the_largest_unsigned_long_of_kb() -> None:
    assert parse_meminfo("VmallocTotal: 18446744073709551615 kB\n") == {"VmallocTotal": 18446744073709551615 * KIB}


def test_a_file_cut_mid_line_keeps_the_lines_before_the_cut() -> None:
    cut = CAPTURE[: CAPTURE.index("Cached:            87432 k") + len("Cached:            87432 k")]
    assert cut.endswith("87432 k")
    # The cut line's unit is `k`, not `kB`: skipped. The four whole lines before it are kept.
    assert parse(cut).unwrap() == MemInfo(
        {"MemTotal": 24683652 * KIB, "MemFree": 24399508 * KIB, "MemAvailable": 24369780 * KIB, "Buffers": 6020 * KIB}
    )


@pytest.mark.parametrize("text", ["", "\n\n", "   ", "no colon here\nnor here\n", "Key: x kB\n: 5\n"])
def test_nothing_parsable_is_a_failure(text: str) -> None:
    assert parse(text).failure().source == "/proc/meminfo"
    assert parse_meminfo(text) == {}


@pytest.mark.parametrize("garbage", ["\x00\xff\x00MemTotal\x00", "\ufffd" * 40 + ":", ":::::\n:::", "9" * 10000])
def test_garbage_is_a_failure_not_an_exception(garbage: str) -> None:
    assert parse_meminfo(garbage) == {}
