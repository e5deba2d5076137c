"""Runs' rows in columns (`fleet/rows.py`): rows given a column at a time read back as they were given."""

from __future__ import annotations

import math
from array import array

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.readback.fleet.fields import CPU, HOST, IO, NET
from orca.sample.readback.fleet.rows import NONE, Columns, Rows, pick
from orca.sample.readback.fleet.table import host_share


def _columns(hosts: list[str], cpu: list[float], io: list[int]) -> Columns:
    return Columns(hosts, {CPU: cpu}, {IO: io, NET: [NONE] * len(hosts)}, 1, {})


def test_columns_read_back_with_hosts_numbered_as_they_come_and_a_count_past_64_bits_kept() -> None:
    rows = Rows()
    rows.extend(_columns(["a", "b", "a"], [1.5, math.nan, 3.0], [10, NONE, 2**70]))
    rows.extend(_columns(["b", "c"], [4.0, 5.0], [-(2**63) - 1, 7]))

    assert [rows.value(HOST, index) for index in range(5)] == ["a", "b", "a", "b", "c"]
    assert rows.hosts == ["a", "b", "c"]
    assert list(rows.host) == [0, 1, 0, 1, 2]
    assert [rows.value(CPU, index) for index in range(5)] == [1.5, None, 3.0, 4.0, 5.0]
    assert [rows.value(IO, index) for index in range(5)] == [10, None, 2**70, -(2**63) - 1, 7]
    assert list(rows.held(IO, range(5))) == [10, NONE, 2**70, -(2**63) - 1, 7]
    assert list(rows.held(IO, [4, 2, 1])) == [7, 2**70, NONE]
    assert [rows.value(NET, index) for index in range(5)] == [None] * 5
    assert len(rows) == len(rows.ints(IO)) == len(rows.bits) == 5


def test_pick_takes_the_values_at_the_indices_whether_they_follow_each_other_or_not() -> None:
    values = array("d", [10.0, 11.0, 12.0, 13.0, 14.0, 15.0])

    assert list(pick(values, range(2, 5))) == [12.0, 13.0, 14.0]
    assert list(pick(values, array("L", [2, 3, 4]))) == [12.0, 13.0, 14.0]
    assert list(pick(values, array("L", [0]))) == [10.0]
    assert list(pick(values, array("L", [5]))) == [15.0]
    assert list(pick(values, array("L", [2, 4, 3, 5]))) == [12.0, 14.0, 13.0, 15.0]  # a span of 4, not in order
    assert list(pick(values, array("L", [4, 2, 3]))) == [14.0, 12.0, 13.0]
    assert list(pick(values, array("L", [1, 2, 4]))) == [11.0, 12.0, 14.0]
    assert list(pick(values, array("L", []))) == []
    assert list(pick(values, [5, 0])) == [15.0, 10.0]
    assert list(pick(values, array("L", [1, 2, 3, 4, 5]))) == [11.0, 12.0, 13.0, 14.0, 15.0]


@given(st.lists(st.tuples(st.sampled_from([0.0, 0.1, 5.0, 1e9]) | st.floats(0, 1e9), st.floats(0, 1e4)), min_size=1,
                max_size=30))
def test_runs_sharing_a_host_share_the_time_any_covers(intervals: list[tuple[float, float]]) -> None:
    """The time covered, swept by begin then end (runs that begin alike among them), over the sum of the runs' times,
    to the last bit."""
    lows, highs = array("d", [low for low, _ in intervals]), array("d", [low + length for low, length in intervals])
    covered, reached = 0.0, -math.inf
    for low, high in sorted(zip(lows, highs, strict=True)):
        if high > reached:
            covered += high - max(low, reached)
            reached = high
    whole = sum(high - low for low, high in zip(lows, highs, strict=True))
    assert host_share(lows, highs) == (covered / whole if whole > 0 else 1 / len(lows))
