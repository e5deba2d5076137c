"""The platform's constants the process readings are scaled by, read once."""

from __future__ import annotations

import functools
import os


@functools.cache
def _sysconf(name: str, fallback: int) -> int:
    """`os.sysconf(name)`, read once; `fallback` where the platform has no such value (docs/behaviour.md §1.3)."""
    try:
        value = os.sysconf(name)
    except (AttributeError, ValueError, OSError):
        return fallback
    return value if value > 0 else fallback


def page_size() -> int:
    return _sysconf("SC_PAGE_SIZE", 4096)


def clock_ticks() -> int:
    """Clock ticks per second (USER_HZ), the unit of /proc/<pid>/stat's times."""
    return _sysconf("SC_CLK_TCK", 100)


def open_files_limit() -> int:
    """The soft limit on open descriptors; 0 (keep none) where it cannot be read."""
    try:
        import resource  # POSIX only (docs/behaviour.md §1.3)

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        return soft if soft != resource.RLIM_INFINITY else 1 << 20
    except (ImportError, OSError, ValueError):
        return 0
