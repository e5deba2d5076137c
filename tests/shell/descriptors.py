"""What this test process holds open: shared by the tests of kept descriptors."""

from __future__ import annotations

import os


def open_descriptors() -> list[str]:
    """Where each of this process's descriptors leads (a kept /proc file shows as its path)."""
    links = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return links
