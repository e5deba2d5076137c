"""A large file read by several processes at once (README, "Performance"): the time a person waits for `orca metrics`
is the time of one part, not of the whole file.

A regular file of at least `MIN_PART_BYTES` per part is cut at line starts into one part per usable core (at most
`MAX_PARTS`: `compute/report/parts.py`); each part but the last is read and folded by a forked process, the last by
this one, and the folds are merged in the order of the file, which gives the summaries one process reading it all
would give (`HostFolds.merge`). A worker that cannot be started, or that fails, costs only time: its part is read here.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import signal
from collections.abc import Callable
from functools import partial

from orca.sample.compute.report.hosts import HostFolds, fold_hosts
from orca.sample.compute.report.parts import MIN_PART_BYTES, part_count
from orca.sample.shell.machine.own_cgroup import own_cpu_limit
from orca.sample.shell.readback.sources import Source, Tally, decoded_batches, part_of, part_starts

Part = tuple[HostFolds, Tally]


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
    starts = [0]
    if source.path is not None:
        with open(source.path, "rb", buffering=0) as file:
            size = os.fstat(file.fileno()).st_size
            if parts is not None:
                wanted = parts
            else:  # the cores asked for only when the file is large enough to be cut (a directory of many files)
                wanted = part_count(size, usable_cores(), MIN_PART_BYTES) if size >= 2 * MIN_PART_BYTES else 1
            if wanted > 1:
                starts = part_starts(lambda offset, length: os.pread(file.fileno(), length, offset), size, wanted)
    if len(starts) == 1:
        return _fold(source)
    ends: list[int | None] = [*starts[1:], None]
    ranges = list(zip(starts, ends, strict=True))
    workers: list[_Worker | None] = []
    try:
        for start, end in ranges[:-1]:
            workers.append(_Worker.started(partial(_fold_part, source, start, end)))
        last = _fold_part(source, *ranges[-1])
        folds, tally = HostFolds(), Tally()
        for worker, (start, end) in zip(workers, ranges, strict=False):
            part = None if worker is None else worker.result()
            if part is None:
                part = _fold_part(source, start, end)  # the worker failed: its part read here
            folds.merge(part[0])
            tally.add(part[1])
    finally:
        for worker in workers:
            if worker is not None:
                worker.stop()
    folds.merge(last[0])
    tally.add(last[1])
    return folds, tally


def _fold_part(source: Source, start: int, end: int | None) -> Part:
    return _fold(part_of(source, start, end))


def _fold(source: Source) -> Part:
    tally = Tally()
    return fold_hosts(decoded_batches(source, tally)), tally


class _Worker:
    """A forked process folding one part; its fold comes back pickled through a pipe."""

    def __init__(self, pid: int, pipe: int) -> None:
        self.pid = pid
        self.pipe: int | None = pipe
        self.reaped = False

    @classmethod
    def started(cls, work: Callable[[], Part]) -> _Worker | None:
        """The worker doing `work`; None when no process can be made (the caller does the work itself)."""
        try:
            reader, writer = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(reader)
            os.close(writer)
            return None
        if pid == 0:  # the worker: whatever happens, it leaves by `_exit`, never by the caller's code
            status = 1
            try:
                os.close(reader)
                data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                with open(writer, "wb") as pipe:
                    pipe.write(data)
                status = 0
            finally:
                os._exit(status)
        os.close(writer)
        return cls(pid, reader)

    def result(self) -> Part | None:
        """The worker's fold, once it has ended; None when it failed."""
        if self.pipe is None:
            return None
        with open(self.pipe, "rb") as pipe:
            self.pipe = None
            data = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        self.reaped = True
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        try:
            part = pickle.loads(data)  # written by our own fork, above
        except Exception:  # cut short
            return None
        if isinstance(part, tuple) and len(part) == 2 and isinstance(part[0], HostFolds) and isinstance(part[1], Tally):
            return part
        return None

    def stop(self) -> None:
        """Ended and reaped, if it still runs (this process is leaving early)."""
        if self.pipe is not None:
            os.close(self.pipe)
            self.pipe = None
        if not self.reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.reaped = True
