"""/proc/net/dev: a real capture from this machine and hand-written variants (docs/behaviour.md §3.7, §6; proc(5)).

The capture (Linux 6.18.44-fc-v857, x86_64, 2 cores) was taken with `cat /proc/net/dev > file`: two header lines,
then lo, ifb0, ifb1 and eth0. After `name:` come 8 receive counters (bytes first) and 8 transmit counters (bytes
first), as net/core/net-procfs.c prints them. Expected values were typed from the capture by a person.

Interface names (net/core/dev.c dev_valid_name): 1 to 15 bytes, not `.` or `..`, no `/`, `:` or white space;
anything else is allowed, so `eth0.100` (VLAN), `veth1-a` and `br@x` are names. 2.6-era kernels did not reject `:`
either, so the name is everything before the LAST colon.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.net_dev import NetDev, interface_line, parse, parse_net_dev

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"
CAPTURE = (CAPTURES / f"proc_net_dev.{MACHINE}.txt").read_bytes().decode()
HEADER = CAPTURE.splitlines(keepends=True)[0] + CAPTURE.splitlines(keepends=True)[1]

#     lo:    3193      29 ...     3193      29 ...
#   eth0: 229160426    6021 ...   400419    3343 ...
CAPTURED = {"ifb0": (0, 0), "ifb1": (0, 0), "eth0": (229160426, 400419)}


def test_the_capture_gives_every_interface_but_lo() -> None:
    assert parse(CAPTURE).unwrap() == NetDev(CAPTURED)
    assert parse_net_dev(CAPTURE) == CAPTURED


def test_the_header_lines_of_the_capture_are_not_interfaces() -> None:
    assert HEADER.startswith("Inter-|")
    assert parse(HEADER).failure().source == "/proc/net/dev"


def test_old_kernels_print_no_space_after_the_colon() -> None:
    # 2.6-era `%6s:%8lu`: a byte count of 8 digits or more touches the colon (docs/behaviour.md §6).
    text = (
        HEADER
        + "    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0"
        + "       0          0\n"
        + "  eth0:2291604260    6021    0    0    0     0          0         0   400419    3343    0    0    0     0"
        + "       0          0\n"
    )
    assert parse_net_dev(text) == {"eth0": (2291604260, 400419)}


@pytest.mark.parametrize("name", ["eth0.100", "veth1a2b-c", "br@x", "wlp2s0", "enp0s31f6", "tun_0", "x", "a" * 15])
def test_names_the_kernel_allows(name: str) -> None:
    line = f"{name:>6}: 11 1 0 0 0 0 0 0 22 2 0 0 0 0 0 0\n"
    assert parse_net_dev(HEADER + line) == {name: (11, 22)}


def test_a_2_6_era_name_with_a_colon_is_kept_whole() -> None:
    assert parse_net_dev("eth0:1: 11 1 0 0 0 0 0 0 22 2 0 0 0 0 0 0\n") == {"eth0:1": (11, 22)}


def test_only_loopback_is_an_empty_success() -> None:
    # A container's network namespace can hold lo alone: that is "no traffic", not "unreadable"
    # (docs/behaviour.md §3.10).
    only_lo = HEADER + CAPTURE.splitlines(keepends=True)[2]
    assert only_lo.endswith("0          0\n")
    assert parse(only_lo).unwrap() == NetDev({})
    assert parse_net_dev(only_lo) == {}


def test_u64_max_is_a_counter() -> None:
    text = "eth0: 18446744073709551615 1 0 0 0 0 0 0 18446744073709551615 2 0 0 0 0 0 0\n"
    assert parse_net_dev(text) == {"eth0": (18446744073709551615, 18446744073709551615)}


@pytest.mark.parametrize("spoiled", ["-5", "+5", "1_0", "5.0", "٣", "x", "18446744073709551616"])
@pytest.mark.parametrize("position", [0, 3, 8, 15])
def test_a_line_with_a_counter_the_kernel_cannot_print_is_skipped(spoiled: str, position: int) -> None:
    # On purpose: skipped, not zeroed; docs/behaviour.md §3.7 then counts that interface 0 for the interval.
    counters = ["7"] * 16
    counters[position] = spoiled
    text = CAPTURE + "  eth1: " + " ".join(counters) + "\n"
    assert parse_net_dev(text) == CAPTURED


@pytest.mark.parametrize("fields", [0, 1, 8, 15])
def test_a_line_with_fewer_than_16_counters_is_skipped(fields: int) -> None:
    text = CAPTURE + "  eth1: " + " ".join(["7"] * fields) + "\n"
    assert parse_net_dev(text) == CAPTURED


def test_a_file_cut_mid_line_keeps_the_whole_lines_before_the_cut() -> None:
    cut = CAPTURE[: CAPTURE.index("  eth0: 229160426    6021") + len("  eth0: 229160426    6021")]
    assert parse_net_dev(cut) == {"ifb0": (0, 0), "ifb1": (0, 0)}


@pytest.mark.parametrize("text", ["", "\n", "  \n", "Inter-|   Receive\n face |bytes\n"])
def test_no_interface_line_is_a_failure(text: str) -> None:
    assert parse(text).failure().source == "/proc/net/dev"
    assert parse_net_dev(text) == {}


@pytest.mark.parametrize("garbage", ["\x00:" * 40, ":" + " 1" * 16, "\ufffd: " + "\ufffd " * 16, "a b: c"])
def test_garbage_is_a_failure_not_an_exception(garbage: str) -> None:
    assert parse_net_dev(garbage) == {}


def test_an_interface_read_again_gives_its_new_counters() -> None:
    # An idle interface's line is parsed once and handed out again; a changed line is read anew.
    assert parse(HEADER + "  eth0: 100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n").unwrap() == NetDev({"eth0": (100, 200)})
    assert parse(HEADER + "  eth0: 100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n").unwrap() == NetDev({"eth0": (100, 200)})
    assert parse(HEADER + "  eth0: 150 1 0 0 0 0 0 0 260 2 0 0 0 0 0 0\n").unwrap() == NetDev({"eth0": (150, 260)})


def test_a_line_longer_than_any_kernel_prints_is_still_parsed_but_never_looked_up_in_the_cache() -> None:
    # No kernel prints a 600-character name (15 at most), but the parser takes any name without white space.
    name = "veth" + "x" * 596
    looked_up_before = interface_line.cache_info().misses
    assert parse(f"  {name}: 7 1 0 0 0 0 0 0 9 2 0 0 0 0 0 0\n").unwrap() == NetDev({name: (7, 9)})
    assert interface_line.cache_info().misses == looked_up_before
