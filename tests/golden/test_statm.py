"""/proc/<pid>/statm: real captures from this machine and hostile input (docs/behaviour.md §3.4; proc(5)).

Captures (Linux 6.18.44-fc-v857, x86_64, 2 cores), copied byte for byte with `cp /proc/<pid>/statm`:
- `pid_statm.sleep`: the `sleep 60` whose stat is `pid_stat.sleep`. Its /proc/<pid>/status, read at the same
  moment, said `VmRSS: 1792 kB` = 448 pages of 4096 bytes: the second field (448), while stat's field 24 said 420
  (the lag docs/behaviour.md §3.4 describes).
- `pid_statm.zombie`: the unreaped child of `pid_stat.zombie`: seven zeros.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.statm import Statm, parse, resident_pages, resident_pages_each

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"


def capture(name: str) -> bytes:
    return (CAPTURES / f"{name}.{MACHINE}.txt").read_bytes()


def test_sleep_capture() -> None:
    data = capture("pid_statm.sleep")
    assert parse(data.decode()) == Statm(size_pages=730, resident_pages=448, shared_pages=420)
    assert resident_pages(data) == 448


def test_resident_pages_agree_with_vmrss_of_the_same_moment() -> None:
    """docs/behaviour.md §3.4: statm's resident pages × the page size is VmRSS (1792 kB read from
    /proc/<pid>/status)."""
    assert resident_pages(capture("pid_statm.sleep")) == 1792 * 1024 // 4096


def test_zombie_capture_is_all_zero() -> None:
    data = capture("pid_statm.zombie")
    assert parse(data.decode()) == Statm(0, 0, 0)
    assert resident_pages(data) == 0


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"\n", id="newline only"),
        pytest.param(b"730 448", id="truncated after two fields"),
        pytest.param(b"730 448 420 5 0 89", id="truncated before the seventh"),
        pytest.param(b"730 448 420 5 0 89 0 7\n", id="eight fields"),
        pytest.param(b"730 -448 420 5 0 89 0\n", id="negative resident"),
        pytest.param(b"730 max 420 5 0 89 0\n", id="a word"),
        pytest.param(b"730 4_48 420 5 0 89 0\n", id="an underscore"),
        pytest.param("730 ٤٤٨ 420 5 0 89 0\n".encode(), id="Arabic-Indic digits"),
        pytest.param(b"730 " + b"9" * 5000 + b" 420 5 0 89 0\n", id="5000 digits"),
        # 2**64: 20 digits, one past the largest u64, as every other parser refuses it.
        pytest.param(b"730 18446744073709551616 420 5 0 89 0\n", id="one past the largest u64"),
        pytest.param(b"730\x00448 420 5 0 89 0\n", id="a NUL"),
    ],
)
def test_hostile_statm_fails_in_both_paths(data: bytes) -> None:
    assert parse(data.decode("utf-8", "replace")) is None
    assert resident_pages(data) is None


def test_largest_value_the_kernel_prints() -> None:
    u64 = 2**64 - 1
    assert resident_pages(f"{u64} {u64} {u64} 0 0 0 0\n".encode()) == u64


def test_a_batch_of_captures_gives_each_ones_resident_pages() -> None:
    """The sleep's 448 resident pages and the zombie's 0, twice over."""
    sleep, zombie = capture("pid_statm.sleep"), capture("pid_statm.zombie")
    assert resident_pages_each([sleep, zombie, sleep, zombie]) == [448, 0, 448, 0]
    assert resident_pages_each([]) == []


@pytest.mark.parametrize(
    "odd",
    [
        pytest.param(b"730 448 420 5 0 89", id="truncated"),
        pytest.param(b"730 max 420 5 0 89 0\n", id="a word"),
        pytest.param(b"730 18446744073709551615 420 5 0 89 0\n", id="20 digits, the largest u64"),
        pytest.param(b"", id="empty"),
    ],
)
def test_a_batch_with_a_file_it_cannot_take_whole_is_declined(odd: bytes) -> None:
    """The batch takes only files of seven decimals under 20 digits; anything else (even what `resident_pages`
    accepts, such as the largest u64) is left to the caller's one-by-one reading."""
    assert resident_pages_each([capture("pid_statm.sleep"), odd]) is None


@pytest.mark.parametrize(
    "spaced",
    [
        pytest.param(b"730 448 420 5 0 89 0", id="no newline"),
        pytest.param(b"730  448 420 5 0 89 0\n", id="two spaces"),
        pytest.param(b"730\t448 420 5 0 89 0\n", id="a tab"),
    ],
)
def test_a_batch_splits_fields_as_resident_pages_does(spaced: bytes) -> None:
    """Fields apart by any whitespace, as `resident_pages` reads them: 448 and 448."""
    assert resident_pages(spaced) == 448
    assert resident_pages_each([capture("pid_statm.sleep"), spaced]) == [448, 448]
