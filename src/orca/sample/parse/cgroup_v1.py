"""cgroup v1 files of the memory, cpuacct and cpu controllers (Documentation/admin-guide/cgroup-v1/memory.rst,
cpuacct.rst; Documentation/scheduler/sched-bwc.rst). Every function takes a file's text and returns a `Result`: the
value, or a `ParseError` naming the file. The files v1 shares with v2 are read by `parse/cgroup.py` (`cpu.stat` and
`memory.stat` as flat-keyed files, `pids.current`, `pids.max`) and `parse/cpu_limit.py` (the CFS quota and period).

`memory.limit_in_bytes` takes `-1` for "no limit" and then reads back as the largest limit the kernel keeps (its
page counter's maximum in bytes, 9223372036854771712 with 4 KiB pages): any limit from `NO_LIMIT_FROM` on is none.
"""

from __future__ import annotations

from collections.abc import Mapping

from returns.result import Failure, Result, Success

from orca.sample.parse.cgroup import flat_value
from orca.sample.parse.errors import ParseError
from orca.sample.parse.numbers import u64

NO_LIMIT_FROM = 1 << 62
"""4 EiB: a v1 memory limit this large is the kernel's "unlimited" (`-1` written), whatever the page size; no
machine has this much memory."""
NS_PER_USEC = 1000


def _bytes(text: str, source: str) -> Result[int, ParseError]:
    value = u64(text.strip())
    if value is None:
        return Failure(ParseError(source, "not a number of bytes"))
    return Success(value)


def usage_in_bytes(text: str) -> Result[int, ParseError]:
    """`memory.usage_in_bytes`: the bytes the cgroup and its descendants use.

    >>> usage_in_bytes("1216512\\n")
    <Success: 1216512>
    """
    return _bytes(text, "memory.usage_in_bytes")


def limit_in_bytes(text: str) -> Result[int | None, ParseError]:
    """`memory.limit_in_bytes`: the limit in bytes; None when there is none (`-1`, or the kernel's maximum).

    >>> limit_in_bytes("4194304\\n"), limit_in_bytes("9223372036854771712\\n"), limit_in_bytes("-1\\n")
    (<Success: 4194304>, <Success: None>, <Success: None>)
    """
    stripped = text.strip()
    if stripped == "-1":
        return Success(None)
    return _bytes(stripped, "memory.limit_in_bytes").map(no_limit_as_none)


def no_limit_as_none(limit: int) -> int | None:
    """A v1 memory limit, None from `NO_LIMIT_FROM` on (the kernel's "unlimited").

    >>> no_limit_as_none(268435456), no_limit_as_none(9223372036854710272)
    (268435456, None)
    """
    return None if limit >= NO_LIMIT_FROM else limit


def hierarchical_limit(memory_stat: Mapping[str, int]) -> int | None:
    """A parsed v1 `memory.stat`'s `hierarchical_memory_limit`: the limit of the cgroup with regard to its ancestors
    (those it cannot see included); None without one.

    >>> hierarchical_limit({"hierarchical_memory_limit": 268435456}), hierarchical_limit({})
    (268435456, None)
    """
    limit = memory_stat.get("hierarchical_memory_limit")
    return None if limit is None else no_limit_as_none(limit)


def oom_kills(text: str) -> Result[int, ParseError]:
    """`memory.oom_control`'s `oom_kill`: processes of the cgroup killed by any OOM killer so far. A kernel older
    than 4.13 prints no `oom_kill`: a failure.

    >>> oom_kills("oom_kill_disable 0\\nunder_oom 0\\noom_kill 3\\n")
    <Success: 3>
    >>> oom_kills("oom_kill_disable 0\\nunder_oom 0\\n").failure().reason
    'no oom_kill line'
    """
    value = flat_value(text, "oom_kill")
    if value is not None:
        return Success(value)
    return Failure(ParseError("memory.oom_control", "no oom_kill line"))


def cpuacct_usage_usec(text: str) -> Result[int, ParseError]:
    """`cpuacct.usage` (nanoseconds of CPU the cgroup and its descendants used) in microseconds, as v2's `cpu.stat`
    counts `usage_usec`.

    >>> cpuacct_usage_usec("2000000123\\n")
    <Success: 2000000>
    """
    value = u64(text.strip())
    if value is None:
        return Failure(ParseError("cpuacct.usage", "not a number of nanoseconds"))
    return Success(value // NS_PER_USEC)
