"""Properties of the control runner's rules (hypothesis), drawn from the alphabets and ranges docs/control.md gives."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from orca.control import (
    HOLD_PERCENT,
    ControlLimits,
    ProcId,
    cgroup_text,
    parse_placement,
    pool_of,
    pool_problem,
    pressure_reason,
    run_members,
    secrets_env,
)
from orca.control.members import NONE
from orca.control.rules import environment_of
from orca.sample import Now

POOL_ALPHABET = string.ascii_lowercase + string.digits + "-_"
pools = st.text(alphabet=POOL_ALPHABET, min_size=1, max_size=32)
env_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True).filter(lambda n: n != "ORCA_SECRETS")
# Anything an environment can hold: every character but NUL, newlines and `=` included.
env_values = st.text(alphabet=st.characters(exclude_characters="\0"), max_size=40)


@given(pools)
def test_every_name_of_the_alphabet_up_to_32_is_a_pool(pool: str) -> None:
    assert pool_problem(pool) == ""
    assert pool_of("worker:" + pool) == pool


@given(st.text(max_size=40))
@example("")
@example("a" * 33)
@example("A")
def test_a_pool_problem_exactly_outside_the_alphabet(pool: str) -> None:
    in_alphabet = 1 <= len(pool) <= 32 and all(c in POOL_ALPHABET for c in pool)
    assert (pool_problem(pool) == "") == in_alphabet


@given(st.one_of(st.text(max_size=40), st.builds(lambda p: "worker:" + p, st.text(max_size=40))))
@example("control")
@example("worker:")
def test_parse_placement_accepts_exactly_the_four_forms(value: str) -> None:
    pool = value.removeprefix("worker:")
    accepted = value in ("control", "ec2", "default") or (
        value.startswith("worker:") and 1 <= len(pool) <= 32 and all(c in POOL_ALPHABET for c in pool)
    )
    if accepted:
        assert parse_placement(value) == value
        return
    with pytest.raises(ValueError, match="is not one of default, control, ec2, worker:<pool>"):
        parse_placement(value)


@given(st.lists(st.tuples(env_names, env_values), max_size=8, unique_by=lambda pair: pair[0]))
def test_secrets_env_names_every_secret_once_and_round_trips(secrets: list[tuple[str, str]]) -> None:
    entries = secrets_env(secrets)
    if not secrets:
        assert entries == []
        return
    assert len(entries) == len(secrets) + 1
    # As the C library reads an environment block: each entry split at its first `=`.
    environment = environment_of(entries)
    listed = environment.pop("ORCA_SECRETS").split(",")
    assert listed == [name for name, _ in secrets]
    assert len(set(listed)) == len(listed)
    assert environment == dict(secrets)
    # And as a real environment: every entry becomes one variable holding exactly the value.
    for entry in entries:
        name, _, value = entry.partition("=")
        assert entry == f"{name}={value}"


@given(st.dictionaries(st.sampled_from(["ORCA_CONTROL_MAX_RUNS", "ORCA_CONTROL_MEMORY_MB", "ORCA_CONTROL_WORKERS",
                                        "ORCA_CONTROL_NICE", "ORCA_CONTROL_MAX_PIDS"]), st.text(max_size=8)))
def test_limits_are_always_in_range(env: dict[str, str]) -> None:
    limits = ControlLimits.from_env(env)
    assert limits.max_runs >= 0 and limits.memory_mb >= 1 and limits.workers >= 1 and 0 <= limits.nice <= 19
    assert limits.max_pids >= 1


@given(st.integers(min_value=0, max_value=19))
def test_every_nice_in_range_is_taken(nice: int) -> None:
    assert ControlLimits.from_env({"ORCA_CONTROL_NICE": str(nice)}).nice == nice


# --- which processes are a run's ------------------------------------------------------------------------------------

# Small pid and time ranges, so that drawn tables have parents, groups, sessions and reused-looking start times in
# common.
proc_tables = st.dictionaries(
    st.integers(min_value=1, max_value=30),
    st.builds(ProcId, ppid=st.integers(0, 30), pgrp=st.integers(1, 30), session=st.integers(1, 30),
              start=st.integers(0, 50)),
    max_size=30,
)


def _reached(table: dict[int, ProcId], pid: int, known: int, since: int) -> bool:
    """Whether `pid` is found through `known` (its parent, process group or session), started no earlier."""
    entry = table[pid]
    return pid != known and known in (entry.ppid, entry.pgrp, entry.session) and entry.start >= since


@given(proc_tables, st.integers(min_value=1, max_value=30), st.sampled_from(["given", "other", "unknown"]), st.data())
@example({5: ProcId(1, 5, 5, 9)}, 3, "unknown", None)  # only a process an earlier reading knew is left
def test_run_members_is_the_closure_of_root_session_group_known_and_children(
    table: dict[int, ProcId], root: int, how: str, data: st.DataObject | None
) -> None:
    # The root's start as the scheduler gives it: the process's own, another's (its pid was reused), or not known.
    if how == "unknown":
        root_start = None
    elif root in table:
        root_start = table[root].start + (1 if how == "other" else 0)
    else:
        root_start = 7
    start = (table[root].start if root in table else None) if root_start is None else root_start
    # What earlier readings found: some of the table's processes by their start, and some by a start that is not
    # theirs (another process has that pid now).
    known: dict[int, int] = {5: 9} if data is None else {}
    if data is not None and table:
        for pid in data.draw(st.sets(st.sampled_from(sorted(table)))):
            known[pid] = table[pid].start + data.draw(st.sampled_from([0, 0, 1]))
    found = run_members(table, root, root_start, known)
    assert found.pids <= table.keys()
    # The root's ids are the run's unless its pid is another process's now.
    by_ids = root not in table or start is None or table[root].start == start
    # The seeds: what was known, by pid and start.
    seeds = {pid for pid, begun in known.items() if pid in table and table[pid].start == begun}
    since = {pid: table[pid].start for pid in found.pids}
    if by_ids:
        since[root] = -1 if start is None else start
    # Each member is a seed, the root, or found through the root or another member; and every process that is, is one.
    for pid in table:
        through = any(_reached(table, pid, known_pid, since[known_pid]) for known_pid in since if known_pid != pid)
        assert (pid in found.pids) == (pid in seeds or (by_ids and pid == root) or through), pid
    # The groups to signal whole are the members' groups that a member made, or the root while its ids are the run's.
    assert found.groups == {table[pid].pgrp for pid in found.pids} & (found.pids | ({root} if by_ids else set()))
    if not seeds and not by_ids:
        assert found == NONE  # another process has the root's pid, and nothing was known


# --- reasons and the kernel's text ----------------------------------------------------------------------------------


@given(st.floats(), st.floats(), st.text(max_size=20))
@example(85.0000000001, 2.0**70, "/data\n\x1b[2J")
@example(0.0, 86.0, "memory")  # a disk path may say "memory": only the first clause is memory's
def test_pressure_reason_is_total_short_and_printable(memory: float, disk: float, path: str) -> None:
    now = Now(t=0.0, age=1.0, memory_percent=memory, disk_percent=disk, disk_path=path, cpu_percent=1.0, lines=1)
    reason = pressure_reason(now)
    assert reason.isprintable()
    assert reason.startswith("control instance: memory ") == (memory > HOLD_PERCENT)
    for figure in re.findall(r"(\S+)% over 85%", reason):
        assert figure == ">100" or HOLD_PERCENT < float(figure) <= 100.1


@given(st.text())
def test_the_cgroup_files_parse_any_text(text: str) -> None:
    assert all(pid > 0 for pid in cgroup_text.pids(text))
    assert all(value >= 0 for value in cgroup_text.keyed(text).values())
    number = cgroup_text.number(text)
    assert number is None or 0 <= number < 10**20
