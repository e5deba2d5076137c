"""The one u64 check every parser uses (docs/behaviour.md §3.10: a field that is not an unsigned 64-bit decimal spoils
its line, never reads as 0 or as a negative)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.parse.numbers import U64_MAX, all_counters, all_u64, u64

digits = st.integers(min_value=0, max_value=2 * U64_MAX).map(str)
fields = st.one_of(digits, st.text(max_size=24), st.text(alphabet="0123456789-+_ ٣", max_size=22))


@given(fields)
@example(str(U64_MAX))
@example(str(U64_MAX + 1))
@example("0" * 20)
@example("0" * 21)
def test_u64_is_exactly_the_ascii_decimals_up_to_the_limit(field: str) -> None:
    """Worked out apart: ASCII digits only, at most 20 of them, a value no greater than 2**64 - 1."""
    expected = (
        int(field)
        if field != "" and all(c in "0123456789" for c in field) and len(field) <= 20 and int(field) <= U64_MAX
        else None
    )
    assert u64(field) == expected
    assert u64(field.encode("utf-8", "surrogatepass")) == expected


@given(st.lists(fields, max_size=8))
def test_all_u64_agrees_with_u64_field_by_field(values: list[str]) -> None:
    assert all_u64(values) == all(u64(value) is not None for value in values)
    as_bytes = [value.encode("utf-8", "surrogatepass") for value in values]
    assert all_u64(as_bytes) == all(u64(value) is not None for value in as_bytes)


@given(st.lists(fields, max_size=17))
@example(["1", "", "2"])
@example([str(U64_MAX), "0" * 19, "7"])
@example(["1", str(U64_MAX + 1)])
def test_all_counters_is_u64_field_by_field(values: list[str]) -> None:
    """The one-pass check of a line's counters is the plain one applied to each field."""
    assert all_counters(values) == all(u64(value) is not None for value in values)
