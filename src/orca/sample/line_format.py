"""The line's shape, declared once (docs/line.md): the records a line is made of, their keys in order, the
decimals each number is written with, and what is left out when it is None.

The sampler builds a `Sample` from two readings (`compute/build.py`), the encoder writes it (`compute/encode.py`), and
the reader decodes a line back into the same `Sample` (`parse/sample_line.py`): all three follow the declarations
here, so a new field is one field of one record below and one function computing it.

How a field is written, from its declaration:
- the key is the field's name, or the `name` given to `msgspec.field` (`NetRate.received` is `in`);
- keys come in the order of the fields;
- a `Percent` has one decimal, a `Seconds` and a `Cores` three, a `CpuSeconds` two (the `places` of its `Meta`),
  trailing zeros dropped but one, never an exponent; a `Count` and a `Size` are whole numbers;
- None is `null`, except for the fields a record names in `LEFT_OUT_WHEN_NONE`, which are then left out;
- `UNSET` is left out: only `Sample.containers`, without `--cgroup`;
- a tuple of text (`RunSample.command`) is a JSON array of strings.

How a line is read back, from the same declarations: a number is refused when negative (the `ge=0` of its `Meta`),
beyond what a sampler writes (its `le`: docs/line.md, "Reading the lines yourself"), a whole number where a fraction is
written, or text where a number is; a field with a default may be missing; keys this version does not know are
ignored.

Records are `msgspec` Structs, frozen: the reader decodes a line straight into them, checked as it goes.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

FORMAT_VERSION: Literal[1] = 1
"""`v`: it changes only if a field changes meaning; new fields are added, never renamed."""
PREFIX = "orca-sample "
"""What starts every line written to standard output (`--out -`)."""

LATEST_T = 10_000_000_000
"""The latest `t` read back (2286-11-20): a clock further on is not a sampler's."""
LONGEST_DT = 100_000_000
"""The longest `dt` read back (over three years; the longest interval is 1,000,000 s)."""
MOST_PERCENT = 1_000_000
"""The largest percentage read back: a container's `cpu` is a percent of one core, so 100 × its cores (8,192 at
most in Linux)."""
MOST_CPU_SECONDS = 1_000_000_000
"""The largest `self_cpu` read back (over 31 years of one core)."""
MOST_COUNT = 2**63 - 1
"""The largest count read back but a file system's sizes: no machine has 8 EiB of memory or moves 8 EiB a second."""

Percent = Annotated[float, Meta(ge=0, le=MOST_PERCENT, extra={"places": 1})]
"""A percentage, written with one decimal."""
Seconds = Annotated[float, Meta(ge=0, extra={"places": 3})]
"""A time in seconds (`t`, `dt`), written with three decimals."""
CpuSeconds = Annotated[float, Meta(ge=0, le=MOST_CPU_SECONDS, extra={"places": 2})]
"""CPU seconds (`self_cpu`), written with two decimals."""
Count = Annotated[int, Meta(ge=0, le=MOST_COUNT)]
"""Bytes, bytes per second, or a number of things: a whole number, never negative."""
Cores = Annotated[float, Meta(ge=0, extra={"places": 3})]
"""A number of CPUs (`cgroup.cpu_max`), written with three decimals: to the thousandth of a CPU, a Kubernetes
millicore."""
Size = Annotated[int, Meta(ge=0)]
"""A file system's size in bytes (`statvfs`'s blocks times its block size): a whole number, never negative, and with
no bound, since a network file system may report 8 EiB or more."""

__all__ = [
    "FORMAT_VERSION",
    "LATEST_T",
    "LONGEST_DT",
    "MOST_COUNT",
    "MOST_CPU_SECONDS",
    "MOST_PERCENT",
    "PREFIX",
    "UNSET",
    "CgroupSample",
    "CommandExit",
    "ContainerSample",
    "Cores",
    "Count",
    "CpuSeconds",
    "CpuShare",
    "Disk",
    "IoRate",
    "Mem",
    "NetRate",
    "Percent",
    "PressureShare",
    "RunSample",
    "Sample",
    "Seconds",
    "Size",
    "TopProcess",
    "UnsetType",
]


class CpuShare(msgspec.Struct, frozen=True, gc=False):
    """`cpu`: percentages of all cores' time between two readings (docs/behaviour.md §3.3)."""

    user: Percent
    system: Percent
    iowait: Percent
    steal: Percent
    busiest: Percent


class Mem(msgspec.Struct, frozen=True, gc=False):
    """`mem`, in bytes (docs/behaviour.md §3.4)."""

    total: Count
    used: Count
    available: Count
    cache: Count
    swap_total: Count
    swap_used: Count
    rss: Count


class Disk(msgspec.Struct, frozen=True, gc=False):
    """One element of `disk`, in bytes (docs/behaviour.md §3.5)."""

    path: str
    total: Size
    used: Size
    free: Size


class IoRate(msgspec.Struct, frozen=True, gc=False):
    """`io`: bytes per second read and written (docs/behaviour.md §3.6)."""

    read: Count
    write: Count


class NetRate(msgspec.Struct, frozen=True, gc=False):
    """`net`: bytes per second received and sent (docs/behaviour.md §3.7)."""

    received: Count = msgspec.field(name="in")
    sent: Count = msgspec.field(name="out")


class ContainerSample(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """One element of `containers` (docs/behaviour.md §3.8); the fields after `mem` are extensions, None when a line
    does not have them."""

    LEFT_OUT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset(
        {"oom_kill", "throttled", "mem_max", "pids", "io", "net"}
    )

    name: str
    mem: Count
    """`memory.current` less `inactive_file`, as `docker stats` counts it."""
    cpu: Percent | None = None
    """Percent of one core over `dt`, from `cpu.stat`'s `usage_usec`; 0.0 on a container's first line."""
    mem_nocache: Count | None = None
    oom_kill: Count | None = None
    """Processes killed for memory in the container so far."""
    throttled: Percent | None = None
    """Percent of the CPU bandwidth periods in `dt` in which the container was throttled."""
    mem_max: Count | None = None
    """`memory.max` in bytes; None also when there is no limit."""
    pids: Count | None = None
    io: IoRate | None = None
    """Bytes per second read from and written to the whole disks."""
    net: NetRate | None = None
    """Bytes per second received and sent in the container's own network namespace."""


class PressureShare(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """`pressure`: percent of `dt` in which some task stalled, per resource; a resource whose file is missing is None
    (docs/behaviour.md §3.9)."""

    LEFT_OUT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"cpu", "memory", "io"})

    cpu: Percent | None = None
    memory: Percent | None = None
    io: Percent | None = None


class CgroupSample(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """`cgroup`: the sampler's own cgroup against its limits, on cgroup v2 or v1 (docs/behaviour.md §3.11). A part
    whose file cannot be read is None (`null`); a limit there is none of is None too, and left out."""

    LEFT_OUT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"mem_max", "cpu_max", "pids_max"})

    mem: Count | None = None
    """Bytes in use less the inactive file pages, as `docker stats` counts them."""
    mem_max: Count | None = None
    """The smallest memory limit of the cgroup and its ancestors that can be read; left out without one."""
    cpu: Percent | None = None
    """The cgroup's CPU over `dt` as a percent of `cpu_max` (100 = all of the quota); None without a CPU limit."""
    cpu_max: Cores | None = None
    """The smallest CFS quota of the cgroup and its ancestors, in CPUs (quota / period); left out without one."""
    throttled: Percent | None = None
    """Percent of the CFS periods in `dt` in which the cgroup holding `cpu_max` was throttled; None without one."""
    oom_kill: Count | None = None
    """Processes of the cgroup killed for memory so far."""
    pids: Count | None = None
    """Processes and threads in the cgroup."""
    pids_max: Count | None = None
    """The smallest pids limit of the cgroup and its ancestors; left out without one."""


class CommandExit(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """`run.exit`: how `-- COMMAND` ended, in the last line (docs/behaviour.md §3.12). `code` or `signal`; the rest
    from what `wait4` reported for it and the descendants it waited for; for a COMMAND that could not be started,
    `code` and `error` only."""

    LEFT_OUT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset(
        {"code", "signal", "error", "wall", "user", "system", "max_rss"}
    )

    code: Count | None = None
    """Its exit status, when it exited (127 or 126 when it could not be started)."""
    signal: Count | None = None
    """The number of the signal that ended it, when one did."""
    error: str | None = None
    """Why it could not be started (`No such file or directory`); only then."""
    wall: Seconds | None = None
    """Seconds from its start to its end."""
    # Unbounded, unlike `CpuSeconds` (the sampler's own): a tree on thousands of cores may use more in a day.
    user: Annotated[float, Meta(ge=0, extra={"places": 2})] | None = None
    """User CPU seconds of COMMAND and every descendant it waited for (`wait4`'s `ru_utime`)."""
    system: Annotated[float, Meta(ge=0, extra={"places": 2})] | None = None
    """System CPU seconds, the same way (`ru_stime`)."""
    max_rss: Count | None = None
    """The largest resident size, in bytes, that COMMAND or any descendant it waited for reached (`ru_maxrss`)."""


class TopProcess(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """One element of `run.top`: one of the run's processes that used the most over the interval (docs/behaviour.md
    §3.12). `rss` is None when its `statm` could not be read, `read` and `write` when its `io` could not."""

    pid: Count
    name: str
    """The name a person knows it by: its `comm` (the executable's name), or an interpreter's script
    (`compute/top.py`)."""
    cpu: Percent
    """Percent of all cores' time over the interval, counted as `run.cpu` is, but a child reaped in the interval is
    charged its last part itself, listed though gone (docs/behaviour.md §3.12)."""
    rss: Count | None = None
    """Its resident bytes at the reading."""
    read: Count | None = None
    """Bytes per second it (and the children it waited for) read from storage over the interval."""
    write: Count | None = None
    """Bytes per second written, the same way."""


class RunSample(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """`run`: the run's processes (`--pid`, `--match`, `-- COMMAND`) in every line that has a run
    (docs/behaviour.md §3.12). `cpu`, `procs`, `io` and `top` are None when the run's processes could not be read
    (`cpu`, `io` and `top` also without a previous reading of them); `command` and `argc` only in the first line of a
    `-- COMMAND`, `exit` only in its last. Read back, a line of a sampler older than `io` and `top` has None."""

    LEFT_OUT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"command", "argc", "exit"})

    cpu: Percent | None = None
    """Percent of all cores' time over the interval spent by the run's processes and the children they waited for."""
    procs: Count | None = None
    """The run's processes at the reading (zombies not counted)."""
    command: tuple[str, ...] | None = None
    """COMMAND's argv, bounded: at most 32 arguments of at most 256 characters (`compute/run.py`)."""
    argc: Count | None = None
    """How many arguments COMMAND had, when `command` holds fewer."""
    exit: CommandExit | None = None
    io: IoRate | None = None
    """Bytes per second the run's processes (and the children they waited for) read from and wrote to storage over
    the interval (`/proc/<pid>/io`); None when a process's could not be read."""
    top: tuple[TopProcess, ...] | None = None
    """The processes that used the most, at most eight (`compute/top.py`); None without a CPU figure."""


class Sample(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """One line. A section whose source could not be read is None (`null`, docs/behaviour.md §3.10); read back, a
    section a line does not have is None too."""

    LEFT_OUT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"start", "run", "pressure", "cgroup"})

    v: Literal[1]
    t: Annotated[Seconds, Meta(le=LATEST_T)]
    """Unix seconds of the readings."""
    dt: Annotated[Seconds, Meta(le=LONGEST_DT)]
    """Seconds since the previous line's readings; rates are over it."""
    host: str
    cores: Count | None = None
    cpu: CpuShare | None = None
    mem: Mem | None = None
    disk: tuple[Disk, ...] | None = None
    io: IoRate | None = None
    net: NetRate | None = None
    containers: tuple[ContainerSample, ...] | UnsetType | None = None
    """Sorted by name; `UNSET` (no key at all) without `--cgroup`. Read back, a line without the key gives None."""
    self_cpu: CpuSeconds | None = None
    """The sampler's own user + system CPU seconds so far."""
    pressure: PressureShare | None = None
    """None (no key) on a kernel without pressure stall information."""
    cgroup: CgroupSample | None = None
    """The sampler's own cgroup against its limits; None (no key) when it runs under no memory or CPU limit."""
    run: RunSample | None = None
    """The run's CPU and processes; None (no key) without a run."""
    start: Annotated[Seconds, Meta(le=LATEST_T)] | None = None
    """Unix seconds of the sampler's baseline readings, the same in every line it writes: what tells one sampler's
    lines from another's in a file. Read back, a line of an older sampler has none."""
