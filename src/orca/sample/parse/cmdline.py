"""/proc/<pid>/cmdline: NUL-separated arguments."""

from __future__ import annotations


def argv0(data: bytes) -> str:
    """The first argument (up to the first NUL), decoded with replacement; "" for a kernel thread's empty file."""
    raise NotImplementedError  # issue 2: being written
