"""A large file read by several processes at once (docs/metrics.md): the time a person waits for `orca metrics`
is the time of one part, not of the whole file.

A regular file of at least `MIN_PART_BYTES` per part is cut at line starts into one part per usable core (at most
`MAX_PARTS`); each part but the last is read and folded by a forked process, the last by
this one, and the folds are merged in the order of the file, which gives the summaries one process reading it all
would give (`HostFolds.merge`). A worker that cannot be started, or that fails, costs only time: its part is read here.
For `--plot` each part also folds the chart's series, merged the same way (`RunSeries.merge`), so the chart too is the
one a single reader draws; so is what else is folded alongside (`fold_source_with`: a fleet's usage).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from orca.sample.line_format import Sample
from orca.sample.readback.shell.forked import Worker
from orca.sample.readback.shell.sources import Source, Tally, decoded_batches, part_of, part_starts
from orca.sample.readback.summary.hosts import HostFolds, fold_hosts
from orca.sample.shell.machine.own_cgroup import own_cpu_limit

if TYPE_CHECKING:  # the chart's modules are loaded by --plot only
    from orca.sample.readback.chart.run_series import RunSeries

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


class Alongside(Protocol):
    """What else is folded from a source's lines in the same pass as its summaries (the chart's series, a fleet's
    usage): batches in the order written, and the fold of the lines after these merged in."""

    def add(self, batch: Sequence[Sample]) -> None: ...

    def merge(self, later: Any) -> None: ...


Part = tuple[HostFolds, Tally]
Along = tuple[HostFolds, Tally, Alongside]
"""A part's folds, what it passed over, and what was folded alongside."""
Drawn = tuple[HostFolds, Tally, "RunSeries"]
"""A part's folds, what it passed over, and the series of its runs to draw."""
_Folded = TypeVar("_Folded", Part, Along)


def usable_cores(proc: str = "/proc") -> int:
    """The cores this process may use at once: those it may run on (its affinity, as a container's cpuset limits
    it), and no more than its cgroup's CPU bandwidth limit rounded up (a Kubernetes pod's CPU limit): a process
    more than the limit allows would only wait for the quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # a system without affinity
        cores = os.cpu_count() or 1
    limit = own_cpu_limit(proc)
    return cores if limit is None else max(1, min(cores, math.ceil(limit)))


def fold_source(source: Source, parts: int | None = None) -> Part:
    """The folds of a source's lines and what it passed over; a regular file large enough in `parts` parts
    (default: `part_count` for its size and the usable cores), read at once by that many processes."""
    return _in_parts(source, parts, _fold, _merged)


def fold_source_drawn(source: Source, parts: int | None = None,
                      meanwhile: Callable[[], object] | None = None) -> Drawn:
    """`fold_source`, and the series of each run to draw, folded in the same pass over the lines. `meanwhile` (the
    drawing's imports) is called once this process has read its part, while the others may still read theirs: its
    part is the shorter for it (`DRAWING_HEAD_START_BYTES`)."""
    from orca.sample.readback.chart.run_series import RunSeries

    folds, tally, runs = fold_source_with(source, RunSeries, parts, meanwhile)
    assert isinstance(runs, RunSeries)
    return folds, tally, runs


def fold_source_with(source: Source, alongside: Callable[[], Alongside], parts: int | None = None,
                     meanwhile: Callable[[], object] | None = None) -> Along:
    """`fold_source`, and a new `alongside()` folded from the same batches of lines (merged as the summaries' folds
    are); `meanwhile` as for `fold_source_drawn`."""
    return _in_parts(source, parts, partial(_fold_with, alongside), _merged_with, meanwhile)


def _in_parts(source: Source, parts: int | None, fold: Callable[[Source], _Folded],
              merged: Callable[[_Folded, _Folded], _Folded], meanwhile: Callable[[], object] | None = None) -> _Folded:
    """`fold` of the whole source, made as `merged` folds of its parts when it is a file worth cutting; `meanwhile`
    called between this process's part and the workers' results, when there are workers."""
    starts: list[int] = [0]
    if source.path is not None:
        with open(source.path, "rb", buffering=0) as file:
            size = os.fstat(file.fileno()).st_size
            if parts is not None:
                wanted = parts
            else:  # the cores asked for only when the file is large enough to be cut (a directory of many files)
                wanted = part_count(size, usable_cores(), MIN_PART_BYTES) if size >= 2 * MIN_PART_BYTES else 1
            if wanted > 1:
                # This process's part is the last: shorter when it has `meanwhile` to do after it.
                starts = part_starts(lambda offset, length: os.pread(file.fileno(), length, offset), size, wanted,
                                     shorter_last=0 if meanwhile is None else DRAWING_HEAD_START_BYTES)
    if len(starts) == 1:
        return fold(source)
    ends: list[int | None] = [*starts[1:], None]
    ranges = list(zip(starts, ends, strict=True))
    workers: list[Worker | None] = []
    try:
        for start, end in ranges[:-1]:
            workers.append(Worker.started(partial(_fold_part, fold, source, start, end)))
        last = _fold_part(fold, source, *ranges[-1])
        if meanwhile is not None:
            meanwhile()
        done: _Folded | None = None
        for worker, (start, end) in zip(workers, ranges, strict=False):
            part = None if worker is None else _checked(worker.result(), type(last))
            if part is None:
                part = _fold_part(fold, source, start, end)  # the worker failed: its part read here
            done = part if done is None else merged(done, part)
    finally:
        for worker in workers:
            if worker is not None:
                worker.stop()
    return last if done is None else merged(done, last)


def _checked(part: object, kind: type[_Folded]) -> _Folded | None:
    """A worker's fold, if it is of `kind`'s shape (the caller's own fold's)."""
    if isinstance(part, kind) and len(part) in (2, 3) and isinstance(part[0], HostFolds) and isinstance(
            part[1], Tally):
        return part
    return None


def _fold_part(fold: Callable[[Source], _Folded], source: Source, start: int, end: int | None) -> _Folded:
    return fold(part_of(source, start, end))


def _fold(source: Source) -> Part:
    tally = Tally()
    return fold_hosts(decoded_batches(source, tally)), tally


def _merged(done: Part, later: Part) -> Part:
    done[0].merge(later[0])
    done[1].add(later[1])
    return done


def _fold_with(alongside: Callable[[], Alongside], source: Source) -> Along:
    tally, also = Tally(), alongside()
    return fold_hosts(_also(decoded_batches(source, tally), also)), tally, also


def _also(batches: Iterator[list[Sample]], also: Alongside) -> Iterator[list[Sample]]:
    """`batches`, each also folded into `also`."""
    for batch in batches:
        also.add(batch)
        yield batch


def _merged_with(done: Along, later: Along) -> Along:
    _merged((done[0], done[1]), (later[0], later[1]))
    done[2].merge(later[2])
    return done
