"""/proc/<pid>/stat properties (docs/behaviour.md §3.4, §6).

Lines are rendered from the kernel's ranges (render_process.py): pid 1..4194304, tick counters u64, commands of up
to 15 bytes of anything but NUL, `(`, `)`, spaces and newlines included, negative nice and real-time priority.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.parse.pid_stat import (
    PidStat,
    PidUsage,
    parse,
    parse_pid_stat,
    parse_pid_usage,
    process_times,
    stat_fields,
)
from tests.property.render_process import StatLine, render_stat, rss_field_offset, stat_lines

any_text = st.text(st.characters(codec=None, exclude_categories=()))  # surrogates included


@given(stat_lines())
def test_round_trip(line: StatLine) -> None:
    rendered = render_stat(line)
    assert parse(rendered.decode("utf-8", "replace")) == line.stat


@given(stat_lines())
def test_fast_path_gives_the_same_values(line: StatLine) -> None:
    s = line.stat
    assert stat_fields(render_stat(line)) == (s.state, s.ppid, s.utime + s.stime + s.cutime + s.cstime, s.starttime)
    assert process_times(render_stat(line)) == (
        s.state, line.comm, (s.starttime, s.ppid, s.utime + s.stime, s.cutime + s.cstime)
    )


@given(stat_lines())
def test_adapters_on_rendered_lines(line: StatLine) -> None:
    text = render_stat(line).decode("utf-8", "replace")
    s = line.stat
    assert parse_pid_stat(text) == (s.ppid, s.rss_pages)
    assert parse_pid_usage(text) == PidUsage(s.ppid, s.rss_pages, s.utime + s.stime + s.cutime + s.cstime)


@given(stat_lines(), st.data())
def test_a_line_cut_before_field_24_fails(line: StatLine, data: st.DataObject) -> None:
    rendered = render_stat(line)
    cut = data.draw(st.integers(0, rss_field_offset(rendered) - 1))
    assert parse(rendered[:cut].decode("utf-8", "replace")) is None
    assert stat_fields(rendered[:cut]) is None
    assert parse_pid_stat(rendered[:cut].decode("utf-8", "replace")) == (-1, 0)


def _agree(data: bytes) -> None:
    """stat_fields and process_times are None exactly when parse fails, and otherwise give parse's values."""
    parsed = parse(data.decode("utf-8", "replace"))
    fast = stat_fields(data)
    times = process_times(data)
    if parsed is None:
        assert fast is None
        assert times is None
    else:
        s = parsed
        assert fast == (s.state, s.ppid, s.cpu_ticks, s.starttime)
        assert times is not None
        assert times[::2] == (s.state, (s.starttime, s.ppid, s.utime + s.stime, s.cutime + s.cstime))
        assert times[1].decode("utf-8", "replace") == s.comm


@given(st.binary())
@example(b"1 (a) R 1 " + b"0 " * 20)
@example(b"1 (a)\xc2\xa0R 1 " + b"0 " * 20)  # NBSP is not a separator in either
@example(b"1 (a) R 1\x1c" + b"0 " * 20)
def test_fast_path_agrees_with_parse_on_arbitrary_bytes(data: bytes) -> None:
    _agree(data)


@given(stat_lines(), st.data())
def test_fast_path_agrees_with_parse_on_damaged_lines(line: StatLine, data: st.DataObject) -> None:
    """Arbitrary bytes rarely parse; a real line with a few bytes changed often does, or nearly does."""
    rendered = bytearray(render_stat(line))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(rendered)))
        junk = data.draw(st.sampled_from([b"-", b" ", b"\n", b"\t", b"(", b")", b"x", b"\xff", b"\xc2\x85", b"9", b""]))
        rendered[at : at + data.draw(st.integers(0, 2))] = junk
    _agree(bytes(rendered))


NUMBER = st.one_of(st.integers(-(2**70), 2**70).map(str), st.sampled_from(["-0", "-", "+5", "1_0", "٣", "0x1f"]))


@given(stat_lines(), st.lists(st.one_of(st.none(), st.none(), NUMBER), min_size=21, max_size=21))
@example(
    StatLine(b"x", PidStat(1, "x", "S", 0, 1, 2, 3, 4, 5, 6), 20, -5, (0,) * 40),
    [None] * 12 + ["-3", "-4"] + [None] * 7,
)
def test_no_parsed_counter_is_negative(line: StatLine, numbers: list[str | None]) -> None:
    """Any of fields 4-24 (None: kept as rendered) replaced by any signed number or near-number: a parsed counter
    is never negative (-3 and -4 as cutime and cstime read as 0)."""
    head = render_stat(line).decode("utf-8", "replace")
    close = head.rindex(")")
    rest = head[close + 1 :].split()
    fields = [kept if number is None else number for kept, number in zip(rest[1:22], numbers, strict=True)]
    text = head[: close + 1] + " " + " ".join([rest[0], *fields, *rest[22:]])
    s = parse(text)
    if s is not None:
        assert min(s.ppid, s.utime, s.stime, s.cutime, s.cstime, s.starttime, s.rss_pages, s.cpu_ticks) >= 0
    usage = parse_pid_usage(text)
    assert usage.parent >= -1
    assert usage.rss_pages >= 0
    assert usage.cpu_ticks >= 0


@given(any_text)
@example("1 (" + ")" * 30)
@example("1 (x) R " + "9" * 5000 + " 0" * 30)
def test_total_on_arbitrary_text(text: str) -> None:
    parse(text)
    parse_pid_stat(text)
    parse_pid_usage(text)
    stat_fields(text.encode("utf-8", "surrogatepass"))


@given(st.binary())
def test_total_on_arbitrary_bytes_decoded_with_replacement(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    assert isinstance(parse_pid_stat(text), tuple)
    assert isinstance(parse_pid_usage(text), PidUsage)
