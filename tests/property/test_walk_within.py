"""The walk that gives up past a number of processes is the plain walk whenever it answers."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.shell.procs.walk import ProcRoot, walk_tree, walk_tree_within

# Pids 1..30 below this process: the walk checks only that its root's directory exists.
ROOT = os.getpid()
children_maps = st.dictionaries(st.integers(1, 30) | st.just(ROOT), st.lists(st.integers(1, 30), max_size=5))


@given(children_maps, st.integers(0, 40))
def test_the_bounded_walk_is_the_walk_or_gives_up_only_past_its_bound(
    children: dict[int, list[int]], most: int
) -> None:
    proc = ProcRoot.at("/proc")

    def children_of(pid: int) -> list[int]:
        return children.get(pid, [])

    plain = walk_tree(proc, ROOT, children_of)
    bounded = walk_tree_within(proc, ROOT, most, children_of)
    if bounded is None:
        assert len(plain) > most
    else:
        assert bounded == plain
        assert len(plain) <= most
