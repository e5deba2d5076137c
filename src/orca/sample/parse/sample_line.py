"""One sample line read back: the JSON the sampler writes (README, "The line") to a typed `Sample`.

Tolerant as the README's "Reading the lines back" asks: the `orca-sample ` prefix of `--out -` is stripped, keys
this version does not know are ignored, the extensions (`containers[].cpu`, `mem_nocache`, `oom_kill`,
`throttled`, `mem_max`, `pids`, `io`, `net`, and `pressure`) are read when present. Strict about values: a line
whose `v` is not 1, a section of the wrong shape, or a number that is negative where the field cannot be, is not a
sample (JSON itself has no NaN or Infinity).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import is_not, itemgetter
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, TypedDict

import msgspec

from orca.sample.line_format import PREFIX, CpuShare, Disk, IoRate, Mem, NetRate, PressureShare
from orca.sample.parse.errors import ParseError

if TYPE_CHECKING:
    # Loaded where used: `orca metrics` decodes its lines with msgspec and needs neither unless a line is refused.
    from returns.result import Result

SOURCE = "sample line"
_PREFIX_BYTES = PREFIX.encode()
_FORMAT_VERSION = 1


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
    throttled: float | None = None
    """Percent of the CPU bandwidth periods in `dt` in which the container was throttled."""
    mem_max: int | None = None
    """The memory limit in bytes; None also when there is none."""
    pids: int | None = None
    io: IoRate | None = None
    """Bytes per second read from and written to the whole disks."""
    net: NetRate | None = None
    """Bytes per second received and sent in the container's own network namespace."""


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


class CpuFields(TypedDict):
    user: float
    system: float
    iowait: float
    steal: float
    busiest: float


class MemFields(TypedDict):
    total: int
    used: int
    available: int
    cache: int
    swap_total: int
    swap_used: int
    rss: int


class DiskFields(TypedDict):
    path: str
    total: int
    used: int
    free: int


class IoFields(TypedDict):
    read: int
    write: int


NetFields = TypedDict("NetFields", {"in": int, "out": int})


class ContainerFields(TypedDict):
    name: str
    mem: int
    cpu: NotRequired[float | None]
    mem_nocache: NotRequired[int | None]
    oom_kill: NotRequired[int | None]
    throttled: NotRequired[float | None]
    mem_max: NotRequired[int | None]
    pids: NotRequired[int | None]
    io: NotRequired[IoFields | None]
    net: NotRequired[NetFields | None]


class PressureFields(TypedDict, total=False):
    cpu: float | None
    memory: float | None
    io: float | None


class LineFields(TypedDict):
    """A decoded line whose every field has been checked: what a fold over many lines reads, without building a
    `Sample` per line (a fold that summarises a file of a million lines is mostly this)."""

    v: int
    t: float
    dt: float
    host: str
    cores: NotRequired[int | None]
    cpu: NotRequired[CpuFields | None]
    mem: NotRequired[MemFields | None]
    disk: NotRequired[list[DiskFields] | None]
    io: NotRequired[IoFields | None]
    net: NotRequired[NetFields | None]
    containers: NotRequired[list[ContainerFields] | None]
    self_cpu: NotRequired[float | None]
    pressure: NotRequired[PressureFields | None]


class _NotASample(Exception):
    """Raised inside this module only, turned into a `ParseError` by `fields`."""


_CPU_KEYS = ("user", "system", "iowait", "steal", "busiest")
_MEM_KEYS = ("total", "used", "available", "cache", "swap_total", "swap_used", "rss")
_DISK_KEYS = ("total", "used", "free")
_IO_KEYS = ("read", "write")
_NET_KEYS = ("in", "out")
_CONTAINER_EXTENSIONS = (
    ("cpu", False), ("mem_nocache", True), ("oom_kill", True), ("throttled", False), ("mem_max", True), ("pids", True),
)
"""The optional numbers of a `containers` entry, and whether each is whole (a count) rather than a share."""
_CONTAINER_TRAFFIC = (("io", _IO_KEYS), ("net", _NET_KEYS))
"""The optional sections of a `containers` entry, with their counts."""
_PRESSURE_KEYS = ("cpu", "memory", "io")


_Share = Annotated[float, msgspec.Meta(ge=0)]
"""As `_share` checks it; JSON has no NaN, and a number too big for a double is refused as out of range."""
_Count = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
"""As `_count` checks it. The decoder can bound only 64-bit signed integers: a larger count is left to `fields`."""


class CpuLine(msgspec.Struct, frozen=True, gc=False):
    user: _Share
    system: _Share
    iowait: _Share
    steal: _Share
    busiest: _Share


class MemLine(msgspec.Struct, frozen=True, gc=False):
    total: _Count
    used: _Count
    available: _Count
    cache: _Count
    swap_total: _Count
    swap_used: _Count
    rss: _Count


class DiskLine(msgspec.Struct, frozen=True, gc=False):
    path: str
    total: _Count
    used: _Count
    free: _Count


class IoLine(msgspec.Struct, frozen=True, gc=False, rename={"first": "read", "second": "write"}):
    """`io`, bytes per second, under the names `NetLine` has too, so that one fold reads both."""

    first: _Count
    second: _Count


class NetLine(msgspec.Struct, frozen=True, gc=False, rename={"first": "in", "second": "out"}):
    first: _Count
    second: _Count


TrafficLine = IoLine | NetLine


class ContainerLine(msgspec.Struct, frozen=True, gc=False):
    name: str
    mem: _Count
    cpu: _Share | None = None
    mem_nocache: _Count | None = None
    oom_kill: _Count | None = None
    throttled: _Share | None = None
    mem_max: _Count | None = None
    pids: _Count | None = None
    io: IoLine | None = None
    net: NetLine | None = None


class PressureLine(msgspec.Struct, frozen=True, gc=False):
    cpu: _Share | None = None
    memory: _Share | None = None
    io: _Share | None = None


class CheckedLine(msgspec.Struct, frozen=True, gc=False):
    """A line checked as `fields` checks it, decoded and checked in one step by a decoder that knows the line's
    shape: what the summary folds. Numbers meant as shares are floats here (an integer in the JSON included)."""

    v: Literal[1]
    t: _Share
    dt: _Share
    host: str
    cores: _Count | None = None
    cpu: CpuLine | None = None
    mem: MemLine | None = None
    disk: list[DiskLine] | None = None
    io: IoLine | None = None
    net: NetLine | None = None
    containers: list[ContainerLine] | None = None
    self_cpu: _Share | None = None
    pressure: PressureLine | None = None


_LINE_DECODER = msgspec.json.Decoder(CheckedLine)


def many_lines(raws: Sequence[bytes]) -> tuple[list[CheckedLine], list[tuple[bytes, ParseError]]]:
    """`many_fields` as `CheckedLine`s: the same lines kept, and each bad line with the reason `fields` gives.
    The decoder refuses every line `fields` refuses; a line it refuses for another cause (the prefix, a count
    beyond 64-bit signed, a line it cannot take) is read by `fields` and kept if `fields` keeps it."""
    decode = _LINE_DECODER.decode
    try:
        return list(map(decode, raws)), []
    except (msgspec.DecodeError, RecursionError):
        pass
    good: list[CheckedLine] = []
    bad: list[tuple[bytes, ParseError]] = []
    for raw in raws:
        try:
            good.append(decode(raw.removeprefix(_PREFIX_BYTES)))
        except (msgspec.DecodeError, RecursionError):
            checked = fields(raw)
            if isinstance(checked, ParseError):
                bad.append((raw, checked))
            else:
                good.append(line_of(checked))
    return good, bad


def line_of(line: LineFields) -> CheckedLine:
    """The `CheckedLine` of a line `fields` checked."""
    cpu, mem, disk, io, net = line.get("cpu"), line.get("mem"), line.get("disk"), line.get("io"), line.get("net")
    containers, pressure = line.get("containers"), line.get("pressure")
    return CheckedLine(
        v=1,  # `fields` keeps no other
        t=float(line["t"]),
        dt=float(line["dt"]),
        host=line["host"],
        cores=line.get("cores"),
        cpu=None if cpu is None else CpuLine(*map(float, itemgetter(*_CPU_KEYS)(cpu))),
        mem=None if mem is None else MemLine(*itemgetter(*_MEM_KEYS)(mem)),
        disk=None if disk is None else [DiskLine(d["path"], d["total"], d["used"], d["free"]) for d in disk],
        io=None if io is None else IoLine(io["read"], io["write"]),
        net=None if net is None else NetLine(net["in"], net["out"]),
        containers=None if containers is None else [_container_line(entry) for entry in containers],
        self_cpu=_float_or_none(line.get("self_cpu")),
        pressure=None if pressure is None else PressureLine(
            _float_or_none(pressure.get("cpu")), _float_or_none(pressure.get("memory")),
            _float_or_none(pressure.get("io")),
        ),
    )


def _container_line(entry: ContainerFields) -> ContainerLine:
    io, net = entry.get("io"), entry.get("net")
    return ContainerLine(
        entry["name"], entry["mem"], _float_or_none(entry.get("cpu")), entry.get("mem_nocache"),
        entry.get("oom_kill"), _float_or_none(entry.get("throttled")), entry.get("mem_max"), entry.get("pids"),
        None if io is None else IoLine(io["read"], io["write"]),
        None if net is None else NetLine(net["in"], net["out"]),
    )


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
    from returns.result import Failure, Success

    checked = fields(raw)
    if isinstance(checked, ParseError):
        return Failure(checked)
    return Success(sample_of(checked))


parse_sample_line = parse
"""`parse` under the name `orca.sample` exports it by."""


def fields(raw: str | bytes) -> LineFields | ParseError:
    """One line decoded and checked, as `parse` checks it, but left as the decoded JSON: the fast path for a fold
    over many lines. Never raises."""
    import orjson

    raw = raw.removeprefix(PREFIX) if isinstance(raw, str) else raw.removeprefix(_PREFIX_BYTES)
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return ParseError(SOURCE, "not JSON")
    try:
        return _checked(document)
    except _NotASample as why:
        return ParseError(SOURCE, str(why))


def many_fields(raws: Sequence[bytes]) -> tuple[list[LineFields], list[tuple[bytes, ParseError]]]:
    """`fields` of many lines at once: the good lines in order, and each bad line with its reason. The verdicts are
    those of `fields` line by line; a batch whose every line is good (the usual case) is checked field by field
    across all its lines at once, several times faster."""
    import orjson

    bad: list[tuple[bytes, ParseError]] = []
    kept = list(raws)
    try:
        documents: list[object] = list(map(orjson.loads, kept))  # a file's lines: JSON each, no prefix
    except orjson.JSONDecodeError:
        documents, kept = [], []
        for raw in raws:
            try:
                documents.append(orjson.loads(raw.removeprefix(_PREFIX_BYTES)))
                kept.append(raw)
            except orjson.JSONDecodeError:
                bad.append((raw, ParseError(SOURCE, "not JSON")))
    if _all_good(documents):
        return documents, bad  # type: ignore[return-value]
    good: list[LineFields] = []
    for raw, document in zip(kept, documents, strict=True):
        try:
            good.append(_checked(document))
        except _NotASample as why:
            bad.append((raw, ParseError(SOURCE, str(why))))
    return good, bad


_ALWAYS_WRITTEN = ("v", "t", "dt", "host", "cores", "cpu", "mem", "disk", "io", "net", "self_cpu")
"""The keys of every line the sampler writes (`containers` and `pressure` are not always there)."""
_SHARE_TYPES = frozenset((int, float))
_COUNT_TYPES = frozenset((int,))
_NONE = type(None)


def _all_good(documents: list[Any]) -> bool:
    """Whether `_checked` would pass every document: the same checks, one field across all documents at a time.
    Any doubt (a key left out, a section of the wrong type) answers False, and the caller checks line by line."""
    try:
        if not documents:
            return True
        if set(map(type, documents)) != {dict}:
            return False
        # The keys every line has, as columns: one lookup per line, the transposing done by zip.
        columns = zip(*map(itemgetter(*_ALWAYS_WRITTEN), documents), strict=True)
        versions, times, dts, hosts, cores, cpus, mems, disks, ios, nets, self_cpus = map(list, columns)
        if set(versions) != {_FORMAT_VERSION} or set(map(type, versions)) != _COUNT_TYPES:
            return False
        if set(map(type, hosts)) != {str} or not _shares(times) or not _shares(dts):
            return False
        if not _counts(_not_none(cores)) or not _shares(_not_none(self_cpus)):
            return False
        if not _shares(_flat(_not_none(cpus), _CPU_KEYS)) or not _counts(_flat(_not_none(mems), _MEM_KEYS)):
            return False
        if not _counts(_flat(_not_none(ios), _IO_KEYS)) or not _counts(_flat(_not_none(nets), _NET_KEYS)):
            return False
        return _disks_good(_not_none(disks)) and _containers_good(_present(documents, "containers")) and (
            _pressures_good(_present(documents, "pressure"))
        )
    except (KeyError, TypeError, AttributeError):
        return False


def _not_none(values: list[Any]) -> list[Any]:
    return list(compress(values, map(is_not, values, repeat(None))))


def _present(sections: list[Any], key: str) -> list[Any]:
    return _not_none(list(map(dict.get, sections, repeat(key))))


def _flat(sections: list[Any], keys: tuple[str, ...]) -> list[Any]:
    """Every section's values of `keys`, one list; KeyError or TypeError when a section lacks one or is not an
    object."""
    if set(map(type, sections)) - {dict}:
        raise TypeError("not an object")
    return list(chain.from_iterable(map(itemgetter(*keys), sections)))


def _shares(values: list[Any]) -> bool:
    return set(map(type, values)) <= _SHARE_TYPES and (not values or min(values) >= 0)


def _counts(values: list[Any]) -> bool:
    return set(map(type, values)) <= _COUNT_TYPES and (not values or min(values) >= 0)


def _entries(arrays: list[Any]) -> list[Any]:
    if set(map(type, arrays)) - {list}:
        raise TypeError("not an array")
    entries = list(chain.from_iterable(arrays))
    if set(map(type, entries)) - {dict}:
        raise TypeError("not an object")
    return entries


def _disks_good(arrays: list[Any]) -> bool:
    entries = _entries(arrays)
    return set(map(type, map(dict.get, entries, repeat("path")))) <= {str} and _counts(_flat(entries, _DISK_KEYS))


def _containers_good(arrays: list[Any]) -> bool:
    entries = _entries(arrays)
    if not set(map(type, map(dict.get, entries, repeat("name")))) <= {str}:
        return False
    if not _counts(list(map(dict.get, entries, repeat("mem")))):
        return False
    return all(
        (_counts if whole else _shares)(_present(entries, key)) for key, whole in _CONTAINER_EXTENSIONS
    ) and all(_counts(_flat(_present(entries, key), keys)) for key, keys in _CONTAINER_TRAFFIC)


def _pressures_good(sections: list[Any]) -> bool:
    if set(map(type, sections)) - {dict}:
        return False
    return all(_shares(_present(sections, key)) for key in _PRESSURE_KEYS)


def sample_of(line: LineFields) -> Sample:
    """The `Sample` of a checked line."""
    cpu, mem, disk, io, net = line.get("cpu"), line.get("mem"), line.get("disk"), line.get("io"), line.get("net")
    containers, pressure, self_cpu = line.get("containers"), line.get("pressure"), line.get("self_cpu")
    return Sample(
        t=float(line["t"]),
        dt=float(line["dt"]),
        host=line["host"],
        cores=line.get("cores"),
        cpu=None if cpu is None else _cpu_share(cpu),
        mem=None if mem is None else _mem(mem),
        disk=None if disk is None else tuple(Disk(d["path"], d["total"], d["used"], d["free"]) for d in disk),
        io=None if io is None else IoRate(read=io["read"], write=io["write"]),
        net=None if net is None else NetRate(received=net["in"], sent=net["out"]),
        containers=None if containers is None else tuple(_container_sample(entry) for entry in containers),
        self_cpu=_float_or_none(self_cpu),
        pressure=None if pressure is None else _pressure_share(pressure),
    )


def _cpu_share(cpu: CpuFields) -> CpuShare:
    return CpuShare(
        user=float(cpu["user"]),
        system=float(cpu["system"]),
        iowait=float(cpu["iowait"]),
        steal=float(cpu["steal"]),
        busiest=float(cpu["busiest"]),
    )


def _mem(mem: MemFields) -> Mem:
    return Mem(
        total=mem["total"],
        used=mem["used"],
        available=mem["available"],
        cache=mem["cache"],
        swap_total=mem["swap_total"],
        swap_used=mem["swap_used"],
        rss=mem["rss"],
    )


def _pressure_share(pressure: PressureFields) -> PressureShare:
    return PressureShare(
        cpu=_float_or_none(pressure.get("cpu")),
        memory=_float_or_none(pressure.get("memory")),
        io=_float_or_none(pressure.get("io")),
    )


def _container_sample(entry: ContainerFields) -> ContainerSample:
    io, net = entry.get("io"), entry.get("net")
    return ContainerSample(
        name=entry["name"],
        mem=entry["mem"],
        cpu=_float_or_none(entry.get("cpu")),
        mem_nocache=entry.get("mem_nocache"),
        oom_kill=entry.get("oom_kill"),
        throttled=_float_or_none(entry.get("throttled")),
        mem_max=entry.get("mem_max"),
        pids=entry.get("pids"),
        io=None if io is None else IoRate(read=io["read"], write=io["write"]),
        net=None if net is None else NetRate(received=net["in"], sent=net["out"]),
    )


def _float_or_none(value: float | None) -> float | None:
    return None if value is None else float(value)


def _checked(document: object) -> LineFields:
    if type(document) is not dict:
        raise _NotASample("not a JSON object")
    version = document.get("v")
    if version != _FORMAT_VERSION or type(version) is not int:
        raise _NotASample("v is not 1")
    if type(document.get("host")) is not str:
        raise _NotASample("host is not text")
    _share(document.get("t"), "t")
    _share(document.get("dt"), "dt")
    if document.get("cores") is not None:
        _count(document["cores"], "cores")
    if document.get("self_cpu") is not None:
        _share(document["self_cpu"], "self_cpu")
    _check_section(document.get("cpu"), "cpu", _CPU_KEYS, _share)
    _check_section(document.get("mem"), "mem", _MEM_KEYS, _count)
    _check_section(document.get("io"), "io", _IO_KEYS, _count)
    _check_section(document.get("net"), "net", _NET_KEYS, _count)
    disk = document.get("disk")
    if disk is not None:
        for entry in _array(disk, "disk"):
            _check_section(_object(entry, "disk[]"), "disk[]", _DISK_KEYS, _count)
            if type(_object(entry, "disk[]").get("path")) is not str:
                raise _NotASample("disk[].path is not text")
    containers = document.get("containers")
    if containers is not None:
        for entry in _array(containers, "containers"):
            _check_container(entry)
    pressure = document.get("pressure")
    if pressure is not None:
        _check_optional(_object(pressure, "pressure"), "pressure", _PRESSURE_KEYS)
    return document  # type: ignore[return-value]


def _check_section(section: object, name: str, keys: tuple[str, ...], check: Callable[[object, str], object]) -> None:
    if section is None:
        return
    values = _object(section, name)
    for key in keys:
        check(values.get(key), f"{name}.{key}")


def _check_container(entry: object) -> None:
    values = _object(entry, "containers[]")
    if type(values.get("name")) is not str:
        raise _NotASample("containers[].name is not text")
    _count(values.get("mem"), "containers[].mem")
    for key, whole in _CONTAINER_EXTENSIONS:
        value = values.get(key)
        if value is not None:
            (_count if whole else _share)(value, f"containers[].{key}")
    for key, keys in _CONTAINER_TRAFFIC:
        _check_section(values.get(key), f"containers[].{key}", keys, _count)


def _check_optional(values: dict[str, object], name: str, keys: tuple[str, ...]) -> None:
    for key in keys:
        value = values.get(key)
        if value is not None:
            _share(value, f"{name}.{key}")


def _object(value: object, name: str) -> dict[str, object]:
    if type(value) is not dict:
        raise _NotASample(f"{name} is not a JSON object")
    return value


def _array(value: object, name: str) -> list[object]:
    if type(value) is not list:
        raise _NotASample(f"{name} is not a JSON array")
    return value


def _count(value: object, name: str) -> int:
    """A byte count or a number of things: a whole JSON number, never negative."""
    if type(value) is not int or value < 0:
        raise _NotASample(f"{name} is not a whole number >= 0")
    return value


def _share(value: object, name: str) -> float:
    """A percentage or a number of seconds: a finite JSON number, never negative (JSON has no NaN; orjson refuses
    a number a double cannot hold)."""
    if (type(value) is float and value >= 0.0) or (type(value) is int and value >= 0):
        return value
    raise _NotASample(f"{name} is not a finite number >= 0")
