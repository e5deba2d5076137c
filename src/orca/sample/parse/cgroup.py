"""cgroup v2 files (Documentation/admin-guide/cgroup-v2.rst), those v1 shares with it, and Docker's names for them.

`memory.current` and `pids.current` are single values, `memory.max` and `pids.max` one too or the word `max`;
`memory.stat`, `memory.events` and `cpu.stat` are "flat keyed" files, one `key value` pair per line, values unsigned;
`io.stat` is "nested keyed", one line per device: `MAJ:MIN key=value key=value ...`. cgroup v1 writes `pids.*`,
`memory.stat` and `cpu.stat` in the same forms.

Docker names a container's cgroup directory `docker-<id>.scope` under `system.slice` (systemd driver) or `<id>` under
`docker` (cgroupfs driver), the id 64 lowercase hex characters.

A container's `config.v2.json` holds its environment, secrets included: `container_name` returns the `Name` and
nothing else, and no error message here ever quotes the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec
import orjson
from returns.result import Failure, Result, Success

from orca.sample.parse.block import device_number
from orca.sample.parse.errors import ParseError
from orca.sample.parse.numbers import u64

_CONTAINER_DIR = re.compile(r"(?:docker-([0-9a-f]{64})\.scope|([0-9a-f]{64}))")
NO_LIMIT = "max"
"""What a limit file such as `memory.max` holds when there is no limit."""


class CpuPeriods(msgspec.Struct, frozen=True, gc=False):
    """`cpu.stat`'s bandwidth counters, present when the cpu controller is enabled for the cgroup."""

    periods: int
    """`nr_periods`: CPU bandwidth periods that have elapsed with runnable tasks (none without a `cpu.max` limit)."""
    throttled: int
    """`nr_throttled`: those periods in which the cgroup used up its quota and was throttled."""


class DeviceIo(msgspec.Struct, frozen=True, gc=False):
    """One line of `io.stat`: bytes read and written on one device since the cgroup was made."""

    read_bytes: int
    """`rbytes`."""
    written_bytes: int
    """`wbytes`."""


def memory_current(text: str) -> Result[int, ParseError]:
    """`memory.current`: one number of bytes; anything else (`max`, empty, junk) is a failure.

    >>> memory_current("412000000\\n")
    <Success: 412000000>
    >>> memory_current("max\\n").failure().reason
    'not a number of bytes'
    """
    value = u64(text.strip())
    if value is None:
        return Failure(ParseError("memory.current", "not a number of bytes"))
    return Success(value)


def pids_current(text: str) -> Result[int, ParseError]:
    """`pids.current`: the number of processes in the cgroup and its descendants.

    >>> pids_current("12\\n")
    <Success: 12>
    """
    value = u64(text.strip())
    if value is None:
        return Failure(ParseError("pids.current", "not a number of processes"))
    return Success(value)


def memory_max(text: str) -> Result[int | None, ParseError]:
    """`memory.max`: the limit in bytes, or None for `max` (no limit); anything else is a failure.

    >>> memory_max("536870912\\n"), memory_max("max\\n")
    (<Success: 536870912>, <Success: None>)
    """
    return _limit(text, "memory.max", "neither a number of bytes nor `max`")


def pids_max(text: str) -> Result[int | None, ParseError]:
    """`pids.max` (the same in v1 and v2): the most processes and threads the cgroup may hold, or None for `max`
    (no limit); anything else is a failure.

    >>> pids_max("4096\\n"), pids_max("max\\n"), pids_max("-1\\n").failure().reason
    (<Success: 4096>, <Success: None>, 'neither a number of processes nor `max`')
    """
    return _limit(text, "pids.max", "neither a number of processes nor `max`")


def _limit(text: str, source: str, reason: str) -> Result[int | None, ParseError]:
    """A single-value limit file: its number, None for `max`, or a failure for anything else."""
    stripped = text.strip()
    if stripped == NO_LIMIT:
        return Success(None)
    value = u64(stripped)
    if value is None:
        return Failure(ParseError(source, reason))
    return Success(value)


def cpu_periods(cpu_stat: Mapping[str, int]) -> Result[CpuPeriods, ParseError]:
    """The bandwidth counters of a parsed `cpu.stat` (see `flat_keyed`); a failure without the cpu controller.

    >>> cpu_periods({"usage_usec": 9, "nr_periods": 40, "nr_throttled": 30})
    <Success: CpuPeriods(periods=40, throttled=30)>
    >>> cpu_periods({"usage_usec": 9}).failure().reason
    'no nr_periods and nr_throttled (the cpu controller is not enabled)'
    """
    periods, throttled = cpu_stat.get("nr_periods"), cpu_stat.get("nr_throttled")
    if periods is None or throttled is None:
        return Failure(ParseError("cpu.stat", "no nr_periods and nr_throttled (the cpu controller is not enabled)"))
    return Success(CpuPeriods(periods=periods, throttled=throttled))


def io_stat(text: str) -> Result[Mapping[str, DeviceIo], ParseError]:
    """`io.stat`: `MAJ:MIN` → the device's bytes read and written; empty for a cgroup that has done no I/O yet.

    Other keys (`rios`, `dbytes`, and the `cost.*` or `depth` of I/O controllers) are ignored, in any order. A line
    without both `rbytes` and `wbytes` as unsigned numbers, or whose device is not `MAJ:MIN`, is skipped; a device
    that appears twice keeps its first line. Text with lines but none of them usable is a failure.

    >>> io_stat("8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\\n")
    <Success: {'8:16': DeviceIo(read_bytes=1459200, written_bytes=314773504)}>
    >>> io_stat("")
    <Success: {}>
    """
    devices: dict[str, DeviceIo] = {}
    lines = 0
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        lines += 1
        device = device_number(fields[0])
        if device is None:
            continue
        read_text = written_text = None
        for pair in fields[1:]:
            key, _, value = pair.partition("=")
            if key == "rbytes" and read_text is None:
                read_text = value
            elif key == "wbytes" and written_text is None:
                written_text = value
        read = None if read_text is None else u64(read_text)
        written = None if written_text is None else u64(written_text)
        if read is not None and written is not None:
            devices.setdefault(device, DeviceIo(read_bytes=read, written_bytes=written))
    if lines and not devices:
        return Failure(ParseError("io.stat", "no `MAJ:MIN rbytes=... wbytes=...` line"))
    return Success(devices)


def flat_keyed(text: str, source: str) -> Result[Mapping[str, int], ParseError]:
    """A flat-keyed file (`memory.stat`, `memory.events`, `cpu.stat`): `key value` per line; bad lines skipped.

    A key that appears twice keeps its first value: a later line cannot override one already read.

    >>> flat_keyed("anon 4096\\ninactive_file 8192\\nbad line here\\n", "memory.stat")
    <Success: {'anon': 4096, 'inactive_file': 8192}>
    """
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue
        key, token = parts
        value = u64(token)
        if value is not None:
            values.setdefault(key, value)
    if not values:
        return Failure(ParseError(source, "no `key value` line"))
    return Success(values)


def flat_value(text: str, key: str) -> int | None:
    """The value of `key` in a flat-keyed file as the kernel writes it (each line `key value`, from its start): its
    first such line whose value is unsigned, as `flat_keyed` reads it, found without parsing the other lines (a file
    read every line of which a key or two are wanted). None without one.

    >>> flat_value("anon 4096\\ninactive_file x\\ninactive_file 8192\\ninactive_file 1\\n", "inactive_file")
    8192
    >>> flat_value("total_inactive_file 5\\n", "inactive_file") is None
    True
    """
    wanted = key + " "
    at = 0 if text.startswith(wanted) else _line_of(text, wanted, 0)
    while at >= 0:
        end = text.find("\n", at)
        parts = (text[at:] if end < 0 else text[at:end]).split()
        if len(parts) == 2 and parts[0] == key:
            value = u64(parts[1])
            if value is not None:
                return value
        if end < 0:
            return None
        at = _line_of(text, wanted, end)
    return None


def _line_of(text: str, wanted: str, start: int) -> int:
    """Where the next line after `start` that begins with `wanted` begins; -1 when there is none."""
    found = text.find("\n" + wanted, start)
    return found + 1 if found >= 0 else -1


def container_id(dirname: str) -> str | None:
    """The 64-hex Docker id in a cgroup directory name: `docker-<id>.scope` (systemd) or `<id>` (cgroupfs).

    >>> container_id("docker-" + "ab" * 32 + ".scope") == "ab" * 32
    True
    >>> container_id("init.scope") is None
    True
    """
    match = _CONTAINER_DIR.fullmatch(dirname)
    if match is None:
        return None
    return match.group(1) or match.group(2)


def container_name(config: str) -> str:
    """The `Name` of a `config.v2.json` without its leading `/`; "" if none. Nothing else of the file is kept.

    >>> container_name('{"Name": "/postgres", "Config": {"Env": ["PGPASSWORD=secret"]}}')
    'postgres'
    >>> container_name("not json")
    ''
    """
    try:
        document = orjson.loads(config)
    except orjson.JSONDecodeError:  # also raised for lone surrogates and nesting deeper than orjson's limit
        return ""
    name = document.get("Name") if isinstance(document, dict) else None
    if not isinstance(name, str):
        return ""
    return name.removeprefix("/")
