"""The line maker: the one stateful object over the pure line (as h11's `Connection` is over its readers and
writers). It holds the previous snapshot and which sources' failures have been told, and nothing else: a snapshot
in, the line's bytes and the failures to tell out. Reading and saying are the shell's.
"""

from __future__ import annotations

import functools

from toolz import pipe

from orca.sample.compute.build import build_line
from orca.sample.compute.encode import encode_line
from orca.sample.compute.snapshot import Snapshot
from orca.sample.failing import Failing
from orca.sample.parse.errors import ParseError


class LineMaker:
    """Lines from snapshots, each against the one before (docs/behaviour.md §3), starting from the baseline's."""

    __slots__ = ("_failing", "lines", "previous")

    def __init__(self, baseline: Snapshot) -> None:
        self.previous = baseline
        """The snapshot the next line is the difference from."""
        self.lines = 0
        """The lines made so far."""
        self._failing = Failing()

    def failures_to_tell(self, snapshot: Snapshot) -> list[ParseError]:
        """The failures of `snapshot` not told yet (each source's once, until it has read well again)."""
        return self._failing.news(snapshot.failures)

    def line(self, current: Snapshot) -> tuple[bytes, list[ParseError]]:
        """The line from the previous snapshot to `current`, which is the previous one from now on; and the failures
        of `current` to tell."""
        data: bytes = pipe(current, functools.partial(build_line, self.previous), encode_line)
        self.previous = current
        self.lines += 1
        return data, self._failing.news(current.failures)
