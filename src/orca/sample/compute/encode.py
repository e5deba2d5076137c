"""The line encoder (docs/behaviour.md §3.1-3.10): one `Line` to the exact bytes of one JSON line.

Decimals are written as text fragments (`orjson.Fragment`) rather than rounded floats: orjson prints a float in its
shortest form, which for `round(x, 1)` is the one-decimal text up to about 1e14 but then loses the decimal or turns to
exponents (`1e+16`). Formatting the text ourselves gives the same bytes for every ordinary value, and fixed decimals,
never an exponent, NaN or Infinity, for any other.

A line is encoded often, so the common case is left to orjson in C: a decimal within the range where its text and
orjson's agree goes as the rounded float, and integers go as they are, the line being built again with each
integer checked only when orjson refuses one beyond 64 bits.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from orca.sample.compute.line import ContainerEntry, IoRate, Line, NetRate
from orca.sample.parse.numbers import U64_MAX

FORMAT_VERSION = 1
_I64_MIN = -(2**63)
# Beyond this, `str(int)` meets Python's 4300-digit limit; no counter comes within a googol of it.
_MAX_TEXT_BITS = 4000
# Places -> the magnitude below which orjson's text of `round(x, places)` is `decimals(x, places)`.
EXACT_BELOW = {1: 1e14, 2: 1e13, 3: 1e12}


def fixed1(x: float) -> str:
    """`x` to one decimal, as JSON; `-0.0` and non-finite values give `0.0` (the documented API's `fixed1`).

    >>> [fixed1(v) for v in (99.0, 0.05, 0.15, -0.04, -2.26, float("nan"), 1e16)]
    ['99.0', '0.1', '0.1', '0.0', '-2.3', '0.0', '10000000000000000.0']
    """
    return decimals(x, 1)


def decimals(x: float, places: int) -> str:
    """`x` rounded to `places` decimals, as JSON, trailing zeros dropped but one: `5.0`, `0.42`, `1762250000.123`.

    `-0.0` and non-finite values give `0.0`. Below 10 ** (15 - places) in magnitude (where a double still tells
    every `places`-decimal value apart) this is exactly the text orjson gives `round(x, places)`; beyond, it is the
    correctly rounded decimal rather than the shortest text of the nearest double.

    >>> [decimals(v, 3) for v in (5.0, 0.2004, 1762250000.1234, -0.0001, float("inf"))]
    ['5.0', '0.2', '1762250000.123', '0.0', '0.0']
    """
    if not math.isfinite(x):
        return "0.0"
    text = f"{x:.{places}f}".rstrip("0")
    text = text + "0" if text.endswith(".") else text
    return "0.0" if text == "-0.0" else text


def encode_line(line: Line) -> bytes:
    """The line's bytes, without a newline: keys `v, t, dt, host, cores, cpu, mem, disk, io, net`, `containers` only
    with `--cgroup`, `self_cpu`, then `pressure` unless the kernel has no pressure stall information."""
    document = _document(line)
    try:
        return orjson.dumps(document)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits, which orjson does not write
        return orjson.dumps(_checked(document))


def _document(line: Line) -> dict[str, Any]:
    # The sections written out here rather than each by a function of its own: a line is encoded after seconds
    # asleep, when every function it touches is fetched again (README, "Performance"). `io` and `net` keep theirs,
    # which the containers' entries share.
    cpu, mem, io, net, pressure = line.cpu, line.mem, line.io, line.net, line.pressure
    document: dict[str, Any] = {
        "v": FORMAT_VERSION,
        "t": _decimal(line.t, 3),
        "dt": _decimal(line.dt, 3),
        "host": _text(line.host),
        "cores": line.cores,
        "cpu": None if cpu is None else {
            "user": _decimal(cpu.user, 1),
            "system": _decimal(cpu.system, 1),
            "iowait": _decimal(cpu.iowait, 1),
            "steal": _decimal(cpu.steal, 1),
            "busiest": _decimal(cpu.busiest, 1),
        },
        "mem": None if mem is None else {
            "total": mem.total,
            "used": mem.used,
            "available": mem.available,
            "cache": mem.cache,
            "swap_total": mem.swap_total,
            "swap_used": mem.swap_used,
            "rss": mem.rss,
        },
        "disk": None if line.disk is None else [
            {"path": _text(disk.path), "total": disk.total, "used": disk.used, "free": disk.free}
            for disk in line.disk
        ],
        "io": None if io is None else _io(io),
        "net": None if net is None else _net(net),
    }
    if line.containers_enabled:
        document["containers"] = None if line.containers is None else _containers(line.containers)
    document["self_cpu"] = _decimal(line.self_cpu, 2)
    if pressure is not None:
        shares: dict[str, Any] = {}
        if pressure.cpu is not None:
            shares["cpu"] = _decimal(pressure.cpu, 1)
        if pressure.memory is not None:
            shares["memory"] = _decimal(pressure.memory, 1)
        if pressure.io is not None:
            shares["io"] = _decimal(pressure.io, 1)
        document["pressure"] = shares
    return document


def _decimal(x: float, places: int) -> float | orjson.Fragment:
    """`decimals(x, places)` as orjson writes it: the rounded float where orjson's text of it is the same (`+ 0.0`
    makes `-0.0` and an int a float), else the text itself."""
    below = EXACT_BELOW[places]
    if -below < x < below:
        return round(x, places) + 0.0
    return orjson.Fragment(decimals(x, places))


def _checked(value: object) -> object:
    """`value` with every integer orjson cannot write replaced as `_integer` writes it, at any depth."""
    if isinstance(value, dict):
        return {key: _checked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_checked(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return _integer(value)
    return value


def _integer(n: int) -> int | orjson.Fragment:
    """orjson writes 64-bit integers only; a larger one is written as text, an absurd one saturates."""
    if _I64_MIN <= n <= U64_MAX:
        return n
    if n.bit_length() < _MAX_TEXT_BITS:
        return orjson.Fragment(str(n))
    return U64_MAX if n > 0 else _I64_MIN


def _text(s: str) -> str:
    """orjson refuses lone surrogates (a host or path decoded with surrogateescape, a `\\ud800` in a config file)."""
    return s if s.isascii() else s.encode("utf-8", "replace").decode("utf-8")


def _io(io: IoRate) -> dict[str, Any]:
    return {"read": io.read, "write": io.write}


def _net(net: NetRate) -> dict[str, Any]:
    return {"in": net.received, "out": net.sent}


def _containers(entries: tuple[ContainerEntry, ...]) -> list[dict[str, Any]]:
    # Stable: entries with one name keep the order container_entries gave them (by id).
    return [_container(entry) for entry in sorted(entries, key=lambda entry: entry.name)]


def _container(entry: ContainerEntry) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "name": _text(entry.name),
        "mem": entry.mem,
        "cpu": _decimal(entry.cpu, 1),
        "mem_nocache": entry.mem_nocache,
    }
    if entry.oom_kill is not None:
        fields["oom_kill"] = entry.oom_kill
    if entry.throttled is not None:
        fields["throttled"] = _decimal(entry.throttled, 1)
    if entry.mem_max is not None:
        fields["mem_max"] = entry.mem_max
    if entry.pids is not None:
        fields["pids"] = entry.pids
    if entry.io is not None:
        fields["io"] = _io(entry.io)
    if entry.net is not None:
        fields["net"] = _net(entry.net)
    return fields
