"""Properties of the control runner's rules (hypothesis), drawn from the alphabets and ranges the README gives."""

from __future__ import annotations

import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from orca.control import ControlLimits, ProcId, parse_placement, pool_of, pool_problem, run_members, secrets_env
from orca.control.rules import environment_of

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
                                        "ORCA_CONTROL_NICE"]), st.text(max_size=8)))
def test_limits_are_always_in_range(env: dict[str, str]) -> None:
    limits = ControlLimits.from_env(env)
    assert limits.max_runs >= 0 and limits.memory_mb >= 1 and limits.workers >= 1 and 0 <= limits.nice <= 19


@given(st.integers(min_value=0, max_value=19))
def test_every_nice_in_range_is_taken(nice: int) -> None:
    assert ControlLimits.from_env({"ORCA_CONTROL_NICE": str(nice)}).nice == nice


# --- which processes are a run's ------------------------------------------------------------------------------------

# Small pid and time ranges, so that drawn tables have parents, groups and reused-looking start times in common.
proc_tables = st.dictionaries(
    st.integers(min_value=1, max_value=30),
    st.builds(ProcId, ppid=st.integers(0, 30), pgrp=st.integers(1, 30), start=st.integers(0, 50)),
    max_size=30,
)


@given(proc_tables, st.integers(min_value=1, max_value=30))
def test_run_members_is_the_closure_of_root_group_and_children(table: dict[int, ProcId], root: int) -> None:
    if root not in table:
        assert run_members(table, root, 0) == frozenset()
        return
    root_start = table[root].start
    assert run_members(table, root, root_start + 1) == frozenset()  # the pid is another process now
    members = run_members(table, root, root_start)
    assert root in members
    for pid in members - {root}:
        entry = table[pid]
        in_group = entry.pgrp == root and entry.start >= root_start
        child_of_member = entry.ppid in members and entry.ppid != pid and entry.start >= table[entry.ppid].start
        assert in_group or child_of_member
    # Closed: every process that qualifies is found.
    for pid, entry in table.items():
        if entry.pgrp == root and entry.start >= root_start:
            assert pid in members
        if entry.ppid in members and entry.ppid != pid and entry.start >= table[entry.ppid].start:
            assert pid in members
