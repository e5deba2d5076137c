"""A source's runs read and shown (docs/metrics.md, "Large files"): a large regular file cut at line starts
(`part_starts`) and read from its one open file, the first part here, each other by a forked process of the local
executor (`pool.py`), which shows the runs that begin and close in it into a file of its own (`Shown.elsewhere`) and
hands back the rest (`runs.Runs`); they are taken in file order. A worker that fails costs only time."""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import IO

from orca.sample.line_format import Sample
from orca.sample.parse.errors import reason_of
from orca.sample.readback.gather.fold import SECTIONS
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.gather.section import Section
from orca.sample.readback.gather.series import Series
from orca.sample.readback.runs import Lone, Run, Runs, run_key
from orca.sample.readback.sample_line import decode_all
from orca.sample.readback.shell.pool import local_executor
from orca.sample.readback.shell.run_rows import file_or_memory
from orca.sample.readback.shell.shown import Shown, Totals
from orca.sample.readback.shell.sources import Source, Tally, decoded, descriptor_batches, part_starts
from orca.sample.readback.words import printable
from orca.sample.shared.own_cgroup import own_cpu_limit

MIN_PART_BYTES = 4 * 2**20
"""Below this much per part, a process of its own costs more than it saves (starting it, sending its runs back)."""
MAX_PARTS = 4
DRAWING_HEAD_START_BYTES = 32 * 2**20
"""For `--plot`, how much shorter the part of the process that draws is: about what a process reads in the time
matplotlib takes to import, which it does while the others still read theirs (both scale with the machine's speed)."""
Sections = Sequence[Callable[[], Section]]


END_BYTES = 64 * 1024
"""How much of a file's start and end is looked at for its first and last lines (`one_run_at_ends`)."""


def one_run_at_ends(path: str) -> bool:
    """Whether the first and the last whole line of the regular file at `path` are samples of one run (one host and
    `start`): then it most likely holds that run alone. False when either cannot be told (a line longer than
    `END_BYTES`, not a sample, a file that cannot be read)."""
    try:
        with open(path, "rb") as file:
            head = file.read(END_BYTES)
            size = os.fstat(file.fileno()).st_size
            tail = os.pread(file.fileno(), END_BYTES, max(0, size - END_BYTES))
    except OSError:
        return False
    first, _, _ = head.partition(b"\n")
    last = tail[: tail.rfind(b"\n")].rpartition(b"\n")[2] if tail.count(b"\n") >= 2 or size <= END_BYTES else b""
    if len(first) == len(head) or not last:
        return False
    ends, refused = decode_all([first, last])
    return not refused and len(set(map(run_key, ends))) == 1


def part_count(size: int, cores: int, min_part_bytes: int = MIN_PART_BYTES) -> int:
    """How many parts to read a file of `size` bytes in, with `cores` usable cores.

    >>> [part_count(size * 2**20, 2) for size in (1, 7, 8, 500)], part_count(500 * 2**20, 1)
    ([1, 1, 2, 2], 1)
    """
    return max(1, min(cores, MAX_PARTS, size // min_part_bytes))


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


def show_runs(source: Source, shown: Shown, drawn: int = 0, parts: int | None = None,
              meanwhile: Callable[[], object] | None = None, sections: Sections = SECTIONS) -> Tally:
    """Every run of `source` shown through `shown` as it closes (the first `drawn` of them with their series), and
    what was passed over in it. A regular file large enough is read in `parts` parts (default: `part_count` for its
    size and the usable cores) by that many processes at once; `meanwhile` (the drawing's imports) is called once this
    process has read its part, while the others may still read theirs: its part is the shorter for it. Each run's
    fold gathers `sections` (a fleet's add each run's usage).

    A stream (standard input, a pipe) that has not ended when Ctrl-C comes (SIGINT: `KeyboardInterrupt`) has its
    runs shown as the lines read so far make them, then the interrupt goes on to the caller."""
    tally = Tally()
    state = Runs(drawn, sections=sections, lone=shown.takes_lines())
    if source.path is None:
        try:
            _read(decoded(source.batches(), tally), state, shown, source.name)
        except KeyboardInterrupt:
            for run in state.close():
                shown.show(source.name, run)
            raise
    else:
        descriptor = os.open(source.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            _read_file(descriptor, source.name, tally, state, shown, parts, meanwhile, sections)
        finally:
            os.close(descriptor)
    for run in state.close():
        shown.show(source.name, run)
    return tally


def _read(batches: Iterator[list[Sample]], runs: Runs, shown: Shown, name: str) -> list[Run]:
    """Each batch into `runs`; the runs they close shown, but those that may have begun before (handed back)."""
    handed: list[Run] = []
    for batch in batches:
        handed.extend(_shown(runs.add(batch), runs, shown, name))
    return handed


def _shown(closed: list[Run | Lone], runs: Runs, shown: Shown, name: str) -> Iterator[Run]:
    """The runs `closed` shown in their order, those of one line held as lines (`Lone`) given together; the runs
    that may have begun before, not shown but given back."""
    lines: list[Sample] = []
    for run in closed:
        if not isinstance(run, Run):
            lines.append(run[1])
            continue
        if lines:
            shown.show_lines(name, lines, lambda line: runs.whole((0, line)))
            lines = []
        if run.new:
            shown.show(name, run)
        else:
            yield run
    if lines:
        shown.show_lines(name, lines, lambda line: runs.whole((0, line)))


def _read_file(descriptor: int, name: str, tally: Tally, state: Runs, shown: Shown, parts: int | None,
               meanwhile: Callable[[], object] | None, sections: Sections) -> None:
    size = os.fstat(descriptor).st_size
    wanted = parts
    if wanted is None:  # the cores asked for only when the file is large enough to be cut (a directory of many files)
        wanted = part_count(size, usable_cores(), MIN_PART_BYTES) if size >= 2 * MIN_PART_BYTES else 1
    starts = [0]
    if wanted > 1:
        starts = part_starts(lambda offset, length: os.pread(descriptor, length, offset), size, wanted,
                             shorter_first=0 if meanwhile is None else DRAWING_HEAD_START_BYTES)
    with contextlib.ExitStack() as stack:
        # The files the other parts' runs are shown into, and the file itself, open before the pool's processes are
        # forked (at its first `submit`): they read and write them by descriptor.
        try:
            spills = [stack.enter_context(tempfile.TemporaryFile()) for _ in starts[1:]]
        except OSError:  # nowhere to show them: the file read whole here
            starts = [0]
            spills = []
        ranges = list(zip(starts, [*starts[1:], None], strict=True))
        futures = _started(stack, descriptor, ranges[1:], name, shown, spills, state.drawn, sections)
        _read(decoded(descriptor_batches(descriptor, 0, ranges[0][1]), tally), state, shown, name)
        if meanwhile is not None and len(ranges) > 1:
            meanwhile()
        for (start, end), spill, future in zip(ranges[1:], spills, futures, strict=True):
            part = _result(future, name, start)
            text: IO[bytes] = spill
            if part is None:  # its process failed: the part read here, into a file of its own as the process would
                text, part = _read_here(stack, descriptor, start, end, name, shown, state.drawn, sections)
            text.seek(0)  # what another process wrote by the same open file: read from its start
            _take(part, text, state, shown, name, tally)
    if (now := os.fstat(descriptor).st_size) < size:  # its parts, cut where it was longer, read to where it ends now
        tally.shrank = (size, now)


def _read_here(stack: contextlib.ExitStack, descriptor: int, start: int, end: int | None, name: str, shown: Shown,
               drawn: int, sections: Sections) -> tuple[IO[bytes], _Part]:
    """A part whose process failed, read here into a temporary file as the process would; read again into memory
    where no temporary file can hold it (what may have made the process fail)."""
    return file_or_memory(stack, tempfile.TemporaryFile, io.BytesIO,
                          lambda text: _Part.read(descriptor, start, end, name, shown, text, drawn, sections))


def _started(stack: contextlib.ExitStack, descriptor: int, ranges: list[tuple[int, int | None]], name: str,
             shown: Shown, spills: Sequence[IO[bytes]], drawn: int, sections: Sections) -> list[Future[_Part] | None]:
    """Each part but the first given to a process of a pool of their own; None for those no process took, which are
    read here. A `submit` that fails (no process could be forked, no descriptor was left, the pool broke) is said
    once, and the parts from there on are read here without asking again: what failed would fail again."""
    if not ranges:
        return []
    executor = stack.enter_context(local_executor(len(ranges)))
    futures: list[Future[_Part] | None] = []
    for (start, end), spill in zip(ranges, spills, strict=True):
        try:
            futures.append(executor.submit(_read_part, descriptor, start, end, name, type(shown), shown.render,
                                           spill.fileno(), drawn, tuple(sections)))
        except Exception as error:
            say_failed(name, f"no worker could be started for its part (from byte {start})", error,
                       "its part was read here" if len(futures) + 1 == len(ranges) else "the parts from there on "
                       "were read here")
            break
    return futures + [None] * (len(ranges) - len(futures))


def _result(future: Future[_Part] | None, name: str, start: int) -> _Part | None:
    """A worker's part; None when no process took it, or when the worker failed, which is said: its part is then
    read here, so a failure costs only time, yet a bug in a worker or a worker killed shows as what it is."""
    if future is None:
        return None
    try:
        return future.result()
    except Exception as error:  # it raised, it died (BrokenProcessPool), or its part could not come back
        say_failed(name, f"a worker failed reading its part (from byte {start})", error, "its part was read here")
        return None


def say_failed(name: str, what: str, error: Exception, then: str) -> None:
    """`orca metrics: NAME: WHAT: why (worker_failure): THEN` on standard error, after what was printed before; said
    if it can be: the summary matters more than the message."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        print(f"orca metrics: {printable(name)}: {what}: {printable(worker_failure(error))}; {then}",
              file=sys.stderr, flush=True)


_FRAME = re.compile(r'File "([^"]*)", line (\d+), in (\S+)')


def worker_failure(error: Exception) -> str:
    """A worker's failure in one line: the exception's type and text (the system's words for an OSError), then from
    the traceback `concurrent.futures` hands on as its cause's text, where it was raised and, when the part could not
    come back (BrokenProcessPool with a cause), what that was.

    >>> worker_failure(BrokenProcessPool("A process died.")), worker_failure(BlockingIOError(11, "No fork now"))
    ('BrokenProcessPool: A process died.', 'No fork now')
    """
    # `reason_of`'s words for EAGAIN are a pipe's, not a fork's.
    said = error.strerror if isinstance(error, OSError) and error.strerror else reason_of(error)
    told = [line.strip() for line in str(error.__cause__ or "").splitlines() if line.strip(" \"'")]
    frames = _FRAME.findall("\n".join(told))
    if not frames:
        return said
    if isinstance(error, BrokenProcessPool):
        said = f"{said} ({told[-1]})"
    path, line, function = frames[-1]
    return f"{said}, raised in {function} ({os.path.basename(path)}:{line})"


def _read_part(descriptor: int, start: int, end: int | None, name: str, kind: type[Shown],
               render: Callable[[InstanceSummary], str], spill: int, drawn: int, sections: Sections) -> _Part:
    """In a process of the pool: the part from `start` to `end` of the file open as `descriptor`, its runs shown
    into the file open as `spill` as a `kind` shows them elsewhere (as text, or kept for a table)."""
    with open(spill, "wb", closefd=False) as out:
        return _Part.read(descriptor, start, end, name, kind(render, lambda _: None), out, drawn,
                          sections)


def _take(part: _Part, text: IO[bytes], state: Runs, shown: Shown, name: str, tally: Tally) -> None:
    """A later part's runs taken in, in the order of the file: those it handed back (closed, and may have begun
    before it) go on from the open run of theirs and are shown; then what it showed; then its open runs join these,
    the least recently written closing past `OPEN_RUNS`."""
    tally.add(part.tally)
    taken = state.take_part(part.handed, [order for order, _ in part.series], part.open)
    for run in taken.handed:
        shown.show(name, run)
    shown.follow(part.totals, part.series, text, taken.places)
    for run in _shown(taken.closed, state, shown, name):
        shown.show(name, run)


@dataclass(slots=True)
class _Part:
    """What a part of a file, read on its own, hands back."""

    tally: Tally
    handed: list[Run]
    """The runs it closed that may have begun before it, in the order they closed."""
    open: list[Run]
    """The runs still open at its end, in the order their first lines came."""
    totals: Totals
    """Of the runs that began and closed in it, which it showed (their text is in a file)."""
    series: list[tuple[int, Series]]
    """The series of those drawn, each with its `order` among the part's runs."""

    @classmethod
    def read(cls, descriptor: int, start: int, end: int | None, name: str, shown: Shown, spill: IO[bytes],
             drawn: int, sections: Sections) -> _Part:
        """The part from `start` to `end` of the open file; the runs that begin and close in it shown as `shown`
        shows them, into `spill`."""
        def spilled(data: bytes) -> None:
            spill.write(data)

        tally = Tally()
        here = shown.elsewhere(spilled)
        runs = Runs(drawn, from_start=False, sections=sections, lone=here.takes_lines())
        handed = _read(decoded(descriptor_batches(descriptor, start, end), tally), runs, here, name)
        here.done()
        spill.flush()
        return cls(tally, handed, runs.close(), here.totals, here.series)
