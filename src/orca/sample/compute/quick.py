"""The usual line in one pass (README, "Performance"): the host's counters parsed straight into plain numbers, and the
line computed and encoded from them, without the records, `Result`s and per-section functions of the general path.

A line runs after seconds asleep, when every function and record class it touches is fetched again: a line touching
a few functions costs much less than one touching fifty, whatever they compute. So the usual case, where every file
reads as the kernel prints it, goes through here; anything else (a file that fails or reads otherwise, a device or
interface that came or went, a value beyond what the line writes as a plain number) gives None, and the caller makes
that line by the general path: `build_line` and `encode_line` over the parsers' snapshots. Where this gives bytes
they are the general path's bytes for the same readings (tests/property/test_quick.py keeps them equal).

Pure: texts in, bytes out. The shell reads the files (shell/sampler.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import sub
from typing import Any

import orjson

from orca.sample.compute.encode import EXACT_BELOW, FORMAT_VERSION
from orca.sample.compute.memory import MEMINFO_KEYS
from orca.sample.compute.snapshot import DiskReading
from orca.sample.parse.block import skipped_disk
from orca.sample.parse.diskstats import SECTOR_BYTES, device_line
from orca.sample.parse.kernel_lines import parsed_lines
from orca.sample.parse.net_dev import LOOPBACK, interface_line
from orca.sample.parse.numbers import U64_DIGITS, USEC_PER_SECOND
from orca.sample.parse.pressure import NO_PSI_ERRNOS, as_printed
from orca.sample.records import quick_init

_CPU_FIELDS = 8
_SHORT_DIGITS = U64_DIGITS - 1
"""Decimals of at most this many digits are below 2^64: no range check needed."""
_FORKS = "\nprocesses "
_THREE_PLACES_BELOW, _TWO_PLACES_BELOW = EXACT_BELOW[3], EXACT_BELOW[2]
"""`t` and `dt` (three decimals) and `self_cpu` (two) below these are written as the rounded float by the general
encoder too; beyond, it writes text of its own, left to it."""


@quick_init
@dataclass(frozen=True, slots=True)
class Counters:
    """The counters of one reading that a line is the difference of, as plain numbers."""

    monotonic_ns: int
    cpu: tuple[tuple[int, ...], ...]
    """The aggregate `cpu` line's eight counters, then each `cpuN` line's, in file order."""
    core_numbers: tuple[int, ...]
    """N of each `cpuN` line, in the same order."""
    disk_names: tuple[str, ...]
    """Each /proc/diskstats device, in file order, none twice."""
    disk_sectors: tuple[tuple[int, int], ...]
    """Sectors read and written, per device of `disk_names`."""
    net: dict[str, tuple[int, int]]
    """Interface (`lo` left out) -> bytes received and sent."""
    stalls: tuple[int, int, int] | None
    """The `some` stall totals (µs) of cpu, memory and io; None on a kernel without pressure stall information."""
    forks: int | None = None
    """/proc/stat's `processes`: the tasks (processes and threads) created since boot; None when it has none."""


def counters(
    stat: bytes | OSError,
    diskstats: bytes | OSError,
    net_dev: bytes | OSError,
    pressure: Sequence[bytes | OSError],
    monotonic_ns: int,
) -> Counters | None:
    """The readings of /proc/stat, /proc/diskstats, /proc/net/dev and /proc/pressure/{cpu,memory,io}; None unless
    each reads as the kernel prints it (or, for pressure, all three are missing as on a kernel without it)."""
    if isinstance(stat, OSError) or isinstance(diskstats, OSError) or isinstance(net_dev, OSError):
        return None
    # /proc/stat: every `cpu` line with its eight counters; none comes after the last `cpu` anywhere in the text.
    text = stat.decode("utf-8", errors="replace")
    end = text.find("\n", text.rfind("cpu"))
    cpu: list[tuple[int, ...]] = []
    core_numbers: list[int] = []
    for line in (text if end < 0 else text[:end]).splitlines():
        if not line.startswith("cpu"):
            continue
        fields = line.split()
        numbers = fields[1 : _CPU_FIELDS + 1]
        joined = "".join(numbers)
        if len(numbers) != _CPU_FIELDS or not (joined.isdigit() and joined.isascii()):
            return None
        if max(map(len, numbers)) > _SHORT_DIGITS:
            return None
        label = fields[0]
        if label == "cpu":
            if cpu:
                return None  # a second aggregate line
            cpu.append(tuple(map(int, numbers)))
            continue
        number = label[3:]
        if not cpu or not (number.isdigit() and number.isascii()) or len(number) > _SHORT_DIGITS:
            return None
        core_numbers.append(int(number))
        cpu.append(tuple(map(int, numbers)))
    if not cpu or len(set(core_numbers)) != len(core_numbers):
        return None
    # `processes` comes after the long `intr` line: found by one search rather than by splitting the text.
    forks: int | None = None
    at = text.find(_FORKS, end)
    line_end = -1 if at < 0 else text.find("\n", at + 1)
    if line_end >= 0:
        digits = text[at + len(_FORKS) : line_end]
        forks = int(digits) if digits.isdigit() and digits.isascii() and len(digits) <= _SHORT_DIGITS else None
    # /proc/diskstats and /proc/net/dev: each line as the general parsers read it, through their cached line readers.
    disk_names: list[str] = []
    disk_sectors: list[tuple[int, int]] = []
    for device in parsed_lines(diskstats.decode("utf-8", errors="replace"), device_line):
        if device is not None:
            disk_names.append(device.name)
            disk_sectors.append((device.sectors_read, device.sectors_written))
    if not disk_names or len(set(disk_names)) != len(disk_names):
        return None
    net: dict[str, tuple[int, int]] = {}
    seen_interface = False
    for interface in parsed_lines(net_dev.decode("utf-8", errors="replace"), interface_line):
        if interface is not None:
            seen_interface = True
            name, pair = interface
            if name in net:
                return None  # an interface listed twice
            if name != LOOPBACK:
                net[name] = pair
    if not seen_interface:
        return None
    stalls: list[int] = []
    missing = 0
    for data in pressure:
        if isinstance(data, OSError):
            if data.errno not in NO_PSI_ERRNOS:
                return None
            missing += 1
            continue
        parsed = as_printed(data.decode("utf-8", errors="replace"))
        if parsed is None:
            return None
        stalls.append(parsed.some.total_us)
    if missing not in (0, len(pressure)) or len(pressure) != 3:
        return None
    return Counters(
        monotonic_ns,
        tuple(cpu),
        tuple(core_numbers),
        tuple(disk_names),
        tuple(disk_sectors),
        net,
        None if missing else (stalls[0], stalls[1], stalls[2]),
        forks,
    )


def line(
    prev: Counters,
    cur: Counters,
    meminfo: bytes | OSError,
    *,
    wall: float,
    host: str,
    disks: Sequence[DiskReading],
    whole_disks: frozenset[str] | None,
    rss: int,
    self_cpu: float,
) -> bytes | None:
    """The line from `prev` to `cur` (no newline), as `encode_line(build_line(...))` writes it for the same readings;
    None when the general path is needed: a section would be null, a core, disk or interface came or went, the
    pressure files appeared, or a value is beyond a plain number.

    `whole_disks`: /sys/block's whole disks for `cur`'s devices (None: the skip list applies)."""
    dt = (cur.monotonic_ns - prev.monotonic_ns) / 1_000_000_000
    if not (0 < dt < _THREE_PLACES_BELOW and 0 <= wall < _THREE_PLACES_BELOW and 0 <= self_cpu < _TWO_PLACES_BELOW):
        return None
    if not host.isascii():
        return None
    if cur.core_numbers != prev.core_numbers or cur.disk_names != prev.disk_names:
        return None
    if (prev.stalls is None) != (cur.stalls is None):
        return None
    # cpu: each counter's increase (0 when it went backwards), shares of the aggregate's.
    # Written out, not by a comprehension: each is a function of its own, fetched again on a cold line.
    user0, nice0, system0, idle0, iowait0, irq0, softirq0, steal0 = prev.cpu[0]
    user1, nice1, system1, idle1, iowait1, irq1, softirq1, steal1 = cur.cpu[0]
    user = max(0, user1 - user0)
    nice = max(0, nice1 - nice0)
    system = max(0, system1 - system0)
    idle = max(0, idle1 - idle0)
    iowait = max(0, iowait1 - iowait0)
    irq = max(0, irq1 - irq0)
    softirq = max(0, softirq1 - softirq0)
    steal = max(0, steal1 - steal0)
    total = user + nice + system + idle + iowait + irq + softirq + steal
    if total == 0:
        shares = {"user": 0.0, "system": 0.0, "iowait": 0.0, "steal": 0.0, "busiest": 0.0}
    else:
        busiest = 0.0
        for core_prev, core_cur in zip(prev.cpu[1:], cur.cpu[1:], strict=True):
            increase = list(map(sub, core_cur, core_prev))
            if min(increase) < 0:  # a counter went backwards (a reset, a core brought back): it counts 0
                increase = list(map(max, increase, repeat(0)))
            core_total = sum(increase)
            if core_total:
                busiest = max(busiest, (core_total - increase[3] - increase[4]) * 100 / core_total)
        shares = {
            "user": round((user + nice) * 100 / total, 1) + 0.0,
            "system": round((system + irq + softirq) * 100 / total, 1) + 0.0,
            "iowait": round(iowait * 100 / total, 1) + 0.0,
            "steal": round(steal * 100 / total, 1) + 0.0,
            "busiest": round(busiest, 1) + 0.0,
        }
    mem = _mem(meminfo, rss)
    if mem is None:
        return None
    # disk: one entry per file system, the first directory named on it winning.
    entries: list[dict[str, Any]] = []
    seen_devices: set[int] = set()
    for disk in disks:
        if disk.st_dev in seen_devices:
            continue
        if not disk.path.isascii():
            return None
        seen_devices.add(disk.st_dev)
        frsize = disk.f_frsize
        entries.append({
            "path": disk.path,
            "total": disk.f_blocks * frsize,
            "used": max(0, (disk.f_blocks - disk.f_bfree) * frsize),
            "free": disk.f_bavail * frsize,
        })
    # io: the whole disks' sectors (or, without /sys/block's list, all but the skipped devices).
    read = written = 0
    for name, (read_before, written_before), (read_now, written_now) in zip(
        cur.disk_names, prev.disk_sectors, cur.disk_sectors, strict=True
    ):
        if (name in whole_disks) if whole_disks is not None else not skipped_disk(name):
            read += max(0, read_now - read_before)
            written += max(0, written_now - written_before)
    received = sent = 0
    before_net = prev.net
    for name, (received_now, sent_now) in cur.net.items():
        counted = before_net.get(name)
        if counted is not None:
            received += max(0, received_now - counted[0])
            sent += max(0, sent_now - counted[1])
    document: dict[str, Any] = {
        "v": FORMAT_VERSION,
        "t": round(wall, 3) + 0.0,
        "dt": round(dt, 3) + 0.0,
        "host": host,
        "cores": len(cur.core_numbers),
        "cpu": shares,
        "mem": mem,
        "disk": entries,
        "io": {"read": round(read * SECTOR_BYTES / dt), "write": round(written * SECTOR_BYTES / dt)},
        "net": {"in": round(received / dt), "out": round(sent / dt)},
        "self_cpu": round(self_cpu, 2) + 0.0,
    }
    if cur.stalls is not None and prev.stalls is not None:
        span_us = dt * USEC_PER_SECOND
        shares_of_dt: list[float] = []
        for stalled_before, stalled_now in zip(prev.stalls, cur.stalls, strict=True):
            stalled = stalled_now - stalled_before
            shares_of_dt.append(0.0 if stalled <= 0 else round(min(100.0, 100.0 * stalled / span_us), 1) + 0.0)
        document["pressure"] = {"cpu": shares_of_dt[0], "memory": shares_of_dt[1], "io": shares_of_dt[2]}
    try:
        return orjson.dumps(document)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: the general encoder writes it
        return None


def _mem(meminfo: bytes | OSError, rss: int) -> dict[str, int] | None:
    """The `mem` section when /proc/meminfo has each key it needs as `Key: N kB`; None otherwise."""
    if isinstance(meminfo, OSError):
        return None
    text = meminfo.decode("utf-8", errors="replace")
    # No line after the last place a wanted key appears can be one (as the general parser reads it).
    last = max(map(text.rfind, MEMINFO_KEYS))
    end = text.find("\n", last)
    values: dict[str, int] = {}
    for entry in (text if end < 0 else text[:end]).splitlines():
        key, _, rest = entry.partition(":")
        if key not in MEMINFO_KEYS:
            if key.strip() in MEMINFO_KEYS:
                return None  # a key with white space around it
            continue
        words = rest.split()
        if len(words) != 2 or words[1] != "kB":
            return None
        digits = words[0]
        if not (digits.isdigit() and digits.isascii()) or len(digits) > _SHORT_DIGITS:
            return None
        values[key] = int(digits) * 1024
    try:
        total = values["MemTotal"]
        available = values["MemAvailable"]
        swap_total = values["SwapTotal"]
        swap_free = values["SwapFree"]
        cache = values["Active(file)"] + values["Inactive(file)"]
    except KeyError:
        return None
    return {
        "total": total,
        "used": max(0, total - available),
        "available": available,
        "cache": cache,
        "swap_total": swap_total,
        "swap_used": max(0, swap_total - swap_free),
        "rss": rss,
    }
