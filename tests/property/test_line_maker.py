"""Properties of the line maker (compute/line_maker.py) and of the one rule for telling a failure (failing.py):
docs/behaviour.md §3.10, a source that fails makes its section null and is told once, until it reads well again."""

from __future__ import annotations

import itertools

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.build import build_line
from orca.sample.compute.encode import encode_line
from orca.sample.compute.line_maker import LineMaker
from orca.sample.compute.snapshot import SOURCES, Snapshot
from orca.sample.failing import Failing
from orca.sample.parse.errors import ParseError
from tests.examples import costly
from tests.property.test_build import snapshots

# A reading of every source: those failing now, each with why.
failures = st.dictionaries(st.sampled_from(SOURCES), st.builds(ParseError, st.sampled_from(["/proc/x", "--dirs"]),
                                                                st.text(max_size=8)))


@given(st.lists(failures, max_size=12))
def test_a_failure_is_told_when_its_source_starts_failing_and_not_again_while_it_fails(
    readings: list[dict[str, ParseError]],
) -> None:
    failing = Failing()
    before: dict[str, ParseError] = {}
    for now in readings:
        # Told: the failures of the sources that read well (or were not read) the time before; no other.
        assert failing.news(now) == [failure for source, failure in now.items() if source not in before]
        before = now


# A drawn snapshot with drawn failures: replaced here, in the test, to draw them apart.
with_failures = st.builds(lambda taken, failed: msgspec.structs.replace(taken, failures=failed), snapshots, failures)


@given(st.lists(with_failures, min_size=2, max_size=5))
@costly(0.4)
def test_each_line_is_the_difference_from_the_snapshot_before_and_only_new_failures_are_told(
    taken: list[Snapshot],
) -> None:
    maker = LineMaker(taken[0])
    failing_before = set(taken[0].failures)
    assert maker.failures_to_tell(taken[0]) == list(taken[0].failures.values())
    for previous, current in itertools.pairwise(taken):
        line, told = maker.line(current)
        assert line == encode_line(build_line(previous, current))
        assert told == [failure for source, failure in current.failures.items() if source not in failing_before]
        assert maker.previous is current
        failing_before = set(current.failures)
    assert maker.lines == len(taken) - 1
