"""Properties of the sample line parser: every line the encoder writes from a sampler's values reads back to the same
values, and no input at all makes it raise."""

from __future__ import annotations

import json

import msgspec
from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.compute.encode import encode_line
from orca.sample.line_format import UNSET, CpuShare, Disk, IoRate, Mem, NetRate
from orca.sample.line_format import Sample as Line
from orca.sample.parse.errors import ParseError
from orca.sample.parse.sample_line import (
    CheckedLine,
    ContainerSample,
    Sample,
    fields,
    line_of,
    many_fields,
    many_lines,
    parse,
)
from tests.lines import container, line, pressure_share

# Values as a line carries them: percentages with one decimal (a container may use many cores), times with three,
# self_cpu with two, byte counts up to 2^64 - 1, text without lone surrogates (which the encoder replaces).
tenths = st.integers(0, 10**7).map(lambda n: n / 10)
thousandths = st.integers(0, 2**33 * 1000).map(lambda n: n / 1000)
hundredths = st.integers(0, 10**9).map(lambda n: n / 100)
byte_counts = st.integers(0, 2**64 - 1)
texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=20)

cpu_shares = st.builds(CpuShare, tenths, tenths, tenths, tenths, tenths)
mems = st.builds(Mem, *[byte_counts] * 7)
disks = st.builds(Disk, texts, byte_counts, byte_counts, byte_counts)
io_rates = st.builds(IoRate, byte_counts, byte_counts)
net_rates = st.builds(NetRate, byte_counts, byte_counts)
containers = st.builds(
    container, texts, byte_counts, tenths, byte_counts, st.none() | byte_counts,
    throttled=st.none() | tenths, mem_max=st.none() | byte_counts, pids=st.none() | st.integers(0, 2**22),
    io=st.none() | io_rates, net=st.none() | net_rates,
)
pressures = st.builds(pressure_share, *[st.none() | tenths] * 3)
lines = st.builds(
    line,
    t=thousandths,
    dt=thousandths,
    host=texts,
    cores=st.none() | st.integers(0, 4096),
    cpu=st.none() | cpu_shares,
    mem=st.none() | mems,
    disk=st.none() | st.lists(disks, max_size=3).map(tuple),
    io=st.none() | io_rates,
    net=st.none() | net_rates,
    containers_enabled=st.booleans(),
    containers=st.none() | st.lists(containers, max_size=4).map(tuple),
    self_cpu=hundredths,
    pressure=st.none() | pressures,
)


def as_read_back(line: Line) -> Sample:
    """What a reader must see of `line`: the same values, containers in the order written (by name)."""
    entries = None
    if line.containers is not UNSET and line.containers is not None:
        entries = tuple(
            ContainerSample(e.name, e.mem, e.cpu, e.mem_nocache, e.oom_kill, e.throttled, e.mem_max, e.pids, e.io,
                            e.net)
            for e in sorted(line.containers, key=lambda e: e.name)
        )
    return Sample(
        t=line.t,
        dt=line.dt,
        host=line.host,
        cores=line.cores,
        cpu=line.cpu,
        mem=line.mem,
        disk=line.disk,
        io=line.io,
        net=line.net,
        containers=entries,
        self_cpu=line.self_cpu,
        pressure=line.pressure,
    )


@given(lines)
@example(
    line(1796016198.738, 5.0, "ip-10-0-1-5", 4, None, None, (), None, None, True, (), 0.42,
         pressure_share(None, None, None))
)
def test_every_encoded_line_reads_back_to_its_values(line: Line) -> None:
    assert parse(encode_line(line)).unwrap() == as_read_back(line)


@given(lines)
def test_as_printed_on_standard_output_too(line: Line) -> None:
    text = "orca-sample " + encode_line(line).decode() + "\n"
    assert parse(text).unwrap() == as_read_back(line)


@given(st.binary())
@example(b"orca-sample ")
@example(b"\xff\xfe{")
@example(b"[" * 2000)
def test_no_bytes_make_it_raise(raw: bytes) -> None:
    parse(raw)


@given(st.text())
def test_no_text_makes_it_raise(raw: str) -> None:
    parse(raw)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
keys = st.sampled_from(
    ["t", "dt", "host", "cores", "cpu", "mem", "disk", "io", "net", "containers", "self_cpu", "pressure"]
)


@given(st.dictionaries(keys, json_values), st.booleans())
def test_no_document_of_the_lines_keys_makes_it_raise(document: dict[str, object], prefixed: bool) -> None:
    """Near misses of a line (its keys, any JSON values) are read or refused, never an exception."""
    text = json.dumps({"v": 1, **document}).encode()  # integers beyond 64 bits included
    parse(b"orca-sample " + text if prefixed else text)


near_misses = st.dictionaries(keys, json_values).map(lambda document: json.dumps({"v": 1, **document}).encode())
encoded = lines.map(encode_line)
any_lines = st.lists(st.one_of(encoded, encoded.map(lambda b: b"orca-sample " + b), near_misses, st.binary()),
                     max_size=8)


@given(any_lines)
@example([b'{"v":1,"t":1.0,"dt":1.0,"host":"h","disk":[{"path":"/","total":1,"used":1,"free":1}],"cores":true}'])
@example([b'{"v":1.0,"t":1.0,"dt":1.0,"host":"h"}'])
@example([b'{"v":1,"t":1,"dt":1,"host":"h","containers":[{"name":"a","mem":1,"io":{"read":-1,"write":0}}]}'])
@example([b'{"v":1,"t":1,"dt":1,"host":"h","containers":[{"name":"a","mem":1,"net":[1,2],"pids":1.5}]}'])
def test_many_lines_at_once_get_the_verdicts_of_one_at_a_time(raws: list[bytes]) -> None:
    good, bad = many_fields(raws)
    one_by_one = [fields(raw) for raw in raws]
    assert good == [verdict for verdict in one_by_one if not isinstance(verdict, ParseError)]
    assert sorted((raw, error.reason) for raw, error in bad) == sorted(
        (raw, verdict.reason) for raw, verdict in zip(raws, one_by_one, strict=True) if isinstance(verdict, ParseError)
    )


@given(st.lists(encoded, min_size=1, max_size=8))
def test_a_batch_of_good_lines_is_all_good(raws: list[bytes]) -> None:
    good, bad = many_fields(raws)
    assert (len(good), bad) == (len(raws), [])


@given(any_lines)
@example([b'{"v":1,"t":1.0,"dt":1.0,"host":"h","cores":9223372036854775808}'])
@example([b'{"v":1,"t":1.0,"dt":1.0,"host":"h","cores":99999999999999999999999}'])
@example([b'{"v":1,"t":1.0,"dt":1.0,"host":"h","cores":true}', b'{"v":1,"t":1,"dt":1e400,"host":"h"}'])
@example([b'{"v":1,"t":-0.0,"dt":1,"host":"h","host":"g","x":' + b"[" * 2000 + b"]" * 2000 + b"}"])
@example([b'{"v":1,"t":1,"dt":1,"host":"h","containers":[{"name":"a","mem":1,"throttled":-0.5}]}',
          b'{"v":1,"t":1,"dt":1,"host":"h","containers":[{"name":"a","mem":1,"net":{"in":1},"mem_max":null}]}'])
def test_the_typed_decoder_keeps_and_refuses_what_fields_does(raws: list[bytes]) -> None:
    _same_verdicts(raws)
    _same_verdicts([raw + b"\n" for raw in raws])  # as a source gives them: each with its newline


def _same_verdicts(raws: list[bytes]) -> None:
    good, bad = many_lines(raws)
    one_by_one = [fields(raw) for raw in raws]
    assert good == [line_of(verdict) for verdict in one_by_one if not isinstance(verdict, ParseError)]
    assert sorted((raw, error.reason) for raw, error in bad) == sorted(
        (raw, verdict.reason) for raw, verdict in zip(raws, one_by_one, strict=True) if isinstance(verdict, ParseError)
    )


@given(st.lists(encoded, min_size=1, max_size=8))
def test_the_typed_decoder_takes_a_batch_of_good_lines_whole(raws: list[bytes]) -> None:
    """Every line the encoder writes is taken by the typed decoder itself, not left to `fields` (the slow way),
    unless it holds a count beyond what the decoder can bound (64-bit signed)."""
    typical = [raw for raw in raws if _largest_number(json.loads(raw)) < 2**63]
    assert [msgspec.json.decode(raw, type=CheckedLine) for raw in typical] == many_lines(typical)[0]


def _largest_number(value: object) -> float:
    if isinstance(value, dict):
        return max(map(_largest_number, value.values()), default=0)
    if isinstance(value, list):
        return max(map(_largest_number, value), default=0)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0
