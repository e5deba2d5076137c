"""The platform's facts, read once: where its processes are (/proc, or psutil to ask), the constants the process
readings are scaled by, and the open-files limit the kept descriptors are bounded by.

Light to import (`os` and the standard library's smallest modules): the process functions decide their platform
from it as they are imported."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
from collections.abc import Iterator

PROC = "/proc"
"""The machine's own /proc."""


@functools.cache
def psutil_installed() -> bool:
    """Whether `import psutil` would work, without importing it (it costs milliseconds a start)."""
    try:
        return importlib.util.find_spec("psutil") is not None
    except (ImportError, ValueError):
        return False


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


OTHER_FILES = 64
"""Descriptors left to all but the pools kept between lines (docs/behaviour.md §4.6): the standard streams, the
pidfd and the signal pipe, the output and `--keep`'s rewrite, an S3 connection, the kernel files' own, the opens of a
line's reads by path, and an embedding program's few."""


def kept_files_at_most() -> int:
    """How many descriptors one pool kept open between lines may hold (the run's process files, `--match`'s `comm`
    files, the containers' cgroup files): a quarter of what the open-files limit leaves after `OTHER_FILES`, so the
    three together leave room for everything else a line opens; 0 under a limit of 64 or less, or none known."""
    return max(0, (open_files_limit() - OTHER_FILES) // 4)


@contextlib.contextmanager
def open_files_raised() -> Iterator[None]:
    """Inside, the soft limit on open descriptors raised to the hard one (docs/behaviour.md §4.6), where it is lower
    and may be (macOS caps the soft limit below an unlimited hard one: it stays as it was); the caller's own again
    after."""
    try:
        import resource
    except ImportError:
        yield
        return
    saved: tuple[int, int] | None = None
    with contextlib.suppress(OSError, ValueError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard and soft != resource.RLIM_INFINITY:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            saved = (soft, hard)
    try:
        yield
    finally:
        if saved is not None:
            with contextlib.suppress(OSError, ValueError):
                resource.setrlimit(resource.RLIMIT_NOFILE, saved)
