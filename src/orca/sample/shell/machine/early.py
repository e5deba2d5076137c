"""The kernel files' bytes, read at one moment: first as `orca sample` takes its baseline, before the rest of the
sampler loads (docs/behaviour.md §2.2), then for every line.

A line's rates are differences of a few kernel files: reading their bytes and the clocks takes a fraction of a
millisecond, while loading the flags' parser, the parsers, the outputs and the encoder takes tens. So the command
reads the bytes here, as soon as it runs, and the `Sampler` parses them into its baseline once the rest has loaded,
during the wait for the first line: the schedule counts from these readings, and the first line's rates cover the
time from them. Every later line reads the same files the same way (through descriptors kept open), and the same
pure function parses them (`compute/snapshot.py`'s `snapshot_of`).

Light to import on purpose (`os`, `time` and the bounded file reader): nothing but the interpreter's own start comes
before the readings.
"""

from __future__ import annotations

import time

from orca.sample.shared.bounded import read_file
from orca.sample.shell.machine.fs import FS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    ReadEach = Callable[[tuple[str, ...]], dict[str, bytes | OSError]]
    """Reads each of several paths: path -> its bytes, or the `OSError` reading it raised."""


class KernelTexts:
    """The clocks, and each kernel file a line's host readings come from as `(path, bytes or the OSError reading it
    raised)`: what `compute/snapshot.py`'s `KernelTexts` describes.

    A plain class rather than a dataclass: it is made before anything heavier than `os` is loaded."""

    __slots__ = ("diskstats", "fs", "meminfo", "monotonic_ns", "net_dev", "pressure", "stat", "wall")

    def __init__(self, fs: FS, monotonic_ns: int, wall: float, read: dict[str, bytes | OSError]) -> None:
        self.fs = fs
        """The roots the files were read under."""
        self.monotonic_ns = monotonic_ns
        """`time.monotonic_ns()` just before the files were read (`clocks()`)."""
        self.wall = wall
        """`time.time()` at the same moment."""
        self.stat = (fs.stat, read[fs.stat])
        self.meminfo = (fs.meminfo, read[fs.meminfo])
        self.diskstats = (fs.diskstats, read[fs.diskstats])
        self.net_dev = (fs.net_dev, read[fs.net_dev])
        cpu, memory, io = fs.pressure
        self.pressure = ((cpu, read[cpu]), (memory, read[memory]), (io, read[io]))


PAIRED_NS = 1_000_000
"""Two readings of the monotonic clock this close around one of the wall clock make one moment of both."""
PAIR_TRIES = 5


def clocks() -> tuple[int, float]:
    """`time.monotonic_ns()` and `time.time()` of one moment. A line's `dt` comes from the first and its `t` from
    the second, so a process preempted between the two calls (on a loaded machine, for milliseconds) would write a
    `t` that steps by other than its `dt`, and the next line's the other way. So the wall clock is read between two
    readings of the monotonic one, again while they are further apart than `PAIRED_NS` (up to `PAIR_TRIES` times,
    the closest pair kept), and the moment is their middle."""
    best: tuple[int, int, float] | None = None
    for _ in range(PAIR_TRIES):
        before = time.monotonic_ns()
        wall = time.time()
        spread = time.monotonic_ns() - before
        if best is None or spread < best[0]:
            best = (spread, before, wall)
        if spread <= PAIRED_NS:
            break
    assert best is not None
    spread, before, wall = best
    return before + spread // 2, wall


def read_kernel_texts(fs: FS, read_each: ReadEach | None = None) -> KernelTexts:
    """The kernel files under `fs`, now: through `read_each` (the sampler's kept descriptors), else each opened and
    read once (the baseline). Never raises."""
    monotonic_ns, wall = clocks()
    paths = fs.kernel_files
    return KernelTexts(fs, monotonic_ns, wall, _read_each(paths) if read_each is None else read_each(paths))


def read_early(fs: FS | None = None) -> KernelTexts:
    """The baseline readings, as the command takes them first (the machine's own roots unless told otherwise)."""
    return read_kernel_texts(FS() if fs is None else fs)


def _read_each(paths: tuple[str, ...]) -> dict[str, bytes | OSError]:
    texts: dict[str, bytes | OSError] = {}
    for path in paths:
        try:
            texts[path] = read_file(path)
        except OSError as error:
            texts[path] = error
    return texts
