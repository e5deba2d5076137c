"""Properties of the line encoder (docs/behaviour.md §3.1-3.10): key order, decimals, valid JSON.

Each line is decoded back with the standard `json` module, floats kept as their text (`parse_float=str`), so the test
sees exactly what was written, and NaN/Infinity rejected (`parse_constant`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson
from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.compute.encode import decimals, encode_line, fixed1
from orca.sample.line_format import UNSET, ContainerSample, CpuShare, Disk, IoRate, Mem, NetRate, PressureShare, Sample
from tests.lines import line as line_of

ORIGINAL_KEYS = ["v", "t", "dt", "host", "cores", "cpu", "mem", "disk", "io", "net"]
ONE_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]")
AT_MOST = {n: re.compile(rf"-?(0|[1-9][0-9]*)\.[0-9]{{1,{n}}}") for n in (2, 3)}

# Percentages are 0-100 on a sane machine, but the encoder must write whatever it is given: any float at all.
any_float = st.floats(allow_nan=True, allow_infinity=True)
percent = st.one_of(st.floats(min_value=0.0, max_value=100.0), any_float)
byte_counts = st.one_of(st.integers(min_value=0, max_value=2**64 - 1), st.integers())
names = st.text(max_size=20)  # any text, lone surrogates included

cpu_shares = st.builds(CpuShare, percent, percent, percent, percent, percent)
mems = st.builds(Mem, *[byte_counts] * 7)
disks = st.builds(Disk, names, byte_counts, byte_counts, byte_counts)
containers = st.builds(
    ContainerSample, name=names, mem=byte_counts, cpu=percent, mem_nocache=byte_counts,
    oom_kill=st.one_of(st.none(), st.integers(0, 2**64 - 1)),
    throttled=st.none() | percent,
    mem_max=st.none() | byte_counts,
    pids=st.none() | byte_counts,
    io=st.none() | st.builds(IoRate, byte_counts, byte_counts),
    net=st.none() | st.builds(NetRate, byte_counts, byte_counts),
)
NEW_CONTAINER_KEYS = ("throttled", "mem_max", "pids", "io", "net")
pressures = st.builds(PressureShare, cpu=st.none() | percent, memory=st.none() | percent, io=st.none() | percent)


lines = st.builds(
    line_of,
    t=st.one_of(st.floats(min_value=0.0, max_value=2**33), any_float),
    dt=st.one_of(st.floats(min_value=0.0, max_value=86400.0), any_float),
    host=names,
    cores=st.one_of(st.none(), st.integers(0, 4096)),
    cpu=st.one_of(st.none(), cpu_shares),
    mem=st.one_of(st.none(), mems),
    disk=st.one_of(st.none(), st.lists(disks, max_size=3).map(tuple)),
    io=st.one_of(st.none(), st.builds(IoRate, byte_counts, byte_counts)),
    net=st.one_of(st.none(), st.builds(NetRate, byte_counts, byte_counts)),
    containers_enabled=st.booleans(),
    containers=st.one_of(st.none(), st.lists(containers, max_size=4).map(lambda entries: tuple(
        sorted(entries, key=lambda entry: entry.name)))),
    self_cpu=st.one_of(st.floats(min_value=0.0, max_value=1e6), any_float),
    pressure=st.one_of(st.none(), pressures),
)


def no_constants(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


def decode(data: bytes) -> Any:
    return json.loads(data, parse_float=str, parse_constant=no_constants)


def rounded(x: float, places: int) -> float:
    """What a `places`-decimal field must decode to: x rounded, 0.0 for a value JSON cannot carry."""
    return round(x, places) if math.isfinite(x) else 0.0


def assert_decimal(text: Any, x: float, places: int) -> None:
    assert isinstance(text, str), text  # a JSON number with a point, as parse_float saw it
    pattern = ONE_DECIMAL if places == 1 else AT_MOST[places]
    assert pattern.fullmatch(text), text
    assert float(text) == rounded(x, places)
    assert text != "-0.0"


@given(lines)
@example(
    line_of(1762250000.123, 5.0, "ip-10-0-1-5", 4, None, None, None, None, None, True, (), 0.42, PressureShare())
)
def test_keys_in_the_specs_order(line: Sample) -> None:
    """docs/behaviour.md §3.1: the original keys, `containers` only with --cgroup, `self_cpu`, then `pressure`
    when there."""
    document = decode(encode_line(line))
    expected = [*ORIGINAL_KEYS, *([] if line.containers is UNSET else ["containers"]), "self_cpu"]
    expected += [] if line.pressure is None else ["pressure"]
    assert list(document) == expected
    assert document["v"] == 1


@given(lines)
def test_every_section_decodes_to_its_values(line: Sample) -> None:
    document = decode(encode_line(line))
    assert_decimal(document["t"], line.t, 3)
    assert_decimal(document["dt"], line.dt, 3)
    assert line.self_cpu is not None
    assert_decimal(document["self_cpu"], line.self_cpu, 2)
    assert document["cores"] == line.cores
    if line.cpu is None:
        assert document["cpu"] is None
    else:
        assert list(document["cpu"]) == ["user", "system", "iowait", "steal", "busiest"]
        for key, value in document["cpu"].items():
            assert_decimal(value, getattr(line.cpu, key), 1)
    if line.mem is None:
        assert document["mem"] is None
    else:
        assert list(document["mem"]) == ["total", "used", "available", "cache", "swap_total", "swap_used", "rss"]
        assert [document["mem"][key] for key in document["mem"]] == [getattr(line.mem, key) for key in document["mem"]]
    if line.disk is None:
        assert document["disk"] is None
    else:
        assert [list(entry) for entry in document["disk"]] == [["path", "total", "used", "free"]] * len(line.disk)
        assert [(d["total"], d["used"], d["free"]) for d in document["disk"]] == [
            (d.total, d.used, d.free) for d in line.disk
        ]
    assert document["io"] == (None if line.io is None else {"read": line.io.read, "write": line.io.write})
    assert document["net"] == (None if line.net is None else {"in": line.net.received, "out": line.net.sent})


@given(lines)
def test_containers_sorted_by_name_with_oom_kill_only_when_known(line: Sample) -> None:
    """docs/behaviour.md §3.8: `name`, `mem`, `cpu`, `mem_nocache`, then each of `oom_kill`, `throttled`, `mem_max`,
    `pids`, `io`, `net` only when known, sorted by name; null if unread."""
    document = decode(encode_line(line))
    if line.containers is UNSET:
        assert "containers" not in document
        return
    if line.containers is None:
        assert document["containers"] is None
        return
    entries = line.containers  # sorted by name by the section's function; the encoder keeps their order
    assert len(document["containers"]) == len(entries)
    for written, entry in zip(document["containers"], entries, strict=True):
        keys = ["name", "mem", "cpu", "mem_nocache"] + ([] if entry.oom_kill is None else ["oom_kill"])
        keys += [key for key in NEW_CONTAINER_KEYS if getattr(entry, key) is not None]
        assert list(written) == keys
        assert (written["mem"], written["mem_nocache"], written.get("oom_kill")) == (
            entry.mem, entry.mem_nocache, entry.oom_kill
        )
        assert entry.cpu is not None
        assert_decimal(written["cpu"], entry.cpu, 1)
        if entry.throttled is not None:
            assert_decimal(written["throttled"], entry.throttled, 1)
        assert (written.get("mem_max"), written.get("pids")) == (entry.mem_max, entry.pids)
        if entry.io is not None:
            assert written["io"] == {"read": entry.io.read, "write": entry.io.write}
        if entry.net is not None:
            assert written["net"] == {"in": entry.net.received, "out": entry.net.sent}


@given(lines)
def test_pressure_leaves_out_unknown_resources(line: Sample) -> None:
    document = decode(encode_line(line))
    if line.pressure is None:
        assert "pressure" not in document
        return
    shares = {"cpu": line.pressure.cpu, "memory": line.pressure.memory, "io": line.pressure.io}
    assert list(document["pressure"]) == [resource for resource, share in shares.items() if share is not None]
    for resource, text in document["pressure"].items():
        share = shares[resource]
        assert share is not None
        assert_decimal(text, share, 1)


@given(lines)
def test_one_compact_line_without_nan_or_infinity(line: Sample) -> None:
    data = encode_line(line)
    assert b"\n" not in data
    assert isinstance(decode(data), dict)  # decode() refuses NaN and Infinity outside strings
    assert isinstance(orjson.loads(data), dict)  # also valid for orjson, the reader the pipeline uses


@given(any_float)
@example(-0.0)
@example(-0.04)
@example(0.05)
@example(99.95)
@example(1e16)
@example(1.7976931348623157e308)
def test_fixed1_is_the_one_decimal_text_of_the_rounded_value(x: float) -> None:
    """docs/behaviour.md §6: `fixed1(x)` is x to one decimal, as JSON; -0.0 and non-finite values give 0.0."""
    assert_decimal(fixed1(x), x, 1)
    if not math.isfinite(x):
        assert fixed1(x) == "0.0"


@given(st.sampled_from([1, 2, 3]), st.data())
def test_decimals_is_what_orjson_writes_for_the_rounded_float(places: int, data: st.DataObject) -> None:
    """Below 10^(15 - places), where a double still tells every such decimal apart, the text is the same as orjson's
    shortest form of `round(x, places)`: fixed text changes nothing there, it only avoids exponents above."""
    bound = 10.0 ** (15 - places)
    x = data.draw(st.floats(min_value=-bound, max_value=bound))
    expected = orjson.dumps(round(x, places) + 0.0)  # + 0.0 turns -0.0 into 0.0, as the encoder does
    assert decimals(x, places).encode() == expected


@given(st.integers())
@example(2**64)
@example(-(2**63) - 1)
@example(2**5000)
@example(-(2**5000))
def test_any_integer_is_written_exactly_or_saturated(n: int) -> None:
    """orjson alone refuses integers outside 64 bits; a line must still be written. Beyond Python's 4300-digit
    int-to-text limit (no counter comes near) the value saturates at the 64-bit bounds."""
    line = line_of(0.0, 0.0, "h", None, None, None, None, IoRate(read=n, write=0), None, False, None, 0.0, None)
    written = decode(encode_line(line))["io"]["read"]
    if n.bit_length() < 4000:
        assert written == n
    else:
        assert written == (2**64 - 1 if n > 0 else -(2**63))


def test_lone_surrogates_are_replaced_not_fatal() -> None:
    """A host name or path decoded with surrogateescape, or a `\\ud800` in a container's config, keeps the line."""
    line = line_of(0.0, 0.0, "host\udcff", None, None, None, (Disk("/tmp/\ud800x", 1, 0, 1),), None, None, False,
                   None, 0.0, None)
    document = decode(encode_line(line))
    assert document["host"] == "host\ufffd"
    assert document["disk"][0]["path"] == "/tmp/\ufffdx"


@given(st.binary(max_size=40))
@example(b"nu\xff")
@example(b"caf\xc3\xa9 \xe9\x80")  # valid UTF-8, then a byte that starts nothing, then a stray continuation byte
@example(b"\xed\xa0\x80")  # a surrogate encoded in UTF-8: not valid UTF-8
def test_text_python_decoded_with_surrogateescape_is_written_as_a_utf_8_decoder_reads_its_bytes(raw: bytes) -> None:
    """docs/behaviour.md §3.1: an undecodable byte of a path or an argument (which Python decodes to a surrogate)
    is written as U+FFFD, the rest as it was: what decoding the bytes with replacement characters gives."""
    line = line_of(0.0, 0.0, raw.decode("utf-8", "surrogateescape"), None, None, None, None, None, None, False,
                   None, 0.0, None)
    assert decode(encode_line(line))["host"] == raw.decode("utf-8", "replace")


@given(st.one_of(any_float, st.floats(min_value=-1e15, max_value=1e15), st.integers(-(10**15), 10**15)),
       st.sampled_from([1, 2, 3]))
@example(99999999999999.95, 1)
@example(123456789012345.67, 1)
@example(12345678901234.567, 2)
@example(1234567890123.4567, 3)
@example(-0.04, 1)
@example(5, 1)
@example(1762250000.1235, 3)
@example(999999999999.9995, 3)
def test_a_decimal_left_to_orjson_is_written_as_its_text(x: float, places: int) -> None:
    """The encoder hands orjson the rounded float where that gives the same bytes as `decimals`: it must, everywhere
    (`t` has three decimals, `self_cpu` two, a percentage one)."""
    share = CpuShare(user=x, system=0.0, iowait=0.0, steal=0.0, busiest=0.0)
    line = line_of(x if places == 3 else 0.0, 0.0, "h", None, share, None, None, None, None, False, None,
                   x if places == 2 else 0.0, None)
    written = {3: b'"t":', 2: b'"self_cpu":', 1: b'"user":'}[places]
    assert written + decimals(x, places).encode() + (b"," if places != 2 else b"}") in encode_line(line)


@given(st.integers(2**64 - 2, 2**64 + 2) | st.integers(-(2**63) - 2, -(2**63) + 2))
def test_an_integer_beyond_64_bits_in_any_section_is_still_written(n: int) -> None:
    """orjson writes integers within 64 bits only: one beyond them anywhere in the line is written all the same."""
    container = ContainerSample(name="c", mem=n, cpu=0.0, mem_nocache=0, oom_kill=n, pids=n, io=IoRate(0, n))
    line = line_of(1.0, 1.0, "h", n, None, Mem(n, 0, 0, 0, 0, 0, n), (Disk("/", n, 0, 0),), IoRate(n, 0),
                   NetRate(0, n), True, (container,), 0.5, None)
    document = decode(encode_line(line))
    assert document["cores"] == document["mem"]["total"] == document["mem"]["rss"] == document["disk"][0]["total"] == n
    assert document["io"]["read"] == document["net"]["out"] == document["containers"][0]["io"]["write"] == n
    assert document["containers"][0]["mem"] == document["containers"][0]["oom_kill"] == n
