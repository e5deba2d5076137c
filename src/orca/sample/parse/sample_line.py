"""One sample line read back: the JSON the sampler writes (README, "The line") to a typed `Sample`.

Tolerant as the README's "Reading the lines back" asks: the `orca-sample ` prefix of `--out -` is stripped, keys
this version does not know are ignored, the extensions (`containers[].cpu`, `mem_nocache`, `oom_kill`,
`pressure`) are read when present. Strict about values: a line whose `v` is not 1, a section of the wrong shape, or
a number that is negative where the field cannot be, is not a sample (JSON itself has no NaN or Infinity).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import orjson
from returns.result import Failure, Result, Success

from orca.sample.compute.line import CpuShare, Disk, IoRate, Mem, NetRate, PressureShare
from orca.sample.compute.names import PREFIX
from orca.sample.parse.errors import ParseError

SOURCE = "sample line"
_PREFIX_BYTES = PREFIX.encode()
_FORMAT_VERSION = 1
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class ContainerSample:
    """One element of a line's `containers`; the fields after `mem` are extensions, None when absent."""

    name: str
    mem: int
    cpu: float | None
    """Percent of one core over `dt`."""
    mem_nocache: int | None
    oom_kill: int | None
    """Processes killed for memory in the container so far."""


@dataclass(frozen=True, slots=True)
class Sample:
    """Every field of one line. A section written `null`, or absent (`containers` without `--cgroup`, `pressure`
    on a kernel without pressure stall information), is None."""

    t: float
    """Unix seconds of the readings."""
    dt: float
    """Seconds since the previous line's readings; rates are over it."""
    host: str
    cores: int | None
    cpu: CpuShare | None
    mem: Mem | None
    disk: tuple[Disk, ...] | None
    io: IoRate | None
    net: NetRate | None
    containers: tuple[ContainerSample, ...] | None
    self_cpu: float | None
    """The sampler's own CPU seconds so far."""
    pressure: PressureShare | None


class _NotASample(Exception):
    """Raised inside this module only, turned into a `ParseError` by `parse`."""


def looks_like_sample(raw: str | bytes) -> bool:
    """Whether a log line was meant as a sample: it starts with the prefix or with `{`. A pod's log mixes the run's
    own output (not samples, not errors) with samples; only the latter count as bad when they don't parse.

    >>> [looks_like_sample(s) for s in ('orca-sample {"v":1}', '{"v":1}', 'INFO started', b'{')]
    [True, True, False, True]
    """
    if isinstance(raw, str):
        return raw.startswith((PREFIX, "{"))
    return raw.startswith((_PREFIX_BYTES, b"{"))


def parse(raw: str | bytes) -> Result[Sample, ParseError]:
    """One line (with or without its newline and the `orca-sample ` prefix) to a `Sample`; never raises.

    >>> line = ('orca-sample {"v":1,"t":1796016198.738,"dt":5.0,"host":"a","cores":2,"cpu":null,"mem":null,'
    ...         '"disk":null,"io":{"read":1,"write":2},"net":null,"self_cpu":0.42,"future":[1]}')
    >>> sample = parse(line).unwrap()
    >>> (sample.t, sample.host, sample.cpu, sample.io, sample.self_cpu, sample.pressure)
    (1796016198.738, 'a', None, IoRate(read=1, write=2), 0.42, None)
    >>> parse('{"v":2,"t":1}').failure().reason
    'v is not 1'
    """
    raw = raw.removeprefix(PREFIX) if isinstance(raw, str) else raw.removeprefix(_PREFIX_BYTES)
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return Failure(ParseError(SOURCE, "not JSON"))
    try:
        return Success(_sample(document))
    except _NotASample as why:
        return Failure(ParseError(SOURCE, str(why)))


def _sample(document: object) -> Sample:
    if not isinstance(document, dict):
        raise _NotASample("not a JSON object")
    if document.get("v") != _FORMAT_VERSION or isinstance(document.get("v"), bool):
        raise _NotASample("v is not 1")
    host = document.get("host")
    if not isinstance(host, str):
        raise _NotASample("host is not text")
    cores = document.get("cores")
    self_cpu = document.get("self_cpu")
    return Sample(
        t=_share(document.get("t"), "t"),
        dt=_share(document.get("dt"), "dt"),
        host=host,
        cores=None if cores is None else _count(cores, "cores"),
        cpu=_section(document.get("cpu"), _cpu),
        mem=_section(document.get("mem"), _mem),
        disk=_section(document.get("disk"), _disks),
        io=_section(document.get("io"), _io),
        net=_section(document.get("net"), _net),
        containers=_section(document.get("containers"), _containers),
        self_cpu=None if self_cpu is None else _share(self_cpu, "self_cpu"),
        pressure=_section(document.get("pressure"), _pressure),
    )


def _count(value: object, name: str) -> int:
    """A byte count or a number of things: a whole JSON number, never negative."""
    if type(value) is not int or value < 0:
        raise _NotASample(f"{name} is not a whole number >= 0")
    return value


def _share(value: object, name: str) -> float:
    """A percentage or a number of seconds: a finite JSON number, never negative."""
    if type(value) is float:
        if value >= 0.0 and math.isfinite(value):
            return value
    elif type(value) is int and value >= 0:
        return float(value)
    raise _NotASample(f"{name} is not a finite number >= 0")


def _section(value: object, read: Callable[[object], _T]) -> _T | None:
    return None if value is None else read(value)


def _fields(value: object, name: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise _NotASample(f"{name} is not a JSON object")
    return value


def _cpu(value: object) -> CpuShare:
    cpu = _fields(value, "cpu")
    return CpuShare(
        user=_share(cpu.get("user"), "cpu.user"),
        system=_share(cpu.get("system"), "cpu.system"),
        iowait=_share(cpu.get("iowait"), "cpu.iowait"),
        steal=_share(cpu.get("steal"), "cpu.steal"),
        busiest=_share(cpu.get("busiest"), "cpu.busiest"),
    )


def _mem(value: object) -> Mem:
    mem = _fields(value, "mem")
    return Mem(
        total=_count(mem.get("total"), "mem.total"),
        used=_count(mem.get("used"), "mem.used"),
        available=_count(mem.get("available"), "mem.available"),
        cache=_count(mem.get("cache"), "mem.cache"),
        swap_total=_count(mem.get("swap_total"), "mem.swap_total"),
        swap_used=_count(mem.get("swap_used"), "mem.swap_used"),
        rss=_count(mem.get("rss"), "mem.rss"),
    )


def _disks(value: object) -> tuple[Disk, ...]:
    if not isinstance(value, list):
        raise _NotASample("disk is not a JSON array")
    return tuple(_disk(entry) for entry in value)


def _disk(value: object) -> Disk:
    disk = _fields(value, "disk[]")
    path = disk.get("path")
    if not isinstance(path, str):
        raise _NotASample("disk[].path is not text")
    return Disk(
        path=path,
        total=_count(disk.get("total"), "disk[].total"),
        used=_count(disk.get("used"), "disk[].used"),
        free=_count(disk.get("free"), "disk[].free"),
    )


def _io(value: object) -> IoRate:
    io = _fields(value, "io")
    return IoRate(read=_count(io.get("read"), "io.read"), write=_count(io.get("write"), "io.write"))


def _net(value: object) -> NetRate:
    net = _fields(value, "net")
    return NetRate(received=_count(net.get("in"), "net.in"), sent=_count(net.get("out"), "net.out"))


def _containers(value: object) -> tuple[ContainerSample, ...]:
    if not isinstance(value, list):
        raise _NotASample("containers is not a JSON array")
    return tuple(_container(entry) for entry in value)


def _container(value: object) -> ContainerSample:
    entry = _fields(value, "containers[]")
    name = entry.get("name")
    if not isinstance(name, str):
        raise _NotASample("containers[].name is not text")
    cpu, mem_nocache, oom_kill = entry.get("cpu"), entry.get("mem_nocache"), entry.get("oom_kill")
    return ContainerSample(
        name=name,
        mem=_count(entry.get("mem"), "containers[].mem"),
        cpu=None if cpu is None else _share(cpu, "containers[].cpu"),
        mem_nocache=None if mem_nocache is None else _count(mem_nocache, "containers[].mem_nocache"),
        oom_kill=None if oom_kill is None else _count(oom_kill, "containers[].oom_kill"),
    )


def _pressure(value: object) -> PressureShare:
    pressure = _fields(value, "pressure")
    cpu, memory, io = pressure.get("cpu"), pressure.get("memory"), pressure.get("io")
    return PressureShare(
        cpu=None if cpu is None else _share(cpu, "pressure.cpu"),
        memory=None if memory is None else _share(memory, "pressure.memory"),
        io=None if io is None else _share(io, "pressure.io"),
    )
