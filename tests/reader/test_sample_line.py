"""The sample line parser on lines written by hand: docs/line.md's example, nulls, extensions, and bad lines."""

from __future__ import annotations

import pytest
from returns.result import Failure, Success

from orca.sample.line_format import ContainerSample, CpuShare, Disk, IoRate, Mem, NetRate, PressureShare, Sample
from orca.sample.readback.sample_line import looks_like_sample, parse

# docs/line.md's example line as it was before `throttled` and the sections after `pressure`, on one line.
EXAMPLE_LINE = (
    '{"v":1,"t":1796016198.738,"dt":5.0,"host":"ip-10-0-1-5","cores":4,'
    '"cpu":{"user":61.2,"system":4.1,"iowait":0.3,"steal":0.0,"busiest":99.0},'
    '"mem":{"total":8053063680,"used":3221225472,"available":4831838208,"cache":2147483648,"swap_total":0,'
    '"swap_used":0,"rss":2952790016},'
    '"disk":[{"path":"/tmp","total":53687091200,"used":9663676416,"free":44023414784}],'
    '"io":{"read":1048576,"write":52428800},"net":{"in":1310720,"out":655360},'
    '"containers":[{"name":"postgres","mem":412000000,"cpu":12.5,"mem_nocache":380000000,"oom_kill":0}],'
    '"self_cpu":0.42,"pressure":{"cpu":1.2,"memory":0.0,"io":3.4}}'
)

EXAMPLE_SAMPLE = Sample(
    v=1,
    t=1796016198.738,
    dt=5.0,
    host="ip-10-0-1-5",
    cores=4,
    cpu=CpuShare(user=61.2, system=4.1, iowait=0.3, steal=0.0, busiest=99.0),
    mem=Mem(
        total=8053063680,
        used=3221225472,
        available=4831838208,
        cache=2147483648,
        swap_total=0,
        swap_used=0,
        rss=2952790016,
    ),
    disk=(Disk(path="/tmp", total=53687091200, used=9663676416, free=44023414784),),
    io=IoRate(read=1048576, write=52428800),
    net=NetRate(received=1310720, sent=655360),
    containers=(ContainerSample(name="postgres", mem=412000000, cpu=12.5, mem_nocache=380000000, oom_kill=0),),
    self_cpu=0.42,
    pressure=PressureShare(cpu=1.2, memory=0.0, io=3.4),
)

# A line as the sampler wrote it before the extensions (docs/behaviour.md §3.8, §3.9): no extensions, `containers` with
# name and mem only, every section it could not read
# written null.
SEED_LINE = (
    '{"v":1,"t":1700000000.5,"dt":0.201,"host":"h","cores":null,"cpu":null,"mem":null,"disk":null,"io":null,'
    '"net":null,"containers":[{"name":"db","mem":7}],"self_cpu":0.0}'
)


def test_the_example_line_reads_to_every_field() -> None:
    assert parse(EXAMPLE_LINE) == Success(EXAMPLE_SAMPLE)


def test_bytes_with_newline_and_the_stdout_prefix_read_the_same() -> None:
    assert parse(("orca-sample " + EXAMPLE_LINE + "\n").encode()) == Success(EXAMPLE_SAMPLE)
    assert parse("orca-sample " + EXAMPLE_LINE) == Success(EXAMPLE_SAMPLE)


def test_null_sections_are_none_and_seed_containers_lack_the_extensions() -> None:
    sample = parse(SEED_LINE).unwrap()
    assert (sample.cores, sample.cpu, sample.mem, sample.disk, sample.io, sample.net) == (None,) * 6
    assert sample.containers == (ContainerSample(name="db", mem=7, cpu=None, mem_nocache=None, oom_kill=None),)
    assert sample.pressure is None
    assert (sample.t, sample.dt, sample.self_cpu) == (1700000000.5, 0.201, 0.0)


def test_unknown_keys_are_ignored_and_absent_keys_are_none() -> None:
    line = '{"v":1,"t":1.0,"dt":2,"host":"h","gpu":{"util":99},"pressure":{"io":0.5},"mem":null}'
    sample = parse(line).unwrap()
    assert sample.dt == 2.0
    assert sample.pressure == PressureShare(cpu=None, memory=None, io=0.5)
    assert (sample.cpu, sample.containers, sample.self_cpu) == (None, None, None)


TIME = "a finite number from 0 to 10,000,000,000"
PERCENT = "a finite number from 0 to 1,000,000"
COUNT = "a whole number from 0 to 9,223,372,036,854,775,807"
"""What a field must be, as a refusal says it (docs/line.md, "Reading the lines yourself")."""


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"v":2,"t":1.0,"dt":5.0,"host":"h"}', "v is not 1"),
        ('{"v":true,"t":1.0,"dt":5.0,"host":"h"}', "v is not 1"),
        ('{"v":"1","t":1.0,"dt":5.0,"host":"h"}', "v is not 1"),
        ('{"t":1.0,"dt":5.0,"host":"h"}', "v is not 1"),
        ('{"v":1,"t":-1.0,"dt":5.0,"host":"h"}', f"t is not {TIME}"),
        ('{"v":1,"t":1e400,"dt":5.0,"host":"h"}', f"t is not {TIME}"),  # beyond what a double holds
        ('{"v":1,"t":1.0,"dt":5.0,"host":7}', "host is not text"),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h","cores":2.0}', f"cores is not {COUNT}"),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h","cpu":{"user":1.0}}', f"cpu.system is not {PERCENT}"),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h","io":{"read":-1,"write":0}}', f"io.read is not {COUNT}"),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h","disk":{"path":"/"}}', "disk is not a JSON array"),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h","disk":[null]}', "disk[] is not a JSON object"),
        (
            '{"v":1,"t":1.0,"dt":5.0,"host":"h","containers":[{"name":"a","mem":1,"cpu":-0.1}]}',
            f"containers[].cpu is not {PERCENT}",
        ),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h","net":{"in":true,"out":0}}', f"net.in is not {COUNT}"),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h","pressure":[1]}', "pressure is not a JSON object"),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h","containers":[{"name":"a","mem":1,"io":{"read":1}}]}',
         f"containers[].io.write is not {COUNT}"),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h","disk":[{"path":"/","total":1,"used":1.5,"free":0}]}',
         "disk[].used is not a whole number >= 0"),
        ('[1,2]', "not a JSON object"),
        ('{"v":1,"t":1.0,"dt":5.0,"host":"h"', "not JSON"),
        ('{"v":1,"t":NaN,"dt":5.0,"host":"h"}', "not JSON"),
        ("INFO: step 3 of 7", "not JSON"),
        ("", "not JSON"),
    ],
)
def test_bad_lines_say_why(line: str, reason: str) -> None:
    result = parse(line)
    assert isinstance(result, Failure)
    assert result.failure().reason == reason
    assert result.failure().source == "sample line"


# What a sampler can write (docs/line.md): numbers beyond are not a sample's.
@pytest.mark.parametrize(
    ("field", "reason"),
    [
        ('"t":1e12', f"t is not {TIME}"),
        ('"t":1180591620717411303424', f"t is not {TIME}"),  # 2^70
        ('"dt":1e308', "dt is not a finite number from 0 to 100,000,000"),
        ('"dt":100000000.001', "dt is not a finite number from 0 to 100,000,000"),
        ('"cpu":{"user":1e308,"system":0,"iowait":0,"steal":0,"busiest":0}',
         f"cpu.user is not {PERCENT}"),
        ('"pressure":{"io":1000000.1}', f"pressure.io is not {PERCENT}"),
        ('"self_cpu":1e300', "self_cpu is not a finite number from 0 to 1,000,000,000"),
        ('"io":{"read":9223372036854775808,"write":0}',
         f"io.read is not {COUNT}"),
        ('"containers":[{"name":"a","mem":1' + "0" * 400 + "}]",
         f"containers[].mem is not {COUNT}"),
    ],
)
def test_numbers_beyond_what_a_sampler_writes_are_refused(field: str, reason: str) -> None:
    result = parse('{"v":1,"t":1.0,"dt":5.0,"host":"h",' + field + "}")
    assert isinstance(result, Failure) and result.failure().reason == reason


def test_the_bounds_themselves_are_read() -> None:
    line = ('{"v":1,"t":10000000000,"dt":100000000,"host":"h","cores":9223372036854775807,'
            '"cpu":{"user":1000000,"system":0,"iowait":0,"steal":0,"busiest":0},"self_cpu":1000000000,'
            # A network file system may report 8 EiB or more: a file system's sizes have no bound.
            '"disk":[{"path":"/efs","total":' + "9" * 40 + ',"used":0,"free":' + "9" * 40 + "}]}")
    sample = parse(line).unwrap()
    assert (sample.t, sample.dt, sample.cores, sample.self_cpu) == (1e10, 1e8, 2**63 - 1, 1e9)
    assert sample.cpu is not None and sample.cpu.user == 1e6
    assert sample.disk is not None and sample.disk[0].free == int("9" * 40)


def test_a_deeply_nested_key_it_does_not_know_is_passed_over_or_refused_never_raised() -> None:
    """How deep msgspec follows a key it skips depends on the interpreter (Python 3.13 allows more): either way the
    line is read without that key or refused with the reason, never an exception."""
    result = parse('{"v":1,"t":1.0,"dt":5.0,"host":"h","x":' + "[" * 50_000 + "]" * 50_000 + "}")
    assert result == Success(Sample(v=1, t=1.0, dt=5.0, host="h")) or (
        isinstance(result, Failure) and result.failure().reason == "nested too deeply"
    )


def test_which_log_lines_are_meant_as_samples() -> None:
    assert looks_like_sample("orca-sample not json")
    assert looks_like_sample(b'{"v":1}')
    assert not looks_like_sample("2026-11-30 INFO {json later}")
    assert not looks_like_sample(b"")
