"""cgroup v2 and Docker name properties (docs/behaviour.md §3.8; Documentation/admin-guide/cgroup-v2.rst)."""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import example, given
from hypothesis import strategies as st
from returns.result import Success

from orca.sample.compute.containers import container_mem
from orca.sample.parse import cgroup
from tests.property.render_process import (
    PID_MAX,
    U64,
    IoStatLine,
    container_ids,
    flat_files,
    io_stat_files,
    render_config,
    render_flat_keyed,
    render_io_stat,
    render_memory_current,
    u64s,
)

any_text = st.text(st.characters(codec=None, exclude_categories=()))  # surrogates included
texts = st.one_of(any_text, st.binary().map(lambda data: data.decode("utf-8", "replace")))


@given(u64s)
def test_memory_current_round_trip(value: int) -> None:
    assert cgroup.memory_current(render_memory_current(value)) == Success(value)


@given(flat_files)
def test_flat_keyed_round_trip(values: Mapping[str, int]) -> None:
    assert cgroup.flat_keyed(render_flat_keyed(values), "memory.stat") == Success(values)


@given(container_ids)
def test_container_id_round_trip_for_both_drivers(identifier: str) -> None:
    assert cgroup.container_id(f"docker-{identifier}.scope") == identifier
    assert cgroup.container_id(identifier) == identifier


@given(st.text(), st.text())
def test_container_name_round_trip_and_nothing_else(name: str, secret: str) -> None:
    config = render_config(name, secret)
    assert cgroup.container_name(config) == name


@given(io_stat_files)
@example([IoStatLine("8:0", U64, 0, (("rios", 1),), 0)])
def test_io_stat_round_trip(lines: list[IoStatLine]) -> None:
    expected = {line.device: cgroup.DeviceIo(line.read_bytes, line.written_bytes) for line in lines}
    assert cgroup.io_stat(render_io_stat(lines)) == Success(expected)


@given(st.none() | u64s)
def test_memory_max_round_trip(limit: int | None) -> None:
    assert cgroup.memory_max("max\n" if limit is None else f"{limit}\n") == Success(limit)


@given(st.integers(0, PID_MAX))
def test_pids_current_round_trip(count: int) -> None:
    assert cgroup.pids_current(f"{count}\n") == Success(count)


@given(u64s, st.integers(0, U64), st.integers(0, U64), flat_files)
def test_cpu_periods_round_trip(usage: int, periods: int, throttled_share: int, others: dict[str, int]) -> None:
    throttled = throttled_share % (periods + 1)  # never more throttled periods than periods
    stat = {"usage_usec": usage, "nr_periods": periods, "nr_throttled": throttled}
    text = render_flat_keyed({**stat, **{key: value for key, value in others.items() if key not in stat}})
    parsed = cgroup.flat_keyed(text, "cpu.stat").bind(cgroup.cpu_periods)
    assert parsed == Success(cgroup.CpuPeriods(periods, throttled))


@given(texts)
@example("max\n")
@example("9" * 5000)
@example("8:0 rbytes=18446744073709551616 wbytes=1\n")
def test_every_cgroup_parser_is_total_and_never_negative(text: str) -> None:
    current = cgroup.memory_current(text).value_or(0)
    values = cgroup.flat_keyed(text, "cpu.stat").value_or({})
    assert all(0 <= value <= U64 for value in [current, *values.values()])
    limit = cgroup.memory_max(text).value_or(0)
    assert limit is None or 0 <= limit <= U64
    assert 0 <= cgroup.pids_current(text).value_or(0) <= U64
    periods = cgroup.flat_keyed(text, "cpu.stat").bind(cgroup.cpu_periods).value_or(cgroup.CpuPeriods(0, 0))
    assert 0 <= periods.periods <= U64 and 0 <= periods.throttled <= U64
    for device in cgroup.io_stat(text).value_or({}).values():
        assert 0 <= device.read_bytes <= U64 and 0 <= device.written_bytes <= U64
    identifier = cgroup.container_id(text)
    assert identifier is None or len(identifier) == 64
    assert isinstance(cgroup.container_name(text), str)


NUMBERISH = st.one_of(u64s.map(str), st.integers(-(2**70), 2**70).map(str), st.sampled_from(["max", "", "-0", "٣"]))


@given(NUMBERISH, st.lists(st.tuples(st.sampled_from(["inactive_file", "anon", "file"]), NUMBERISH), max_size=4))
@example(str(U64 + 1), [])  # 20 digits, one past the largest u64: not a counter
@example(str(U64), [])
def test_container_mem_is_never_negative_but_for_the_sentinel(current: str, stat: list[tuple[str, str]]) -> None:
    mem = container_mem(current, "".join(f"{key} {value}\n" for key, value in stat))
    assert mem >= 0 or mem == -1
    is_u64 = current.isascii() and current.isdigit() and int(current) <= U64
    assert (mem == -1) == (not is_u64)


@given(u64s, u64s, flat_files)
def test_container_mem_is_current_less_inactive_file(current: int, inactive: int, others: dict[str, int]) -> None:
    stat = render_flat_keyed({**{k: v for k, v in others.items() if k != "inactive_file"}, "inactive_file": inactive})
    assert container_mem(render_memory_current(current), stat) == max(0, current - inactive)


@given(texts, texts)
def test_container_mem_total(current: str, stat: str) -> None:
    assert container_mem(current, stat) >= -1
