"""/proc/<pid>/cmdline properties (docs/behaviour.md §3.4 `--match`): argv[0] is everything before the first NUL."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.parse.cmdline import argv0
from tests.property.render_process import arguments, render_cmdline


@given(arguments)
def test_round_trip(argv: list[bytes]) -> None:
    assert argv0(render_cmdline(argv)) == argv[0].decode("utf-8", "replace")


@given(st.binary())
def test_total_and_never_past_a_nul(data: bytes) -> None:
    first = argv0(data)
    assert "\0" not in first
    assert first == argv0(data + b"\0more")
