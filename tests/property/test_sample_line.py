"""Properties of the sample line parser: every line a sampler writes reads back to the record it was written from, no
input at all makes it raise, a batch gets the verdicts of its lines one by one, and every refusal names the field."""

from __future__ import annotations

import json
import re

from hypothesis import example, given
from hypothesis import strategies as st
from returns.result import Failure, Success

from orca.sample.compute.encode import encode_line
from orca.sample.line_format import PressureShare, Sample
from orca.sample.readback.sample_line import decode_all, parse
from tests.examples import costly
from tests.lines import LEFT_OUT, left_out, samples, text_of, written


@given(samples, left_out)
@example(Sample(v=1, t=1796016198.738, dt=5.0, host="ip-10-0-1-5", cores=4, disk=(), containers=(), self_cpu=0.42,
                pressure=PressureShare()), frozenset(LEFT_OUT))
def test_every_written_line_reads_back_to_its_record(sample: Sample, absent: frozenset[str]) -> None:
    assert parse(text_of(sample, absent)) == Success(sample)


@given(samples)
@example(Sample(v=1, t=1796016198.738, dt=5.0, host="ip-10-0-1-5", cores=4, disk=(), containers=(), self_cpu=0.42,
                pressure=PressureShare()))
def test_every_line_the_encoder_writes_reads_back_to_the_record_it_was_written_from(sample: Sample) -> None:
    assert parse(encode_line(sample)) == Success(sample)


@given(samples)
def test_as_printed_on_standard_output_too(sample: Sample) -> None:
    assert parse(("orca-sample " + text_of(sample) + "\n").encode()) == Success(sample)


@given(st.binary())
@example(b"orca-sample ")
@example(b"\xff\xfe{")
@example(b"[" * 2000)
@example(b'{"v":1,"t":1,"dt":1,"host":"h","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}")
def test_no_bytes_make_it_raise(raw: bytes) -> None:
    parse(raw)


@given(st.text())
@example('{"v":1,"t":1,"dt":1,"host":"\ud800"}')
def test_no_text_makes_it_raise(raw: str) -> None:
    assert isinstance(parse(raw), Success | Failure)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
keys = st.sampled_from(
    ["t", "dt", "host", "cores", "cpu", "mem", "disk", "io", "net", "containers", "self_cpu", "pressure"]
)
near_misses = st.dictionaries(keys, json_values).map(lambda document: json.dumps({"v": 1, **document}).encode())
"""A line's keys with any JSON values (integers beyond 64 bits included)."""
REASON = re.compile(
    r"not JSON|not a JSON object|nested too deeply|(?:[a-z_]+(?:\[\])?\.)*[a-z_]+(?:\[\])? is not [^:]+"
)
"""A refusal names the field and what it must be, or says the line is not a JSON object at all."""


@given(near_misses, st.booleans())
@example(b'{"v":1,"t":1e400,"dt":1,"host":"h"}', False)
@example(b'{"v":1,"t":1,"dt":1,"host":"h","cores":99999999999999999999999,"disk":[{"path":"/"}]}', True)
@example(b'{"v":1,"t":-0.0,"dt":1,"host":"h","host":"g","x":' + b"[" * 2000 + b"]" * 2000 + b"}", False)
@example(b'{"v":1,"t":1,"dt":1,"host":"h","containers":[{"name":"a","mem":1,"net":[1,2],"pids":1.5}]}', True)
def test_near_misses_are_read_or_refused_with_a_reason(text: bytes, prefixed: bool) -> None:
    result = parse(b"orca-sample " + text if prefixed else text)
    if isinstance(result, Failure):
        assert REASON.fullmatch(result.failure().reason), result.failure().reason


any_lines = st.lists(st.one_of(written, written.map(lambda b: b"orca-sample " + b), near_misses, st.binary()),
                     max_size=8)


@given(any_lines)
@example([b'{"v":1,"t":1.0,"dt":1.0,"host":"h","disk":[{"path":"/","total":1,"used":1,"free":1}],"cores":true}'])
@example([b'{"v":1.0,"t":1.0,"dt":1.0,"host":"h"}'])
@example([b'{"v":1,"t":1.0,"dt":1.0,"host":"h","cores":9223372036854775808}', b"\n"])
@example([b'{"v":1,"t":1,"dt":1,"host":"h","containers":[{"name":"a","mem":1,"io":{"read":-1,"write":0}}]}'])
@costly(0.4)
def test_many_lines_at_once_get_the_verdicts_of_one_at_a_time(raws: list[bytes]) -> None:
    for batch in (raws, [raw + b"\n" for raw in raws]):  # as a source gives them: each with its newline
        good, bad = decode_all(batch)
        one_by_one = [parse(raw) for raw in batch]
        assert good == [verdict.unwrap() for verdict in one_by_one if isinstance(verdict, Success)]
        assert bad == [(raw, verdict.failure()) for raw, verdict in zip(batch, one_by_one, strict=True)
                       if isinstance(verdict, Failure)]


@given(st.lists(samples, min_size=1, max_size=8))
@costly(0.5)
def test_a_batch_of_good_lines_is_all_good(lines: list[Sample]) -> None:
    assert decode_all([text_of(line).encode() + b"\n" for line in lines]) == (lines, [])
