"""The baseline readings as `orca sample` takes them first, before the rest of the sampler loads (docs/behaviour.md
§2.2).

A line's rates are differences of a few kernel files: reading their bytes and the clocks takes a fraction of a
millisecond, while loading the flags' parser, the parsers, the outputs and the encoder takes tens. So the command
reads the bytes here, as soon as it runs, and the `Sampler` parses them into its baseline once the rest has loaded,
during the wait for the first line: the schedule counts from these readings, and the first line's rates cover the
time from them.

Light to import on purpose (`os`, `time` and the bounded file reader): nothing but the interpreter's own start comes
before the readings.
"""

from __future__ import annotations

import os
import time

from orca.sample.shell.bounded import read_file

PROC = "/proc"
RATE_FILES = ("stat", "diskstats", os.path.join("net", "dev"), *(
    os.path.join("pressure", resource) for resource in ("cpu", "memory", "io")
))
"""The files under the proc root whose differences are the host's rates: `cpu`, `io`, `net` and `pressure`. The
rest of a line (`mem`, `disk`, the run's `rss`) is a reading of the moment, taken with the latest readings only."""


class EarlyReadings:
    """The clocks and the bytes of `RATE_FILES`, read at one moment under a proc root.

    A plain class rather than a dataclass: it is made before anything heavier than `os` is loaded."""

    __slots__ = ("monotonic_ns", "proc", "texts", "wall")

    def __init__(self, proc: str, monotonic_ns: int, wall: float, texts: dict[str, bytes | OSError]) -> None:
        self.proc = proc
        self.monotonic_ns = monotonic_ns
        """`time.monotonic_ns()` just before the files were read, as a `Snapshot` takes it."""
        self.wall = wall
        """`time.time()` at the same moment."""
        self.texts = texts
        """Each file's path -> its bytes, or the `OSError` reading it raised (a section's failure is told when the
        bytes are parsed, as for any line)."""


def read_early(proc: str = PROC) -> EarlyReadings:
    """The readings of `RATE_FILES` under `proc`, now. Never raises."""
    monotonic_ns = time.monotonic_ns()
    wall = time.time()
    texts: dict[str, bytes | OSError] = {}
    for name in RATE_FILES:
        path = os.path.join(proc, name)
        try:
            texts[path] = read_file(path)
        except OSError as error:
            texts[path] = error
    return EarlyReadings(proc, monotonic_ns, wall, texts)
