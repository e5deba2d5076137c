"""The `cgroup` section's declaration in the line's shape (docs/line.md; docs/behaviour.md §3.11): its keys in
order, its decimals, what is left out, and a line decoded back into it, nulls and absent keys included."""

from __future__ import annotations

import typing

import msgspec
import pytest

from orca.sample.line_format import CgroupSample, Sample

KEYS = ["mem", "mem_max", "cpu", "cpu_max", "throttled", "oom_kill", "pids", "pids_max"]


def test_keys_in_order_and_after_the_keys_before_it() -> None:
    """Last but the extensions added after it (`run`, `start`: docs/behaviour.md §3.1)."""
    assert list(CgroupSample.__struct_fields__) == KEYS
    assert Sample.__struct_fields__[-3:] == ("cgroup", "run", "start")
    assert "cgroup" in Sample.LEFT_OUT_WHEN_NONE


def test_the_limits_are_what_is_left_out() -> None:
    assert frozenset({"mem_max", "cpu_max", "pids_max"}) == CgroupSample.LEFT_OUT_WHEN_NONE


def places(field: str) -> int | None:
    """The `places` declared in the `Meta` of a field's number type."""
    (number, _none) = typing.get_args(typing.get_type_hints(CgroupSample, include_extras=True)[field])
    metas = [meta for meta in typing.get_args(number)[1:] if isinstance(meta, msgspec.Meta)]
    return next((meta.extra or {} for meta in metas), {}).get("places")


def test_decimals_declared() -> None:
    assert [places(field) for field in KEYS] == [None, None, 1, 3, 1, None, None, None]


LINE = (b'{"v":1,"t":1796016198.738,"dt":5.0,"host":"pod-7","cgroup":{"mem":1932735283,"mem_max":2147483648,'
        b'"cpu":97.0,"cpu_max":1.0,"throttled":41.0,"oom_kill":0,"pids":37}}')


def test_a_line_with_the_section_reads_back() -> None:
    sample = msgspec.json.decode(LINE, type=Sample)
    assert sample.cgroup == CgroupSample(mem=1932735283, mem_max=2147483648, cpu=97.0, cpu_max=1.0, throttled=41.0,
                                         oom_kill=0, pids=37, pids_max=None)


def test_nulls_and_a_line_without_the_section() -> None:
    memory_only = b'{"v":1,"t":1.0,"dt":5.0,"host":"h","cgroup":{"mem":null,"mem_max":1,"cpu":null,"throttled":null}}'
    assert msgspec.json.decode(memory_only, type=Sample).cgroup == CgroupSample(mem_max=1)
    assert msgspec.json.decode(b'{"v":1,"t":1.0,"dt":5.0,"host":"h"}', type=Sample).cgroup is None


@pytest.mark.parametrize("part", [b'"mem":-1', b'"cpu_max":-0.5', b'"pids":1.5', b'"cpu":"high"'])
def test_a_section_with_a_bad_number_is_refused(part: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"v":1,"t":1.0,"dt":5.0,"host":"h","cgroup":{' + part + b"}}", type=Sample)
