"""A fleet's sources read through one `concurrent.futures` executor (docs/metrics.md, "A fleet at scale", "On a
cluster"): the local one (`pool.py`) or a Dask cluster's (`cluster.py`). A task carries consecutive sources' names and
places (`_groups`), never their lines nor credentials, and gives back each source's folded runs (`SourceRuns`) or why
it could not be read, put back in the sources' order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait

from orca.sample.parse.errors import reason_of
from orca.sample.readback.shell.fleet_read import SourceRuns
from orca.sample.readback.shell.parts import MIN_PART_BYTES, say_failed, usable_cores
from orca.sample.readback.shell.pool import local_executor
from orca.sample.readback.shell.progress import TICK_SECONDS, Progress
from orca.sample.readback.shell.sources import Source, SourceError, sources_at

MIN_SPREAD_BYTES = 2 * MIN_PART_BYTES
"""Below this much in all, the local executor's processes cost more than they save."""
GROUP_SOURCES = 16
"""At most this many sources a task: as many objects as one process fetches at once (`s3_objects.FETCHES`)."""
GROUPS_PER_WORKER = 4
"""Tasks of about an even share of the bytes divided this many times a worker, so that a worker that is slower (a
shared core, a larger object) holds up the end by a small task, not a large one."""

Outcome = SourceRuns | SourceError
Read = Callable[[Source], SourceRuns]
Places = tuple[tuple[str, str], ...]


def read_each(found: Sequence[Source], read: Read, progress: Progress | None = None, executor: Executor | None = None,
              workers: int = 0, cores: int | None = None) -> list[Outcome]:
    """`read(source)` of each source, in order, or the `SourceError` it raised. On `executor` (a cluster's, of
    `workers` workers), every source that can be found elsewhere is read there; else, when they are worth it, on the
    local executor over `cores` processes (default: the usable cores); else here, one after the other. Each source
    read is told to `progress`."""
    progress = progress or Progress(len(found), None)
    if executor is not None:
        return _spread(executor, max(1, workers), found, read, progress, remote=True)
    movable = [source for source in found if source.place is not None]
    cores = min(len(movable), usable_cores() if cores is None else cores)
    if cores < 2 or sum(source.size for source in movable) < MIN_SPREAD_BYTES:
        return [_here(read, source, progress) for source in found]
    with local_executor(cores) as pool:
        return _spread(pool, cores, found, read, progress, remote=False)


def read_group(places: Places, read: Read) -> list[Outcome]:
    """A task, in a process of the executor (or on a cluster's worker): the sources at `places` (each its name and
    where it is) found again and read."""
    try:
        found = sources_at(places)
    except Exception as error:  # no client can be made here (no region, a bad endpoint setting)
        return [SourceError(f"{name}: {reason_of(error)}") for name, _ in places]
    return [_outcome(read, source) for source in found]


def _spread(executor: Executor, workers: int, found: Sequence[Source], read: Read, progress: Progress,
            remote: bool) -> list[Outcome]:
    movable = [index for index, source in enumerate(found) if source.place is not None]
    tasks: dict[Future[list[Outcome]], list[int]] = {}
    unsent: list[list[int]] = []
    unstarted: Exception | None = None
    for group in _groups([found[index].size for index in movable], workers):
        indices = [movable[position] for position in group]
        if unstarted is None:
            try:
                tasks[executor.submit(read_group, _places(found, indices), read)] = indices
                continue
            except Exception as error:  # no process could be made, or the pool broke: what failed would fail again
                unstarted = error
        unsent.append(indices)
    if unstarted is not None:
        _say_failed(found, [index for indices in unsent for index in indices], "no worker could be started for",
                    unstarted, progress)
    outcomes: dict[int, Outcome] = {}
    for index in sorted(set(range(len(found))) - set(movable)):  # standard input, pipes: here, meanwhile
        outcomes[index] = _here(read, found[index], progress)
    pending: set[Future[list[Outcome]]] = set(tasks)
    while pending:
        finished, pending = wait(pending, timeout=TICK_SECONDS, return_when=FIRST_COMPLETED)
        for task in finished:
            _take(outcomes, tasks[task], _result(task, tasks[task], found, read, remote, progress), progress)
        progress.tick()
    for indices in unsent:
        _take(outcomes, indices, read_group(_places(found, indices), read), progress)
    return [outcomes[index] for index in range(len(found))]


def _result(task: Future[list[Outcome]], indices: list[int], found: Sequence[Source], read: Read,
            remote: bool, progress: Progress) -> list[Outcome]:
    """What a task gave; for a task that failed, its sources read here (locally: its process died or raised, which
    is said, and costs only time) or each unread with why (a cluster's task that failed for good: KilledWorker, an
    import error)."""
    try:
        result = task.result()
    except Exception as error:
        if remote:
            return [SourceError(f"{found[index].name}: {reason_of(error)}") for index in indices]
        _say_failed(found, indices, "a worker failed reading", error, progress)
        return read_group(_places(found, indices), read)
    if len(result) != len(indices):  # not a task of ours: never, but the lines must not be mismatched
        return [SourceError(f"{found[index].name}: the task gave back {len(result)} results") for index in indices]
    return result


def _say_failed(found: Sequence[Source], indices: list[int], what: str, error: Exception, progress: Progress) -> None:
    """As a part's worker that failed is said (`parts.say_failed`), naming the first of the task's sources, on a
    line of its own: the progress line, if shown, erased first (it comes back at the next tick)."""
    progress.end()
    first = found[indices[0]].name
    if len(indices) == 1:
        say_failed(first, f"{what} it", error, "it was read here")
    else:
        say_failed(f"{first} and {len(indices) - 1} more", f"{what} them", error, "they were read here")


def _take(outcomes: dict[int, Outcome], indices: list[int], result: list[Outcome], progress: Progress) -> None:
    outcomes.update(zip(indices, result, strict=True))
    progress.add(len(result), sum(each.tally.samples for each in result if isinstance(each, SourceRuns)))


def _places(found: Sequence[Source], indices: list[int]) -> Places:
    return tuple((found[index].name, found[index].place or found[index].name) for index in indices)


def _here(read: Read, source: Source, progress: Progress) -> Outcome:
    outcome = _outcome(read, source)
    progress.add(1, outcome.tally.samples if isinstance(outcome, SourceRuns) else 0)
    return outcome


def _outcome(read: Read, source: Source) -> Outcome:
    try:
        return read(source)
    except SourceError as error:
        return error


def _groups(sizes: list[int], workers: int) -> list[list[int]]:
    """Positions in `sizes` cut into groups of consecutive ones: a new group after `GROUP_SOURCES`, or once a group
    holds an even share of the bytes among `GROUPS_PER_WORKER` groups a worker.

    >>> _groups([10] * 8, 1), _groups([100, 1, 1, 1], 1)
    ([[0, 1], [2, 3], [4, 5], [6, 7]], [[0], [1, 2, 3]])
    >>> [len(group) for group in _groups([10] * 40, 1)]
    [10, 10, 10, 10]
    >>> [len(group) for group in _groups([10] * 40, 8)]
    [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
    >>> [len(group) for group in _groups([10] * 100, 1)]
    [16, 16, 16, 16, 16, 16, 4]
    """
    share = sum(sizes) / (workers * GROUPS_PER_WORKER)
    groups: list[list[int]] = []
    taken = 0
    for position, size in enumerate(sizes):
        if not groups or len(groups[-1]) >= GROUP_SOURCES or (share and taken >= share):
            groups.append([])
            taken = 0
        groups[-1].append(position)
        taken += size
    return groups
