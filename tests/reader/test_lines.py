"""A stream's lines in bounded memory: whatever the chunks, the lines are those of the whole stream, a line longer
than the longest kept is counted rather than kept, and a stream without a newline is given up."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.readback.lines import line_batches

pieces = st.lists(st.sampled_from([b"a", b"bc", b"\n", b"{}\n", b"xyz" * 5, b"\n\n"]), max_size=12).map(b"".join)
chunks = st.lists(pieces | st.integers(1, 12), max_size=12)
"""Bytes read, or a hole's zeros that were not."""


def whole(stream: list[bytes | int]) -> bytes:
    return b"".join(bytes(chunk) if isinstance(chunk, int) else chunk for chunk in stream)


@given(chunks, st.integers(1, 20))
@example([b"ab", 30, b"\ncd\n"], 5)
@example([b"abcdefgh\nij\n"], 3)
def test_the_lines_are_the_streams_and_the_long_ones_counted(stream: list[bytes | int], longest: int) -> None:
    lines = whole(stream).splitlines(keepends=True)
    complete = [line for line in lines if line.endswith(b"\n")]
    batches = list(line_batches(stream, longest=longest))
    assert [line for batch in batches for line in batch.lines] == [line for line in complete if len(line) <= longest]
    assert sum(batch.overlong for batch in batches) == sum(len(line) > longest for line in complete)
    assert not any(batch.given_up for batch in batches)


junk = st.lists(st.sampled_from([b"a", b"\x00" * 7, b"{" * 3]) | st.integers(1, 12), max_size=12)


@given(junk, st.integers(1, 40))
def test_a_stream_without_a_newline_for_long_enough_is_given_up(stream: list[bytes | int], give_up: int) -> None:
    batches = list(line_batches([b"a\nb\n", *stream, b"\n"], give_up_after=give_up, longest=10))
    assert batches[0].lines == [b"a\n", b"b\n"]  # what came before is all read
    if len(whole(stream)) > give_up:
        assert batches[-1].given_up and not any(batch.given_up for batch in batches[:-1])
    else:
        assert not any(batch.given_up for batch in batches)


def test_an_endless_stream_of_zeros_is_given_up() -> None:
    def zeros() -> Iterator[bytes]:
        yield b"a\n"
        while True:
            yield bytes(4096)

    batches = list(line_batches(zeros(), give_up_after=2**20))
    assert [(batch.lines, batch.given_up) for batch in batches] == [([b"a\n"], False), ([], True)]
