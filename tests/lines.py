"""Lines for tests written in the order of their keys: `line(t, dt, host, cores, cpu, mem, disk, io, net,
containers_enabled, containers, self_cpu, pressure)` is the `Sample` the sampler would make of those values, with
its containers in the order it writes them (by name), and no `containers` without --cgroup."""

from __future__ import annotations

from orca.sample.line_format import (
    UNSET,
    ContainerSample,
    CpuShare,
    Disk,
    IoRate,
    Mem,
    NetRate,
    PressureShare,
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
    self_cpu: float,
    pressure: PressureShare | None,
) -> Sample:
    written = None if containers is None else tuple(sorted(containers, key=lambda entry: entry.name))
    return Sample(
        v=1, t=t, dt=dt, host=host, cores=cores, cpu=cpu, mem=mem, disk=disk, io=io, net=net,
        containers=written if containers_enabled else UNSET, self_cpu=self_cpu, pressure=pressure,
    )


def container(
    name: str,
    mem: int,
    cpu: float,
    mem_nocache: int,
    oom_kill: int | None,
    throttled: float | None = None,
    mem_max: int | None = None,
    pids: int | None = None,
    io: IoRate | None = None,
    net: NetRate | None = None,
) -> ContainerSample:
    return ContainerSample(
        name=name, mem=mem, cpu=cpu, mem_nocache=mem_nocache, oom_kill=oom_kill, throttled=throttled,
        mem_max=mem_max, pids=pids, io=io, net=net,
    )


def pressure_share(cpu: float | None, memory: float | None, io: float | None) -> PressureShare:
    return PressureShare(cpu=cpu, memory=memory, io=io)
