"""Lines of a kernel file that come back unchanged line after line (an idle disk's in /proc/diskstats, an idle
interface's and the headers in /proc/net/dev), each parsed once and its frozen record handed out again."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

KERNEL_LINE_AT_MOST = 512
"""Longer than any line of diskstats (20 counters of at most 20 digits, a name of at most 32 characters and their
spaces) or net/dev (a name of at most 15 characters and 16 counters) the kernel prints."""


def parsed_lines(text: str, parse_line: functools._lru_cache_wrapper[T]) -> list[T]:
    """Each line of `text` parsed by `parse_line`, through its cache, but for a line longer than any the kernel
    prints: that one is parsed without the cache, which so stays small whatever the text.

    The usual text, every line no longer than the kernel prints, is mapped through the cache in C: no Python frame
    per line."""
    lines = text.splitlines()
    if not lines or max(map(len, lines)) <= KERNEL_LINE_AT_MOST:
        return list(map(parse_line, lines))
    uncached: Callable[[str], T] = parse_line.__wrapped__
    return [parse_line(line) if len(line) <= KERNEL_LINE_AT_MOST else uncached(line) for line in lines]
