"""/proc/<pid>/statm properties (docs/behaviour.md §3.4): seven u64 page counts, the resident set second."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from returns.result import Failure, Success

from orca.sample.parse.statm import parse, resident_pages
from tests.property.render_process import StatmLine, render_statm, statm_lines


@given(statm_lines)
def test_round_trip(line: StatmLine) -> None:
    rendered = render_statm(line)
    assert parse(rendered.decode()) == Success(line.statm)
    assert resident_pages(rendered) == line.statm.resident_pages


@given(statm_lines, st.data())
def test_a_truncated_file_fails(line: StatmLine, data: st.DataObject) -> None:
    rendered = render_statm(line)
    cut = data.draw(st.integers(0, rendered.rindex(b" ")))  # before the last field starts
    assert resident_pages(rendered[:cut]) is None
    assert isinstance(parse(rendered[:cut].decode()), Failure)


def _agree(data: bytes) -> None:
    parsed = parse(data.decode("utf-8", "replace"))
    fast = resident_pages(data)
    if isinstance(parsed, Failure):
        assert fast is None
    else:
        assert fast == parsed.unwrap().resident_pages
        assert fast >= 0


@given(st.binary())
@example(b"1 2 3 4 5 6 7")
@example(b"1 2 3 4 5 6\xc2\xa07")
@example(b"1 -2 3 4 5 6 7")
def test_fast_path_agrees_with_parse_on_arbitrary_bytes(data: bytes) -> None:
    _agree(data)


NUMBERISH = st.one_of(st.integers(-(2**70), 2**70).map(str), st.sampled_from(["-0", "+1", "٣", "1_0"]))


@given(st.lists(NUMBERISH, max_size=9))
def test_number_like_fields_never_give_a_negative(fields: list[str]) -> None:
    _agree(" ".join(fields).encode())


@given(st.text(st.characters(codec=None, exclude_categories=())))
def test_total_on_arbitrary_text(text: str) -> None:
    parse(text)
