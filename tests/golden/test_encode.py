"""Whole lines, byte for byte, worked out by hand (docs/behaviour.md §3.1-3.10).

The expected bytes are written from docs/behaviour.md and docs/line.md's example line (whose numbers the snapshots
below are chosen to reproduce), never from running the encoder.
"""

from __future__ import annotations

from orca.sample.compute.build import build_line
from orca.sample.compute.encode import encode_line
from orca.sample.compute.snapshot import ContainerReading, DiskReading, Snapshot
from orca.sample.line_format import UNSET, ContainerSample, CpuShare, IoRate, NetRate, PressureShare, Sample
from orca.sample.parse.diskstats import DiskIo, DiskStats
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.pressure import Pressure, PressureLine
from orca.sample.parse.proc_stat import parse
from tests.golden.proc_stat_texts import CUR, PREV

POSTGRES_ID = "a" * 64
API_ID = "b" * 64


def pressure(total_us: int) -> Pressure:
    return Pressure(some=PressureLine(0.0, 0.0, 0.0, total_us), full=None)


PREV_SNAPSHOT = Snapshot(
    monotonic_ns=1_000_000_000_000,
    wall=1762250000.0,
    host="ip-10-0-1-5",
    stat=parse(PREV).unwrap(),
    meminfo=MemInfo({"MemTotal": 8053063680, "MemAvailable": 5000000000}),
    rss_bytes=1,
    disks=(),
    diskstats=DiskStats((DiskIo("vda", 1000, 5000), DiskIo("vda1", 1000, 5000), DiskIo("loop0", 0, 0))),
    whole_disks=frozenset({"vda"}),
    net=NetDev({"eth0": (10_000_000, 20_000_000)}),
        containers_enabled=True,
    containers=(ContainerReading(POSTGRES_ID, "postgres", 1, {}, None, 1_000_000),),
    pressure={"cpu": pressure(1_000_000), "memory": pressure(0), "io": pressure(7_000)},
    self_cpu=0.1,
)

# 2.5 s later (monotonic), at wall clock 1762250002.5:
CUR_SNAPSHOT = Snapshot(
    monotonic_ns=1_002_500_000_000,
    wall=1762250002.5,
    host="ip-10-0-1-5",
    stat=parse(CUR).unwrap(),  # cpu: 41.0, 10.3, 3.3, 2.0, busiest 84.0 (worked out in tests/golden/test_cpu.py)
    # used = 8053063680 - 4831838208 = 3221225472; cache = Active(file) + Inactive(file) = 2 × 1073741824.
    meminfo=MemInfo({"MemTotal": 8053063680, "MemFree": 1, "MemAvailable": 4831838208, "Cached": 2500000000,
                     "Active(file)": 1073741824, "Inactive(file)": 1073741824, "SwapTotal": 0, "SwapFree": 0}),
    rss_bytes=2952790016,
    disks=(
        # 13107200 blocks of 4096 = 53687091200; used (13107200 - 10747904) × 4096 = 9663676416;
        # free 10747904 × 4096 = 44023414784.
        DiskReading("/tmp", 64769, f_blocks=13107200, f_bfree=10747904, f_bavail=10747904, f_frsize=4096),
        DiskReading("/tmp/spill", 64769, f_blocks=13107200, f_bfree=10747900, f_bavail=10747900, f_frsize=4096),
        # 1000 × 1024 = 1024000; used (1000 - 250) × 1024 = 768000; free 200 × 1024 = 204800.
        DiskReading("/data", 64770, f_blocks=1000, f_bfree=250, f_bavail=200, f_frsize=1024),
    ),
    # vda: +5120 sectors read × 512 / 2.5 s = 1048576; +256000 written × 512 / 2.5 = 52428800.
    # vda1 (a partition) and loop0 (virtual) are not whole disks: not counted.
    diskstats=DiskStats((DiskIo("vda", 6120, 261000), DiskIo("vda1", 6120, 261000), DiskIo("loop0", 999, 999))),
    whole_disks=frozenset({"vda"}),
    # eth0: +3276800 received / 2.5 = 1310720, +1638400 sent / 2.5 = 655360; docker0 appears: its baseline.
    net=NetDev({"eth0": (13_276_800, 21_638_400), "docker0": (5_000_000, 5_000_000)}),
        containers_enabled=True,
    containers=(
        # postgres: mem 500000000 - 88000000 = 412000000; mem_nocache 500000000 - 88000000 - 12000000 = 400000000;
        # cpu +1250000 µs over 2.5 s = 50.0 % of one core.
        ContainerReading(POSTGRES_ID, "postgres", 500_000_000, {"inactive_file": 88_000_000, "active_file": 12_000_000},
                         {"oom": 0, "oom_kill": 0}, 2_250_000),
        # api: new this line, so cpu 0.0; no memory.events, so no oom_kill. Sorted before postgres.
        ContainerReading(API_ID, "api", 1000, {}, None, 777),
    ),
    # cpu +250000 µs stalled over 2.5 s = 10.0 %; io +40000 µs = 1.6 %; memory's file unreadable now: left out.
    pressure={"cpu": pressure(1_250_000), "io": pressure(47_000)},
    self_cpu=0.4251,
)

EXPECTED_LINE = (
    b'{"v":1,"t":1762250002.5,"dt":2.5,"host":"ip-10-0-1-5","cores":2,'
    b'"cpu":{"user":41.0,"system":10.3,"iowait":3.3,"steal":2.0,"busiest":84.0},'
    b'"mem":{"total":8053063680,"used":3221225472,"available":4831838208,"cache":2147483648,'
    b'"swap_total":0,"swap_used":0,"rss":2952790016},'
    b'"disk":[{"path":"/tmp","total":53687091200,"used":9663676416,"free":44023414784},'
    b'{"path":"/data","total":1024000,"used":768000,"free":204800}],'
    b'"io":{"read":1048576,"write":52428800},"net":{"in":1310720,"out":655360},'
    b'"containers":[{"name":"api","mem":1000,"cpu":0.0,"mem_nocache":1000},'
    b'{"name":"postgres","mem":412000000,"cpu":50.0,"mem_nocache":400000000,"oom_kill":0}],'
    b'"self_cpu":0.43,"pressure":{"cpu":10.0,"io":1.6}}'
)


def test_a_whole_line_from_two_snapshots() -> None:
    assert encode_line(build_line(PREV_SNAPSHOT, CUR_SNAPSHOT)) == EXPECTED_LINE


def test_a_line_with_every_section_unreadable() -> None:
    """docs/behaviour.md §3.10: unreadable sections are null; without --cgroup no `containers`, without PSI no
    `pressure`."""
    line = Sample(v=1, t=1762250000.0004, dt=0.2004, host="h", cores=None, cpu=None, mem=None, disk=None, io=None,
                  net=None, containers=UNSET, self_cpu=0.004, pressure=None)
    assert encode_line(line) == (
        b'{"v":1,"t":1762250000.0,"dt":0.2,"host":"h","cores":null,"cpu":null,"mem":null,"disk":null,'
        b'"io":null,"net":null,"self_cpu":0.0}'
    )


def test_containers_null_when_the_cgroup_tree_is_unreadable_and_pressure_with_nothing_known() -> None:
    line = Sample(v=1, t=1.0, dt=5.0, host="h", cores=0, cpu=None, mem=None, disk=(), io=None, net=None,
                containers=None, self_cpu=12.006, pressure=PressureShare())
    assert encode_line(line) == (
        b'{"v":1,"t":1.0,"dt":5.0,"host":"h","cores":0,"cpu":null,"mem":null,"disk":[],'
        b'"io":null,"net":null,"containers":null,"self_cpu":12.01,"pressure":{}}'
    )


def test_decimals_rounding_and_the_values_json_cannot_carry() -> None:
    """One decimal for percentages: 0.04 -> 0.0, 0.06 -> 0.1, 99.96 -> 100.0; -0.01 would print -0.0 and NaN
    is not JSON: both are 0.0 (the documented API's `fixed1`). Three decimals for t and dt, two for self_cpu."""
    line = Sample(v=1, t=1762250000.1234, dt=4.99951, host="h", cores=2,
                  cpu=CpuShare(user=0.04, system=0.06, iowait=99.96, steal=-0.01, busiest=float("nan")),
                  mem=None, disk=None, io=None, net=None,
                  containers=(ContainerSample(name="x", mem=0, cpu=float("inf"), mem_nocache=0),), self_cpu=0.006,
                  pressure=PressureShare(cpu=12.34, memory=None, io=0.06))
    assert encode_line(line) == (
        b'{"v":1,"t":1762250000.123,"dt":5.0,"host":"h","cores":2,'
        b'"cpu":{"user":0.0,"system":0.1,"iowait":100.0,"steal":0.0,"busiest":0.0},'
        b'"mem":null,"disk":null,"io":null,"net":null,'
        b'"containers":[{"name":"x","mem":0,"cpu":0.0,"mem_nocache":0}],'
        b'"self_cpu":0.01,"pressure":{"cpu":12.3,"io":0.1}}'
    )


def test_the_host_and_paths_are_json_strings() -> None:
    """Quotes, backslashes and control characters are escaped, non-ASCII kept as UTF-8 (as orjson writes)."""
    line = Sample(v=1, t=0.0, dt=0.0, host='a"b\\c\n', cores=None, cpu=None, mem=None, disk=None, io=None, net=None,
                containers=UNSET, self_cpu=0.0, pressure=None)
    assert encode_line(line).startswith(b'{"v":1,"t":0.0,"dt":0.0,"host":"a\\"b\\\\c\\n","cores":null')
    accented = Sample(v=1, t=0.0, dt=0.0, host="hôte", cores=None, cpu=None, mem=None, disk=None, io=None, net=None,
                    containers=UNSET, self_cpu=0.0, pressure=None)
    assert '"host":"hôte"'.encode() in encode_line(accented)


def test_a_container_entry_with_every_field_is_the_readmes() -> None:
    """docs/line.md's example entry: the new fields after oom_kill, in the order throttled, mem_max, pids, io, net;
    throttled with one decimal (61.96 → 62.0), io and net as `{"read","write"}` and `{"in","out"}` like the host's.
    A field that is None is left out, the others keep their order."""
    full = ContainerSample(name="postgres", mem=412000000, cpu=12.5, mem_nocache=380000000, oom_kill=0,
                           throttled=61.96, mem_max=536870912, pids=14, io=IoRate(read=0, write=3276800),
                           net=NetRate(received=524288, sent=1048576))
    sparse = ContainerSample(name="ui", mem=1, cpu=0.0, mem_nocache=1, oom_kill=None, throttled=None, mem_max=None,
                             pids=3, io=None, net=NetRate(received=0, sent=0))
    line = Sample(v=1, t=1.0, dt=5.0, host="h", cores=None, cpu=None, mem=None, disk=None, io=None, net=None,
                containers=(full, sparse), self_cpu=0.0, pressure=None)
    assert encode_line(line) == (
        b'{"v":1,"t":1.0,"dt":5.0,"host":"h","cores":null,"cpu":null,"mem":null,"disk":null,"io":null,"net":null,'
        b'"containers":[{"name":"postgres","mem":412000000,"cpu":12.5,"mem_nocache":380000000,"oom_kill":0,'
        b'"throttled":62.0,"mem_max":536870912,"pids":14,"io":{"read":0,"write":3276800},'
        b'"net":{"in":524288,"out":1048576}},'
        b'{"name":"ui","mem":1,"cpu":0.0,"mem_nocache":1,"pids":3,"net":{"in":0,"out":0}}],"self_cpu":0.0}'
    )
