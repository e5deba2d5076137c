"""What cgroup v1's memory and cpuacct files mean beyond v2's (Documentation/admin-guide/cgroup-v1/memory.rst,
cpuacct.rst): `compute/own_cgroup.py` reads their numbers as it reads v2's single-value and flat-keyed files
(`parse/cgroup.py`, `parse/cpu_limit.py` for the CFS quota and period), then takes these meanings.

`memory.limit_in_bytes` takes `-1` for "no limit" and then reads back as the largest limit the kernel keeps (its
page counter's maximum in bytes, 9223372036854771712 with 4 KiB pages): any limit from `NO_LIMIT_FROM` on is none.
"""

from __future__ import annotations

NO_LIMIT_FROM = 1 << 62
"""4 EiB: a v1 memory limit this large is the kernel's "unlimited" (`-1` written), whatever the page size; no
machine has this much memory."""
NS_PER_USEC = 1000
"""`cpuacct.usage` counts nanoseconds; v2's `cpu.stat` `usage_usec`, microseconds."""


def no_limit_as_none(limit: int) -> int | None:
    """A v1 memory limit, None from `NO_LIMIT_FROM` on (the kernel's "unlimited").

    >>> no_limit_as_none(268435456), no_limit_as_none(9223372036854710272)
    (268435456, None)
    """
    return None if limit >= NO_LIMIT_FROM else limit
