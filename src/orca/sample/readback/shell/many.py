"""A fleet's files read on several cores at once (docs/metrics.md, "A fleet"): the time a person waits for `orca
metrics metrics/` over hundreds of instances' files is about that of one core's share of them.

When the regular files among the sources hold at least `MIN_SPREAD_BYTES` together and there is more than one usable
core, they are cut into one group of consecutive files per core (at most `MAX_PARTS`), of about as many bytes each;
each group but the last is read by a forked process (`forked.Worker`), the last and the other sources (standard input,
S3 objects) by this one, and what each source gave comes back in the sources' order. Each file is read whole by the
process that has it. A worker that cannot be started, or that fails, costs only time: its files are read here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from orca.sample.readback.shell.forked import Worker
from orca.sample.readback.shell.parts import MAX_PARTS, MIN_PART_BYTES, usable_cores
from orca.sample.readback.shell.sources import Source, SourceError

MIN_SPREAD_BYTES = 2 * MIN_PART_BYTES
"""Below this much in all, a process of its own costs more than it saves."""

_Read = TypeVar("_Read")


def read_each(found: Sequence[Source], read: Callable[[Source], _Read],
              cores: int | None = None) -> list[_Read | SourceError]:
    """`read(source)` of each source, in order, or the `SourceError` it raised; spread over `cores` processes
    (default: the usable cores) when the files are worth it."""
    files = [index for index, source in enumerate(found) if source.path is not None]
    sizes = [_size(found[index]) for index in files]
    cores = min(MAX_PARTS, len(files), usable_cores() if cores is None else cores)
    if cores < 2 or sum(sizes) < MIN_SPREAD_BYTES:
        return [_outcome(read, source) for source in found]
    groups = _groups(files, sizes, cores)
    workers: list[Worker | None] = []
    outcomes: dict[int, _Read | SourceError] = {}
    try:
        for group in groups[:-1]:
            workers.append(Worker.started(partial(_read_group, read, [found[index] for index in group])))
        mine = set(groups[-1]) | (set(range(len(found))) - set(files))
        for index in sorted(mine):
            outcomes[index] = _outcome(read, found[index])
        for worker, group in zip(workers, groups, strict=False):
            result = None if worker is None else worker.result()
            if not isinstance(result, list) or len(result) != len(group):  # the worker failed: its files read here
                result = _read_group(read, [found[index] for index in group])
            outcomes.update(zip(group, result, strict=True))
    finally:
        for worker in workers:
            if worker is not None:
                worker.stop()
    return [outcomes[index] for index in range(len(found))]


def _size(source: Source) -> int:
    try:
        return os.stat(source.path or "").st_size
    except OSError:
        return 0  # said when it is read


def _groups(files: list[int], sizes: list[int], count: int) -> list[list[int]]:
    """`files` cut into `count` runs of consecutive files (fewer when some are large), of about as many bytes each.

    >>> _groups([0, 1, 2, 3], [10, 10, 10, 10], 2), _groups([0, 1, 2], [100, 1, 1], 2)
    ([[0, 1], [2, 3]], [[0], [1, 2]])
    """
    total = sum(sizes)
    groups: list[list[int]] = [[]]
    taken = 0
    for index, size in zip(files, sizes, strict=True):
        if groups[-1] and taken >= total * len(groups) / count and len(groups) < count:
            groups.append([])
        groups[-1].append(index)
        taken += size
    return groups


def _read_group(read: Callable[[Source], _Read], group: list[Source]) -> list[_Read | SourceError]:
    return [_outcome(read, source) for source in group]


def _outcome(read: Callable[[Source], _Read], source: Source) -> _Read | SourceError:
    try:
        return read(source)
    except SourceError as error:
        return error
