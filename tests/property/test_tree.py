"""Property tests of the process-tree core (docs/behaviour.md §3.4 `rss`, §6 `tree_rss`/`tree_usage`): compute/tree.py.

The oracle is a different algorithm from the code under test: the code walks DOWN from the root through a children
index; the oracle walks UP each process's ppid chain and asks whether it meets the root.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.compute.tree import run_of, total, tree_of, trees_of, walk
from orca.sample.shell.procs.scanner import ProcessScanner, page_size
from tests.examples import costly


@dataclass(frozen=True, slots=True)
class ProcEntry:
    """One process of a drawn /proc table: what its stat, statm and cmdline files say."""

    pid: int
    ppid: int
    rss_pages: int
    cpu_ticks: int
    argv0: str


# proc(5): pids run from 1 to pid_max, at most PID_MAX_LIMIT = 2**22 on 64-bit kernels; a ppid of 0 is the kernel's
# (init and kthreadd). statm counts pages (up to 2**36 is 256 TiB of 4 KiB pages); stat's times are %lu/%ld ticks.
PID_MAX = 2**22
pids_st = st.integers(min_value=1, max_value=PID_MAX)
ppid_st = st.integers(min_value=0, max_value=PID_MAX)
pages_st = st.integers(min_value=0, max_value=2**36)
ticks_st = st.integers(min_value=0, max_value=2**48)
ARGV0S = ("", "/usr/bin/worker", "/bin/sh", "worker")
argv0_st = st.sampled_from(ARGV0S)


@st.composite
def process_tables(draw: st.DrawFn) -> dict[int, ProcEntry]:
    """A pass over /proc as a race can leave it: parents mostly among the pids (so trees are deep), sometimes
    absent (the parent exited), sometimes the process itself, and cycles wherever pid reuse draws one."""
    pids = draw(st.lists(pids_st, min_size=0, max_size=40, unique=True))
    entries: dict[int, ProcEntry] = {}
    for pid in pids:
        ppid = draw(st.sampled_from(pids) | ppid_st) if pids else draw(ppid_st)
        entries[pid] = ProcEntry(pid, ppid, draw(pages_st), draw(ticks_st), draw(argv0_st))
    return entries


def parents_of(entries: Mapping[int, ProcEntry]) -> dict[int, int]:
    return {pid: entry.ppid for pid, entry in entries.items()}


def reaches(parents: Mapping[int, int], pid: int, root: int) -> bool:
    """The oracle: following ppid links up from `pid` meets `root` (each step to a present process, no revisits)."""
    if root not in parents or pid not in parents:
        return False
    seen: set[int] = set()
    current = pid
    while current not in seen:
        if current == root:
            return True
        seen.add(current)
        parent = parents[current]
        if parent not in parents:
            return False
        current = parent
    return False


def brute_tree(entries: Mapping[int, ProcEntry], root: int) -> set[int]:
    parents = parents_of(entries)
    return {pid for pid in entries if reaches(parents, pid, root)}


def roots_of(entries: Mapping[int, ProcEntry]) -> st.SearchStrategy[int]:
    """A root that is usually in the table, sometimes not (docs/behaviour.md §6: a root that does not exist is
    absent)."""
    return st.sampled_from(sorted(entries)) | pids_st if entries else pids_st


CYCLE = {5: ProcEntry(5, 6, 1, 1, ""), 6: ProcEntry(6, 5, 2, 2, ""), 7: ProcEntry(7, 6, 4, 4, "")}
SELF_PARENT = {1: ProcEntry(1, 1, 3, 3, ""), 2: ProcEntry(2, 1, 5, 5, "")}


@given(process_tables(), pids_st)
@example(CYCLE, 5).via("a 2-cycle 5 <-> 6 with 7 hanging off it")
@example(CYCLE, 7).via("a leaf hanging off a cycle")
@example(SELF_PARENT, 1).via("a process that names itself as parent")
def test_tree_is_the_root_and_exactly_its_descendants(entries: dict[int, ProcEntry], other: int) -> None:
    """Every root in the table, and one drawn pid that is usually not (an absent root has an empty tree)."""
    parents = parents_of(entries)
    for root in [*entries, other]:
        assert set(tree_of(parents, root)) == brute_tree(entries, root)


@given(process_tables(), pids_st)
def test_walking_children_files_finds_the_same_tree(entries: dict[int, ProcEntry], other: int) -> None:
    """`walk` over a children function (as the shell reads /proc/<pid>/task/<tid>/children) finds the root and
    exactly its descendants, whatever cycles the table holds; a root without children is alone in its tree."""
    children: dict[int, list[int]] = {}
    for pid, entry in entries.items():
        if pid != entry.ppid:
            children.setdefault(entry.ppid, []).append(pid)
    parents = parents_of(entries)
    for root in [*entries, other]:
        # A root missing from the table is still where the walk starts: the oracle gets it, with no parent.
        with_root = {-1: -1, **parents, root: parents.get(root, -1)}
        expected = {pid for pid in with_root if reaches(with_root, pid, root)}
        assert walk(lambda pid: children.get(pid, []), root) == expected


@given(process_tables(), pids_st)
def test_a_root_that_is_absent_has_an_empty_tree(entries: dict[int, ProcEntry], root: int) -> None:
    entries.pop(root, None)
    assert tree_of(parents_of(entries), root) == frozenset()
    assert trees_of(parents_of(entries), [root]) == {}


def test_cycles_and_missing_parents_end() -> None:
    """A cycle from pid reuse and a parent that exited mid-pass neither hang nor raise (docs/behaviour.md §3.10)."""
    assert tree_of(parents_of(CYCLE), 5) == {5, 6, 7}
    assert tree_of(parents_of(CYCLE), 6) == {5, 6, 7}
    assert tree_of(parents_of(CYCLE), 7) == {7}
    assert tree_of(parents_of(SELF_PARENT), 1) == {1, 2}
    orphans = {30: 999, 31: 30}  # 999 exited
    assert tree_of(orphans, 30) == {30, 31}
    assert tree_of(orphans, 999) == frozenset()
    assert walk(lambda pid: [pid, pid + 1] if pid < 3 else [1], 1) == {1, 2, 3}


def test_a_deep_chain_needs_no_recursion() -> None:
    """A chain far deeper than Python's recursion limit (a fork bomb's shape) is walked without a RecursionError."""
    depth = 50_000
    parents = {pid: pid - 1 for pid in range(1, depth + 1)}
    assert len(tree_of(parents, 1)) == depth
    assert len(walk(lambda pid: [pid + 1] if pid < depth else [], 1)) == depth


@given(st.data(), process_tables())
def test_trees_of_many_roots_agree_with_one_at_a_time(data: st.DataObject, entries: dict[int, ProcEntry]) -> None:
    roots = data.draw(st.lists(roots_of(entries), max_size=5))
    parents = parents_of(entries)
    expected = {root: tree_of(parents, root) for root in roots if root in entries}
    assert trees_of(parents, roots) == expected


@given(st.data(), process_tables(), argv0_st)
def test_the_run_counts_each_process_once(data: st.DataObject, entries: dict[int, ProcEntry], argv0: str) -> None:
    """docs/behaviour.md §3.4: the run is the root's tree plus the argv0 matches, each process counted once."""
    root = data.draw(st.none() | roots_of(entries))
    tree = brute_tree(entries, root) if root is not None else set()
    matched = [pid for pid, entry in entries.items() if argv0 and entry.argv0 == argv0]
    run = tree | set(matched)
    pages = {pid: entry.rss_pages for pid, entry in entries.items()}
    assert run_of(parents_of(entries), root, matched) == run
    # Listed twice (in the tree and matched, or matched twice): still counted once.
    assert total(pages, [*run_of(parents_of(entries), root, matched), *matched]) == sum(pages[pid] for pid in run)


@given(process_tables())
def test_a_tree_whose_members_all_match_is_counted_once(entries: dict[int, ProcEntry]) -> None:
    """Every process both in the tree and matched: the run's pages are the tree's, not twice them."""
    parents = parents_of(entries)
    pages = {pid: entry.rss_pages for pid, entry in entries.items()}
    for root in entries:
        run = run_of(parents, root, entries)
        assert run == set(entries)
        assert total(pages, run) == sum(pages.values())


@given(process_tables(), st.lists(pids_st, max_size=60))
def test_sums_equal_brute_force(entries: dict[int, ProcEntry], pids: list[int]) -> None:
    """Duplicates in the pid list and pids not in the table (vanished mid-pass) add nothing."""
    distinct_present = {pid for pid in pids if pid in entries}
    pages = {pid: entry.rss_pages for pid, entry in entries.items()}
    ticks = {pid: entry.cpu_ticks for pid, entry in entries.items()}
    assert total(pages, pids) == sum(entries[pid].rss_pages for pid in distinct_present)
    assert total(ticks, pids) == sum(entries[pid].cpu_ticks for pid in distinct_present)
    assert total(pages, []) == 0


@given(process_tables(), st.lists(pids_st, max_size=5))
def test_run_of_is_the_tree_union_the_matches(entries: dict[int, ProcEntry], matched: list[int]) -> None:
    parents = parents_of(entries)
    assert run_of(parents, None, matched) == set(matched)
    for root in list(entries)[:3]:
        assert run_of(parents, root, matched) == tree_of(parents, root) | set(matched)


# --- the shell over rendered /proc trees ----------------------------------------------------------------------------

COMMS = ("sh", "worker", "a) (b", "kworker/0:1-events", "x y")


def render(proc: Path, entries: Mapping[int, ProcEntry], comms: Mapping[int, str], starts: Mapping[int, int]) -> None:
    """Write `entries` as proc(5) lays them out; stat's field 24 is set off from statm's resident pages on purpose."""
    shutil.rmtree(proc, ignore_errors=True)
    for pid, entry in entries.items():
        directory = proc / str(pid)
        directory.mkdir(parents=True)
        fields = [entry.ppid, 1, 1, 0, -1, 4194304, 0, 0, 0, 0, entry.cpu_ticks, 0, 0, 0, 20, 0, 1, 0, starts[pid]]
        tail = " ".join(str(field) for field in [*fields, 0, entry.rss_pages + 7, *([0] * 28)])
        (directory / "stat").write_text(f"{pid} ({comms[pid]}) S {tail}\n")
        (directory / "statm").write_text(f"{entry.rss_pages * 3} {entry.rss_pages} 0 0 0 0 0\n")
        (directory / "cmdline").write_bytes(entry.argv0.encode() + b"\0--flag\0" if entry.argv0 else b"")


@st.composite
def successive_tables(draw: st.DrawFn) -> tuple[dict[int, ProcEntry], dict[int, ProcEntry], dict[int, str]]:
    """Two passes: between them some processes exec a new argv0 (comm changes too, as exec sets it), others
    change nothing. Pids stay in a small range so pid reuse and matches are common."""
    small_pids = st.integers(min_value=1, max_value=30)
    pids = draw(st.lists(small_pids, max_size=15, unique=True))
    first: dict[int, ProcEntry] = {}
    second: dict[int, ProcEntry] = {}
    comms: dict[int, str] = {}
    for pid in pids:
        ppid = draw(st.sampled_from(pids) | st.integers(0, 31))
        pages = draw(st.integers(0, 2**20))
        first[pid] = ProcEntry(pid, ppid, pages, draw(st.integers(0, 10**6)), draw(argv0_st))
        execs = draw(st.booleans())
        second[pid] = ProcEntry(pid, ppid, pages, first[pid].cpu_ticks, draw(argv0_st) if execs else first[pid].argv0)
        comms[pid] = draw(st.sampled_from(COMMS))
    return first, second, comms


@given(successive_tables(), st.sampled_from(ARGV0S), st.integers(1, 31) | st.none())
@costly(0.5)
def test_scanner_over_rendered_proc_agrees_with_the_oracle(
    tables: tuple[dict[int, ProcEntry], dict[int, ProcEntry], dict[int, str]], argv0: str, root: int | None
) -> None:
    """ProcessScanner.run_rss over /proc files written from a table equals the oracle's sum, on the first pass and
    on a second one in which some processes exec'd (docs/behaviour.md §3.4; the argv0 cache must notice the new
    comm)."""
    first, second, comms = tables
    page = page_size()
    with tempfile.TemporaryDirectory() as directory:
        proc = Path(directory) / "proc"
        scanner = ProcessScanner(str(proc))
        starts = dict.fromkeys(first, 4000)
        # exec keeps pid and start time and sets comm to the new binary's name: here, a `!` appended.
        exec_comms = {pid: comms[pid] + ("!" if second[pid].argv0 != first[pid].argv0 else "") for pid in second}
        for table, comm_of in ((first, comms), (second, exec_comms)):
            render(proc, table, comm_of, starts)
            tree = brute_tree(table, root) if root is not None else set()
            run = tree | {pid for pid, entry in table.items() if argv0 and entry.argv0 == argv0}
            assert scanner.run_rss(root, argv0) == sum(table[pid].rss_pages for pid in run) * page
