"""How many parts a large file is read in, each by a process of its own (README, "Performance"): the time a person
waits for `orca metrics` is then the time of one part, not of the whole file."""

from __future__ import annotations

MIN_PART_BYTES = 4 * 2**20
"""Below this much per part, a process of its own costs more than it saves (starting it, sending its fold back)."""
MAX_PARTS = 4
DRAWING_HEAD_START_BYTES = 32 * 2**20
"""For `--plot`, how much shorter the part of the process that draws is: about what a process reads in the time
matplotlib takes to import, which it does while the others still read theirs (both scale with the machine's speed)."""


def part_count(size: int, cores: int, min_part_bytes: int = MIN_PART_BYTES) -> int:
    """How many parts to read a file of `size` bytes in, with `cores` usable cores.

    >>> [part_count(size * 2**20, 2) for size in (1, 7, 8, 500)], part_count(500 * 2**20, 1)
    ([1, 1, 2, 2], 1)
    """
    return max(1, min(cores, MAX_PARTS, size // min_part_bytes))
