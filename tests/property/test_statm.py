"""/proc/<pid>/statm properties (docs/behaviour.md §3.4): seven u64 page counts, the resident set second."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.parse.statm import parse, resident_pages, resident_pages_each
from tests.property.render_process import StatmLine, render_statm, statm_lines


@given(statm_lines)
def test_round_trip(line: StatmLine) -> None:
    rendered = render_statm(line)
    assert parse(rendered.decode()) == line.statm
    assert resident_pages(rendered) == line.statm.resident_pages


@given(statm_lines, st.data())
def test_a_truncated_file_fails(line: StatmLine, data: st.DataObject) -> None:
    rendered = render_statm(line)
    cut = data.draw(st.integers(0, rendered.rindex(b" ")))  # before the last field starts
    assert resident_pages(rendered[:cut]) is None
    assert parse(rendered[:cut].decode()) is None


def _agree(data: bytes) -> None:
    parsed = parse(data.decode("utf-8", "replace"))
    fast = resident_pages(data)
    if parsed is None:
        assert fast is None
    else:
        assert fast == parsed.resident_pages
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


def _one_by_one(datas: list[bytes]) -> list[int | None]:
    """The plain way: each file through `resident_pages`."""
    return [resident_pages(data) for data in datas]


@given(st.lists(statm_lines, max_size=30))
def test_a_batch_of_kernel_files_reads_as_one_by_one(lines: list[StatmLine]) -> None:
    """Kernel files with values under 20 digits take the batch's fast path, and give each one's pages."""
    datas = [render_statm(line) for line in lines]
    expected = [line.statm.resident_pages for line in lines]
    total = resident_pages_each(datas)
    values = [
        value
        for line in lines
        for value in (line.statm.size_pages, line.statm.resident_pages, line.statm.shared_pages, line.text_pages,
                      line.data_pages)
    ]
    if all(len(str(value)) < 20 for value in values):
        assert total == expected
    assert total in (None, expected)
    assert _one_by_one(datas) == expected


STATMISH = st.one_of(
    statm_lines.map(render_statm),
    st.lists(NUMBERISH, max_size=9).map(lambda fields: " ".join(fields).encode() + b"\n"),
    st.binary(max_size=40),
    st.sampled_from([b"", b"\n", b"0 0 0 0 0 0 0", b" 1 2 3 4 5 6 7\n", b"1\t2 3 4 5 6 7\n", b"1 2 3 4 5 6 7\n\n"]),
)


@given(st.lists(STATMISH, max_size=12))
def test_a_batch_never_disagrees_with_one_by_one(datas: list[bytes]) -> None:
    """Whatever the files hold, the batch either gives each one's pages as `resident_pages` reads them or declines
    (None) for the caller to go one by one: it never gives a different number."""
    each = resident_pages_each(datas)
    assert each is None or (each == _one_by_one(datas) and None not in each)
