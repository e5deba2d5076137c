"""Properties of the /proc/meminfo parser (docs/behaviour.md §3.4, §6 `parse_meminfo`)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.parse.meminfo import MemInfo, parse, parse_meminfo
from tests.property.render_system import render_meminfo
from tests.property.strategies_system import U64_MAX, hostile_texts, meminfo_snapshots


@given(meminfo_snapshots, st.booleans())
@example(MemInfo({"VmallocTotal": U64_MAX * 1024, "HugePages_Total": U64_MAX, "Odd": 1023}), True)
def test_render_then_parse_gives_the_snapshot_back(info: MemInfo, no_space: bool) -> None:
    # `no_space` is the `Key:123 kB` form of some kernels: split on `:`, not on spaces.
    text = render_meminfo(info, no_space=no_space)
    assert parse(text).unwrap() == info
    assert parse_meminfo(text) == info.bytes_by_key


@given(hostile_texts)
@example("MemTotal: -5 kB\n")
@example("MemTotal: " + "9" * 5000 + " kB\n")
def test_any_text_parses_or_fails_without_raising_and_never_gives_a_negative_value(text: str) -> None:
    by_parse = parse(text).map(lambda info: dict(info.bytes_by_key)).value_or({})
    by_adapter = parse_meminfo(text)
    assert by_parse == by_adapter
    # kB values are unsigned long (u64) × 1024.
    assert all(0 <= value <= U64_MAX * 1024 for value in by_adapter.values())
    assert all(key and ":" not in key and key == key.strip() for key in by_adapter)


@given(meminfo_snapshots, st.data())
def test_a_negative_value_skips_its_line_rather_than_becoming_negative(info: MemInfo, data: st.DataObject) -> None:
    # On purpose: a line whose value is not an unsigned decimal is skipped (docs/behaviour.md §6: a line that does not
    # parse is skipped); a zero MemAvailable would report the machine as full.
    spoiled = data.draw(st.sampled_from(sorted(info.bytes_by_key)))
    lines = [
        f"{key}: -5 kB" if key == spoiled else line
        for key, line in zip(info.bytes_by_key, render_meminfo(info).splitlines(), strict=True)
    ]
    expected = {key: value for key, value in info.bytes_by_key.items() if key != spoiled}
    assert parse_meminfo("\n".join(lines) + "\n") == expected


@given(st.one_of(hostile_texts, meminfo_snapshots.map(render_meminfo)), st.frozensets(st.text(max_size=12)))
@example("MemTotal: 16 kB\nMemFree: 8 kB\n", frozenset({"MemTotal"}))
@example(" MemTotal : 16 kB\nMem Total: 8 kB\n", frozenset({"MemTotal", "Mem Total"}))
def test_parsing_only_some_keys_gives_those_keys_of_the_whole_parse(text: str, keys: frozenset[str]) -> None:
    """The reader parses only the keys `mem` needs, to keep each line cheap: that must be the whole parse,
    restricted."""
    whole = parse(text).map(lambda info: dict(info.bytes_by_key)).value_or({})
    some = parse(text, keys).map(lambda info: dict(info.bytes_by_key)).value_or({})
    assert some == {key: value for key, value in whole.items() if key in keys}


_LATE_LINES = st.lists(
    st.sampled_from(
        ["MemTotal: 7 kB", " MemTotal : 9 kB", "SwapCached: 3 kB", "Cached:\t5 kB", "Zswap: 1 kB", "MemFree: x kB",
         "HugePages_Total: 4", "Cached: 6 kB\rMemFree: 2 kB", "MemFree:8 kB\x85Buffers: 1 kB", ""]
    ),
    max_size=6,
)


@given(meminfo_snapshots.map(render_meminfo), _LATE_LINES, st.sampled_from(["\n", "\r\n", "\r"]))
@example("MemTotal: 16 kB\nMemFree: 8 kB\n", ["MemTotal: 7 kB"], "\n")
@example("MemTotal: 16 kB\nMemFree: 8 kB", [" MemFree : 4 kB", "Cached: 6 kB\rMemFree: 2 kB"], "\r\n")
def test_the_wanted_keys_read_from_the_first_lines_are_those_of_the_whole_parse(
    text: str, late: list[str], newline: str
) -> None:
    """The reader stops splitting after the last line where a wanted key appears: a wanted key on a later line, at
    any place in it, after any line break, must still count as in the whole parse."""
    keys = frozenset({"MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapTotal", "SwapFree"})
    whole_text = text + newline.join(late) + newline
    whole = parse(whole_text).map(lambda info: dict(info.bytes_by_key)).value_or({})
    some = parse(whole_text, keys).map(lambda info: dict(info.bytes_by_key)).value_or({})
    assert some == {key: value for key, value in whole.items() if key in keys}
