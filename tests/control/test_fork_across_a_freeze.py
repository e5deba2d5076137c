"""A freeze that does not settle, released while a process of the run is in the middle of a fork (docs/control.md, "What
a run is, and how it is killed"): the kernel gives the child every signal sent to its group during the fork, the
freeze's stop among them, once the fork ends; the release must still leave no process of the run stopped.

The run's root holds a large private mapping, so that each of its forks copies page tables for a while, and forks
children that sleep, one after another: a freeze of one pass catches it in a fork almost every time."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from collections.abc import Mapping

import pytest

from orca.control import procs
from orca.control.members import Members, ProcId
from tests.control.processes import Runs, described, stat_fields

# 1 GiB in small pages, each written: a fork copies a quarter of a million page table entries. The root says its pid
# once it has forked its first child, then forks on, up to 40 children.
FORKS_SLOWLY = textwrap.dedent("""
    import mmap, os, sys, time
    held = mmap.mmap(-1, 1 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        held.madvise(mmap.MADV_NOHUGEPAGE)
    for page in range(0, 1 << 30, 4096):
        held[page] = 1
    for child in range(40):
        if os.fork() == 0:
            time.sleep(300)
            os._exit(0)
        if child == 0:
            with open(sys.argv[1], "a") as f:
                f.write(f"root {os.getpid()}\\n")
    time.sleep(300)
""")


def _children(root: int) -> dict[int, str]:
    """pid -> proc(5) field 3 (state) of each process whose parent is `root`."""
    found: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = stat_fields(int(name))
            except (OSError, IndexError):
                continue
            if int(fields[1]) == root:
                found[int(name)] = fields[0]
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("trial", range(3))
def test_a_release_leaves_no_child_of_a_fork_across_the_freeze_stopped(
    runs: Runs, monkeypatch: pytest.MonkeyPatch, trial: int
) -> None:
    root, _ = runs.start(f"forks-{trial}", [sys.executable, "-c", FORKS_SLOWLY], ready=1)
    monkeypatch.setattr(procs, "FREEZE_PASSES", 1)  # a loaded machine's freeze that does not settle

    def find(table: Mapping[int, ProcId]) -> Members:
        return Members(frozenset(pid for pid, entry in table.items() if entry.pgrp == root), frozenset({root}))

    frozen = procs.Frozen()
    frozen.stop(find)
    before = _children(root)
    frozen.release(signal.SIGCONT)
    # Wait until the root has forked twice more: the fork the freeze caught, if any, has ended.
    deadline = time.monotonic() + 30
    while len(_children(root).keys() - before.keys()) < 2 and stat_fields(root)[0] != "S":
        assert time.monotonic() < deadline, f"the root forks no more: {described(root)}"
        time.sleep(0.01)
    left = [pid for pid, state in _children(root).items() if state == "T"]
    assert left == [], f"children left stopped: {[described(pid) for pid in left]}"
    assert stat_fields(root)[0] != "T", described(root)
