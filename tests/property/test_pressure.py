"""Properties of the /proc/pressure/{cpu,memory,io} parser (Documentation/accounting/psi.rst; docs/behaviour.md
§3.9)."""

from __future__ import annotations

import math

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.parse.pressure import Pressure, PressureLine, as_printed, parse, parse_words
from tests.property.render_system import render_pressure
from tests.property.strategies_system import U64_MAX, hostile_texts, pressure_lines, pressure_snapshots


@given(pressure_snapshots)
@example(Pressure(PressureLine(100.0, 0.01, 99.99, U64_MAX), None))
def test_render_then_parse_gives_the_snapshot_back(pressure: Pressure) -> None:
    assert parse(render_pressure(pressure)).unwrap() == pressure


@given(hostile_texts)
@example("some avg10=nan avg60=0.00 avg300=0.00 total=0\n")
@example("some avg10=1e3 avg60=-1.00 avg300=0.00 total=-5\n")
@example("some avg10=0.00 avg60=0.00 avg300=0.00 total=" + "9" * 5000 + "\n")
def test_any_text_parses_or_fails_without_raising_and_never_gives_a_negative_value(text: str) -> None:
    pressure = parse(text).value_or(None)
    if pressure is None:
        return
    for line in (pressure.some, pressure.full):
        if line is not None:
            assert all(math.isfinite(share) and share >= 0 for share in (line.avg10, line.avg60, line.avg300))
            assert 0 <= line.total_us <= U64_MAX


@given(pressure_lines, pressure_lines, st.sampled_from(["avg10", "avg60", "avg300", "total"]))
def test_a_negative_value_makes_its_line_unparsable(some: PressureLine, full: PressureLine, key: str) -> None:
    # On purpose: a negative share or total spoils its line: a spoiled `some` is a failure (the resource's
    # pressure is then missing from the line), a spoiled `full` is None like a kernel that has none.
    text = render_pressure(Pressure(some, full))
    some_line, full_line = text.splitlines()

    def spoil(line: str) -> str:
        return " ".join(f"{key}=-5" if word.startswith(key + "=") else word for word in line.split())

    assert parse(f"{some_line}\n{spoil(full_line)}\n").unwrap() == Pressure(some, None)
    assert parse(f"{spoil(some_line)}\n{full_line}\n").failure().reason == "no `some` line"


@given(st.one_of(hostile_texts, pressure_snapshots.map(render_pressure)))
@example("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n")  # 2^64: not a counter
@example("some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n")
@example("some avg10=٣.00 avg60=0.00 avg300=0.00 total=1\n")
def test_the_kernel_format_shortcut_agrees_with_theparse_words_parse(text: str) -> None:
    """Text exactly as psi.c prints it is read by one match (cheaper); it must give what the general parse gives."""
    shortcut = as_printed(text)
    if shortcut is not None:
        assert shortcut == parse_words(text).unwrap()


@given(pressure_snapshots)
def test_the_kernel_format_takes_the_shortcut(pressure: Pressure) -> None:
    assert as_printed(render_pressure(pressure)) == pressure
