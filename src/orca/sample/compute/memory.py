"""The `mem` section (docs/behaviour.md §3.4) from /proc/meminfo and the run's resident bytes."""

from __future__ import annotations

from orca.sample.line_format import Mem
from orca.sample.parse.meminfo import MemInfo

MEMINFO_KEYS = frozenset(
    {"MemTotal", "MemAvailable", "MemFree", "Buffers", "Cached", "Active(file)", "Inactive(file)", "SwapTotal",
     "SwapFree"}
)
"""The only /proc/meminfo keys `memory_section` reads: the parser reads no others."""


def memory_section(info: MemInfo, rss_bytes: int) -> Mem | None:
    """docs/behaviour.md §3.4 in bytes; None when /proc/meminfo has no MemTotal.

    `available` is MemAvailable, or MemFree + Buffers + Cached on a kernel without it; `used` is total - available,
    never negative; `cache` the file-backed pages, Active(file) + Inactive(file), else Cached; `swap_used`
    SwapTotal - SwapFree, never negative.

    >>> memory_section(MemInfo({"MemTotal": 1000, "MemFree": 100, "Buffers": 50, "Cached": 250}), 7)
    Mem(total=1000, used=600, available=400, cache=250, swap_total=0, swap_used=0, rss=7)
    >>> memory_section(MemInfo({"MemFree": 100}), 7) is None
    True
    """
    values = info.bytes_by_key
    total = values.get("MemTotal")
    if total is None:
        return None
    available = values.get("MemAvailable")
    if available is None:
        # Kernels before 3.14 have no MemAvailable: the estimate free(1) used then.
        available = values.get("MemFree", 0) + values.get("Buffers", 0) + values.get("Cached", 0)
    active_file, inactive_file = values.get("Active(file)"), values.get("Inactive(file)")
    cache = (
        values.get("Cached", 0) if active_file is None or inactive_file is None else active_file + inactive_file
    )
    swap_total = values.get("SwapTotal", 0)
    # A missing SwapFree reads as all of it free, rather than inventing swap use.
    swap_free = values.get("SwapFree", swap_total)
    return Mem(
        total=total,
        used=max(0, total - available),
        available=available,
        cache=cache,
        swap_total=swap_total,
        swap_used=max(0, swap_total - swap_free),
        rss=rss_bytes,
    )
