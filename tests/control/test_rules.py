"""The control runner's pure rules, from examples worked by hand from what docs/control.md says."""

from __future__ import annotations

import pytest

from orca.control import (
    CONTROL,
    HOLD_PERCENT,
    MAX_POOL,
    WORKER_PREFIX,
    ControlLimits,
    cap_reason,
    kernel_cap_reason,
    parse_placement,
    pool_of,
    pool_problem,
    pressure_reason,
    run_env,
    secrets_env,
    slots_reason,
)
from orca.control.rules import environment_of
from orca.sample import Now


def test_constants() -> None:
    assert (CONTROL, HOLD_PERCENT, WORKER_PREFIX, MAX_POOL) == ("control", 85, "worker:", 32)


# --- limits ---------------------------------------------------------------------------------------------------------


def test_limits_default_without_variables() -> None:
    assert ControlLimits.from_env({}) == ControlLimits(
        max_runs=2, memory_mb=1024, workers=1, nice=10, max_pids=4096, cgroup=""
    )


def test_limits_read_from_the_environment() -> None:
    env = {"ORCA_CONTROL_MAX_RUNS": "5", "ORCA_CONTROL_MEMORY_MB": "64", "ORCA_CONTROL_WORKERS": "4",
           "ORCA_CONTROL_NICE": "19", "ORCA_CONTROL_MAX_PIDS": "400", "ORCA_CONTROL_CGROUP": "/sys/fs/cgroup/orca"}
    limits = ControlLimits.from_env(env)
    assert limits == ControlLimits(max_runs=5, memory_mb=64, workers=4, nice=19, max_pids=400,
                                   cgroup="/sys/fs/cgroup/orca")
    assert limits.memory_bytes == 64 * 1048576


@pytest.mark.parametrize(
    ("name", "value", "field", "expected"),
    [
        ("ORCA_CONTROL_MAX_RUNS", "0", "max_runs", 0),  # the lowest allowed: no control-placed run at all
        ("ORCA_CONTROL_MAX_RUNS", "-1", "max_runs", 2),
        ("ORCA_CONTROL_MEMORY_MB", "0", "memory_mb", 1024),
        ("ORCA_CONTROL_MEMORY_MB", "1", "memory_mb", 1),
        ("ORCA_CONTROL_MEMORY_MB", "1.5", "memory_mb", 1024),
        ("ORCA_CONTROL_MEMORY_MB", "1e3", "memory_mb", 1024),
        ("ORCA_CONTROL_MEMORY_MB", "1_000", "memory_mb", 1024),  # int() would take it; not a whole number as written
        ("ORCA_CONTROL_MEMORY_MB", " 512", "memory_mb", 1024),
        ("ORCA_CONTROL_MEMORY_MB", "٣", "memory_mb", 1024),  # an Arabic-Indic digit: int() would take that too
        ("ORCA_CONTROL_MEMORY_MB", "9" * 5000, "memory_mb", 1024),  # int() refuses this many digits with an error
        ("ORCA_CONTROL_WORKERS", "0", "workers", 1),
        ("ORCA_CONTROL_WORKERS", "", "workers", 1),
        ("ORCA_CONTROL_NICE", "0", "nice", 0),
        ("ORCA_CONTROL_NICE", "20", "nice", 10),
        ("ORCA_CONTROL_NICE", "-5", "nice", 10),
        ("ORCA_CONTROL_MAX_PIDS", "0", "max_pids", 4096),
        ("ORCA_CONTROL_MAX_PIDS", "1", "max_pids", 1),
    ],
)
def test_a_value_out_of_range_is_the_default(name: str, value: str, field: str, expected: int) -> None:
    assert getattr(ControlLimits.from_env({name: value}), field) == expected


def test_limits_default_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCA_CONTROL_WORKERS", "3")
    assert ControlLimits.from_env().workers == 3


# --- placements -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pool", ["a", "gpu", "gpu-a_2", "0", "-", "_", "a" * 32])
def test_pools_that_can_be_named(pool: str) -> None:
    assert pool_problem(pool) == ""
    assert pool_of("worker:" + pool) == pool
    assert parse_placement("worker:" + pool) == "worker:" + pool


@pytest.mark.parametrize(
    ("pool", "says"),
    [
        ("", "empty"),
        ("a" * 33, "at most 32 characters, not 33"),
        ("GPU", "not 'G'"),
        ("gpu a", "not ' '"),
        ("gpu:a", "not ':'"),
        ("gpu.a", "not '.'"),
        ("gpué", "not 'é'"),
    ],
)
def test_pools_that_cannot(pool: str, says: str) -> None:
    assert says in pool_problem(pool)
    assert pool_of("worker:" + pool) == ""
    with pytest.raises(ValueError) as raised:
        parse_placement("worker:" + pool)
    assert says in str(raised.value)
    assert "default, control, ec2, worker:<pool>" in str(raised.value)


@pytest.mark.parametrize("placement", ["control", "ec2", "default", "", "worker", "workers:a", "Worker:a"])
def test_pool_of_other_placements_is_empty(placement: str) -> None:
    assert pool_of(placement) == ""


@pytest.mark.parametrize("value", ["control", "ec2", "default"])
def test_the_three_words(value: str) -> None:
    assert parse_placement(value) == value


@pytest.mark.parametrize("value", ["", "Control", "EC2", " control", "control ", "local", "null", "worker", "worker:"])
def test_anything_else_is_refused_saying_what_is_accepted(value: str) -> None:
    with pytest.raises(ValueError, match=r"is not one of default, control, ec2, worker:<pool>"):
        parse_placement(value)


# --- reasons --------------------------------------------------------------------------------------------------------


def _now(memory: float | None, disk: float | None, path: str = "/data") -> Now:
    return Now(t=1796016198.0, age=4.0, memory_percent=memory, disk_percent=disk,
               disk_path=path if disk is not None else "", cpu_percent=30.0, lines=12)


def test_missing_or_old_samples_hold_nothing() -> None:
    assert pressure_reason(None) == ""


@pytest.mark.parametrize(
    ("memory", "disk", "expected"),
    [
        (84.0, 50.0, ""),
        (85.0, 85.0, ""),  # over means above: exactly the threshold still lets a run start
        (None, None, ""),  # a minute without mem or disk sections says nothing about them
        (86.0, 50.0, "control instance: memory 86% over 85%"),
        (91.0, None, "control instance: memory 91% over 85%"),
        (50.0, 90.0, "control instance: disk /data 90% over 85%"),
        # Rounded up, so a figure over the threshold never reads as equal to it: 85.01 -> 85.1.
        (85.01, 85.55, "control instance: memory 85.1% over 85%, disk /data 85.6% over 85%"),
        # Over by a ten-billionth: still shown above 85, never as "85% over 85%".
        (85.0000000001, None, "control instance: memory 85.1% over 85%"),
        (85.00000000000001, None, "control instance: memory 85.1% over 85%"),  # the next float after 85
        # A figure already at one decimal stays as it is: 85.1 is not pushed up to 85.2 by its binary form.
        (85.1, 90.3, "control instance: memory 85.1% over 85%, disk /data 90.3% over 85%"),
        (100.0, None, "control instance: memory 100% over 85%"),
        # What no sampler writes (a `used` past its `total`, infinity) holds, and is shown as what it is.
        (float("inf"), None, "control instance: memory >100% over 85%"),
        (100.00001, (2**64 - 1) / 1 * 100, "control instance: memory >100% over 85%, disk /data >100% over 85%"),
        (float("nan"), float("-inf"), ""),  # not a number, or never over: nothing to hold for
    ],
)
def test_pressure_names_resource_percent_and_threshold(
    memory: float | None, disk: float | None, expected: str
) -> None:
    assert pressure_reason(_now(memory, disk)) == expected


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/data\nforged row 99%", "/data\\nforged row 99%"),
        ("/data\x1b[2J\x1b[H", "/data\\x1b[2J\\x1b[H"),
        ("/mnt/\u2028x\x7f\x9b", "/mnt/\\u2028x\\x7f\\x9b"),  # a line separator, DEL and the one-byte CSI
        ("/mnt/dätä space", "/mnt/dätä space"),
    ],
)
def test_a_disk_path_is_escaped_in_the_reason(path: str, shown: str) -> None:
    reason = pressure_reason(_now(50.0, 90.0, path))
    assert reason == f"control instance: disk {shown} 90% over 85%"
    assert reason.isprintable()


@pytest.mark.parametrize(
    ("running", "max_runs", "expected"),
    [
        (0, 2, ""),
        (1, 2, ""),
        (2, 2, "2 control-placed runs are running, at most 2 at once (ORCA_CONTROL_MAX_RUNS)"),
        (3, 2, "3 control-placed runs are running, at most 2 at once (ORCA_CONTROL_MAX_RUNS)"),
        (1, 1, "1 control-placed run is running, at most 1 at once (ORCA_CONTROL_MAX_RUNS)"),
        (0, 0, "control-placed runs are turned off (ORCA_CONTROL_MAX_RUNS=0)"),
    ],
)
def test_slots(running: int, max_runs: int, expected: str) -> None:
    assert slots_reason(running, max_runs) == expected


@pytest.mark.parametrize(
    ("resident", "memory_mb", "expected"),
    [
        # 1.31 GiB: 1,400,000,000 / 2^30 = 1.3039 -> rounded up to two places.
        (1_400_000_000, 1024, "resident memory 1.31 GiB over the 1024 MB cap"),
        # Just over a 1024 MB cap: 2^30 + 1 bytes is 1.0000000009 GiB, shown as 1.01 rather than 1.
        (2**30 + 1, 1024, "resident memory 1.01 GiB over the 1024 MB cap"),
        # 100 MiB exactly under a 64 MB cap.
        (100 * 2**20, 64, "resident memory 100 MiB over the 64 MB cap"),
        # 64 MiB + 1 byte: over by a byte, and shown as 64.1, never as the cap itself.
        (64 * 2**20 + 1, 64, "resident memory 64.1 MiB over the 64 MB cap"),
    ],
)
def test_cap_reason(resident: int, memory_mb: int, expected: str) -> None:
    assert cap_reason(resident, memory_mb) == expected


def test_cap_reason_of_absurd_figures_is_short() -> None:
    # 2^64 - 1 bytes is 17,179,869,184 GiB less a byte: rounded up to that, not printed with its float noise.
    assert cap_reason(2**64 - 1, 64) == "resident memory 17179869184 GiB over the 64 MB cap"


def test_the_kernels_cap_reason_names_the_cap_not_a_figure_over_it() -> None:
    assert kernel_cap_reason(64) == "memory reached the 64 MB cap (the kernel ended the run at its cgroup memory.max)"


# --- environment entries --------------------------------------------------------------------------------------------


def test_no_secrets_no_entries() -> None:
    assert secrets_env([]) == []


def test_secrets_then_their_names() -> None:
    assert secrets_env([("B", "two\nlines"), ("A_1", "")]) == ["B=two\nlines", "A_1=", "ORCA_SECRETS=B,A_1"]


@pytest.mark.parametrize("name", ["", "1A", "A-B", "A B", "A=B", "É", "ORCA_SECRETS"])
def test_a_bad_name_is_refused_naming_it_never_the_value(name: str) -> None:
    with pytest.raises(ValueError) as raised:
        secrets_env([("OK", "first-value"), (name, "hunter2-value")])
    assert repr(name) in str(raised.value)
    assert "hunter2" not in str(raised.value)
    assert "first-value" not in str(raised.value)


def test_a_value_with_nul_is_refused_naming_the_secret_never_the_value() -> None:
    with pytest.raises(ValueError) as raised:
        secrets_env([("TOKEN", "hunter2\0rest")])
    message = str(raised.value)
    assert "'TOKEN'" in message and "NUL" in message
    assert "hunter2" not in message and "rest" not in message


def test_a_name_given_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="'TOKEN': given twice"):
        secrets_env([("TOKEN", "a"), ("TOKEN", "b")])


def test_run_env() -> None:
    limits = ControlLimits(workers=2)
    assert run_env(limits, "123.dkr.ecr/p:v7", [("TOKEN", "t")]) == [
        "DISTA_MODE=local",
        "DISTA_WORKERS=2",
        "ORCA_IMAGE=123.dkr.ecr/p:v7",
        "TOKEN=t",
        "ORCA_SECRETS=TOKEN",
    ]
    assert run_env(limits, "img", []) == ["DISTA_MODE=local", "DISTA_WORKERS=2", "ORCA_IMAGE=img"]


def test_environment_entries_split_at_the_first_equals() -> None:
    assert environment_of(["A=b=c", "EMPTY=", "A=d"]) == {"A": "d", "EMPTY": ""}
    assert environment_of("A=1" for _ in range(2)) == {"A": "1"}  # any iterable of entries


@pytest.mark.parametrize(
    ("entries", "kind"),
    [({"PATH": "/bin", "TOKEN": "t"}, "dict"), ("PATH=/bin", "str"), (b"PATH=/bin", "bytes")],
)
def test_a_mapping_or_a_string_is_not_entries(entries: object, kind: str) -> None:
    with pytest.raises(TypeError, match=rf"^env: NAME=value entries \(a list, as run_env returns\), not a {kind}: "):
        environment_of(entries)  # type: ignore[arg-type]


def test_an_entry_that_is_not_text() -> None:
    with pytest.raises(TypeError, match="each entry is a NAME=value str, not a tuple"):
        environment_of([("A", "1")])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("PATH", "env entry 'PATH': not NAME=value (no '=')"),
        ("", "env entry '': not NAME=value (no '=')"),
        ("=hunter2", "env: an entry with an empty name (it starts with '=')"),
        ("TOKEN=hunter2\0x", "env entry 'TOKEN': holds a NUL byte, which an environment cannot hold"),
    ],
)
def test_an_entry_that_cannot_be_a_variable_is_named(entry: str, says: str) -> None:
    with pytest.raises(ValueError) as raised:
        environment_of(["A=1", entry])
    assert str(raised.value) == says
    assert "hunter2" not in str(raised.value)
