"""Lines for the tests, built one way: `line(...)` is the `Sample` a sampler makes of its values (its containers in
the order it writes them, by name; no `containers` key without --cgroup); `text_of` its JSON text written with the
standard library (not with the code under test); `samples` and `written` draw lines as a sampler writes them, within
the bounds a reader takes."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import strategies as st

from orca.sample.line_format import (
    UNSET,
    CgroupSample,
    CommandExit,
    ContainerSample,
    CpuShare,
    Disk,
    IoRate,
    Mem,
    NetRate,
    PressureShare,
    RunSample,
    Sample,
)


def line(
    t: float,
    dt: float,
    host: str,
    cores: int | None,
    cpu: CpuShare | None,
    mem: Mem | None,
    disk: tuple[Disk, ...] | None,
    io: IoRate | None,
    net: NetRate | None,
    containers_enabled: bool,
    containers: tuple[ContainerSample, ...] | None,
    self_cpu: float | None,
    pressure: PressureShare | None,
    cgroup: CgroupSample | None = None,
    run: RunSample | None = None,
    start: float | None = None,
) -> Sample:
    written = None if containers is None else tuple(sorted(containers, key=lambda entry: entry.name))
    return Sample(
        v=1, t=t, dt=dt, host=host, cores=cores, cpu=cpu, mem=mem, disk=disk, io=io, net=net,
        containers=written if containers_enabled else UNSET, self_cpu=self_cpu, pressure=pressure, cgroup=cgroup,
        run=run, start=start,
    )


def text_of(sample: Sample, left_out: frozenset[str] = frozenset()) -> str:
    """The line of `sample`, compact as the sampler writes it; the keys in `left_out` are left out where their
    value is None (as the sampler leaves out `pressure` and a container's extensions), at any depth."""
    return json.dumps(_without(msgspec.to_builtins(sample), left_out), separators=(",", ":"), ensure_ascii=False)


def _without(value: Any, left_out: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {key: _without(item, left_out) for key, item in value.items()
                if not (item is None and key in left_out)}
    if isinstance(value, list | tuple):
        return [_without(item, left_out) for item in value]
    return value


# Values as a line carries them, up to the bounds a reader takes (docs/line.md): percentages with
# one decimal (a container may use many cores), times with three, self_cpu with two, counts up to 2^63 - 1 and a file
# system's sizes beyond, text without lone surrogates (which the encoder replaces).
tenths = st.integers(0, 10**7).map(lambda n: n / 10)
times = st.integers(0, 10**13).map(lambda n: n / 1000)
intervals = st.integers(0, 10**11).map(lambda n: n / 1000)
hundredths = st.integers(0, 10**11).map(lambda n: n / 100)
counts = st.integers(0, 2**63 - 1)
sizes = st.integers(0, 2**70) | st.integers(0, 10**400)
texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=20)

cpu_shares = st.builds(CpuShare, tenths, tenths, tenths, tenths, tenths)
mems = st.builds(Mem, *[counts] * 7)
disks = st.builds(Disk, texts, sizes, sizes, sizes)
io_rates = st.builds(IoRate, counts, counts)
net_rates = st.builds(NetRate, counts, counts)
containers = st.builds(
    ContainerSample, name=texts, mem=counts, cpu=st.none() | tenths, mem_nocache=st.none() | counts,
    oom_kill=st.none() | counts, throttled=st.none() | tenths, mem_max=st.none() | counts,
    pids=st.none() | st.integers(0, 2**22), io=st.none() | io_rates, net=st.none() | net_rates,
)
pressures = st.builds(PressureShare, cpu=st.none() | tenths, memory=st.none() | tenths, io=st.none() | tenths)
cgroups = st.builds(
    CgroupSample, mem=st.none() | counts, mem_max=st.none() | counts, cpu=st.none() | tenths,
    cpu_max=st.none() | st.integers(0, 10**7).map(lambda n: n / 1000), throttled=st.none() | tenths,
    oom_kill=st.none() | counts, pids=st.none() | counts, pids_max=st.none() | counts,
)
exits = st.builds(
    CommandExit, code=st.none() | st.integers(0, 255), signal=st.none() | st.integers(1, 64), error=st.none() | texts,
    wall=st.none() | intervals, user=st.none() | hundredths, system=st.none() | hundredths,
    max_rss=st.none() | counts,
)
runs = st.builds(
    RunSample, cpu=st.none() | tenths, procs=st.none() | counts,
    command=st.none() | st.lists(texts, max_size=3).map(tuple), argc=st.none() | counts, exit=st.none() | exits,
)
samples = st.builds(
    line,
    t=times,
    dt=intervals,
    host=texts,
    cores=st.none() | st.integers(0, 4096),
    cpu=st.none() | cpu_shares,
    mem=st.none() | mems,
    disk=st.none() | st.lists(disks, max_size=3).map(tuple),
    io=st.none() | io_rates,
    net=st.none() | net_rates,
    containers_enabled=st.just(True),
    containers=st.none() | st.lists(containers, max_size=4).map(tuple),
    self_cpu=st.none() | hundredths,
    pressure=st.none() | pressures,
    cgroup=st.none() | cgroups,
    run=st.none() | runs,
    start=st.none() | times,
)
"""Lines within the bounds a reader takes, every section drawn (`containers` as with --cgroup)."""
LEFT_OUT = ["pressure", "containers", "cpu", "mem_nocache", "oom_kill", "throttled", "mem_max", "pids", "io", "net",
            "memory", "cores", "self_cpu", "cgroup", "cpu_max", "pids_max", "run", "command", "argc", "exit", "code",
            "signal", "error", "wall", "user", "system", "max_rss", "start"]
"""Keys a line may leave out rather than write `null`: what a reader reads as None either way."""
left_out = st.frozensets(st.sampled_from(LEFT_OUT))
written = st.builds(text_of, samples, left_out).map(str.encode)
"""Lines as a sampler writes them, without their newline."""
