"""/proc/pressure/{cpu,memory,io}: real captures from this machine and variants (docs/behaviour.md §3.9; psi.rst).

The captures (Linux 6.18.44-fc-v857, x86_64, 2 cores) were taken with `cat /proc/pressure/<resource> > file`.
Documentation/accounting/psi.rst: a `some` line and a `full` line, each `avg10=.. avg60=.. avg300=.. total=..`,
the averages percentages with two decimals, `total` the stall time in microseconds; `cpu` had no `full` line
before 5.13, and a kernel without CONFIG_PSI has no files at all. Expected values were typed from the captures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.pressure import Pressure, PressureLine, parse, printed_exactly

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"


def capture(resource: str) -> str:
    return (CAPTURES / f"proc_pressure_{resource}.{MACHINE}.txt").read_bytes().decode()


ZERO = PressureLine(avg10=0.0, avg60=0.0, avg300=0.0, total_us=0)
CAPTURED = {
    # some avg10=6.19 avg60=1.78 avg300=0.60 total=4134759 / full avg10=0.00 avg60=0.00 avg300=0.00 total=0
    "cpu": Pressure(some=PressureLine(6.19, 1.78, 0.60, 4134759), full=ZERO),
    # both lines all zero
    "memory": Pressure(some=ZERO, full=ZERO),
    # some avg10=0.54 avg60=0.14 avg300=0.12 total=1332681 / full avg10=0.36 avg60=0.11 avg300=0.11 total=1198265
    "io": Pressure(some=PressureLine(0.54, 0.14, 0.12, 1332681), full=PressureLine(0.36, 0.11, 0.11, 1198265)),
}


@pytest.mark.parametrize("resource", ["cpu", "memory", "io"])
def test_the_captures(resource: str) -> None:
    assert parse(capture(resource)).unwrap() == CAPTURED[resource]


def test_cpu_without_a_full_line_as_before_5_13() -> None:
    text = "some avg10=6.19 avg60=1.78 avg300=0.60 total=4134759\n"
    assert parse(text).unwrap() == Pressure(some=PressureLine(6.19, 1.78, 0.60, 4134759), full=None)


def test_a_full_pressure_of_a_hundred_percent() -> None:
    text = "some avg10=100.00 avg60=100.00 avg300=99.99 total=18446744073709551615\n"
    assert parse(text).unwrap().some == PressureLine(100.0, 100.0, 99.99, 18446744073709551615)


@pytest.mark.parametrize(
    "full",
    [
        "full avg10=-1.00 avg60=0.11 avg300=0.11 total=1198265",
        "full avg10=nan avg60=0.11 avg300=0.11 total=1198265",
        "full avg10=inf avg60=0.11 avg300=0.11 total=1198265",
        "full avg10=1e3 avg60=0.11 avg300=0.11 total=1198265",
        "full avg10=1. avg60=0.11 avg300=0.11 total=1198265",
        "full avg10= avg60=0.11 avg300=0.11 total=1198265",
        "full avg60=0.11 avg300=0.11 total=1198265",
        "full avg10=0.36 avg60=0.11 avg300=0.11 total=-5",
        "full avg10=0.36 avg60=0.11 avg300=0.11 total=1.5",
        "full avg10=0.36 avg60=0.11 avg300=0.11 total=18446744073709551616",
        "full avg10=0.36 avg60=0.11 avg300=0.11",
    ],
)
def test_a_full_line_with_a_value_the_kernel_cannot_print_is_none(full: str) -> None:
    # On purpose: such a line is not used, never read as a negative or invented value.
    text = capture("io").splitlines()[0] + "\n" + full + "\n"
    assert parse(text).unwrap() == Pressure(some=CAPTURED["io"].some, full=None)


def test_a_some_line_with_a_negative_total_is_a_failure() -> None:
    text = "some avg10=0.00 avg60=0.00 avg300=0.00 total=-5\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    assert parse(text).failure().reason == "no `some` line"


def test_a_file_cut_mid_line_keeps_the_whole_some_line() -> None:
    text = capture("io")
    cut = text[: text.index("full avg10=0.36 avg60=0.1") + len("full avg10=0.36 avg60=0.1")]
    assert parse(cut).unwrap() == Pressure(some=CAPTURED["io"].some, full=None)


def test_a_file_cut_in_the_some_line_is_a_failure() -> None:
    assert parse("some avg10=0.54 avg60=0.14 av").failure().source == "/proc/pressure"


@pytest.mark.parametrize("text", ["", "\n", "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"])
def test_no_some_line_is_a_failure(text: str) -> None:
    assert parse(text).failure().reason == "no `some` line"


@pytest.mark.parametrize("garbage", ["\x00some\x00", "some " + "=" * 50, "some a=b=c avg10=..", "\ufffd" * 30])
def test_garbage_is_a_failure_not_an_exception(garbage: str) -> None:
    assert parse(garbage).failure().source == "/proc/pressure"


def test_the_same_text_read_again_gives_the_same_pressure_and_a_changed_one_its_new_total() -> None:
    # An idle resource's file is read once and its snapshot handed out again while the text stays the same.
    text = "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=400\n"
    first = parse(text).unwrap()
    assert parse(text).unwrap() == first
    assert first.some.total_us == 1000 and first.full is not None and first.full.total_us == 400
    assert parse(text.replace("total=1000", "total=2500")).unwrap().some.total_us == 2500


def test_a_text_longer_than_the_kernel_prints_is_readparse_words_and_never_looked_up_in_the_cache() -> None:
    # Extra words after the total: not psi.c's format, but the word-by-word parse takes the four values it needs.
    text = "some avg10=1.00 avg60=0.00 avg300=0.00 total=7" + " x=1" * 100 + "\n"
    looked_up_before = printed_exactly.cache_info().misses
    assert parse(text).unwrap() == Pressure(PressureLine(1.0, 0.0, 0.0, 7), None)
    assert printed_exactly.cache_info().misses == looked_up_before
