"""How far a long fleet read has come (docs/metrics.md, "A fleet at scale"): one line on standard error, written
over in place, only at a terminal and after `SHOW_AFTER_SECONDS`; erased when the read ends."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable

SHOW_AFTER_SECONDS = 1.5
"""A read shorter than this shows nothing: a line that flashes and is gone tells nobody anything."""
TICK_SECONDS = 1.0
"""The line is written again at least this often while sources are read, so its time moves."""
_ERASE = "\r\x1b[K"


class Progress:
    """Sources read of how many, their lines, and the time taken; where the work runs (a cluster's dashboard)."""

    def __init__(self, total: int, write: Callable[[str], None] | None, where: str = "",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.where = total, where
        self.sources = self.lines = 0
        self._write, self._clock = write, clock
        self._started = clock()
        self._shown = False

    @classmethod
    def on_standard_error(cls, total: int, where: str = "") -> Progress:
        """Shown on standard error when it is a terminal; else a progress that shows nothing."""
        try:
            interactive = sys.stderr.isatty()
        except (AttributeError, ValueError):  # closed, or replaced by something without a terminal
            interactive = False
        return cls(total, _stderr if interactive else None, where)

    def add(self, sources: int, lines: int) -> None:
        """`sources` more read, with `lines` sample lines between them."""
        self.sources += sources
        self.lines += lines
        self.tick()

    def tick(self) -> None:
        """The line written again, once the read has gone on long enough to show it."""
        elapsed = self._clock() - self._started
        if self._write is None or elapsed < SHOW_AFTER_SECONDS:
            return
        self._write(_ERASE + self.text(elapsed))
        self._shown = True

    def text(self, elapsed: float) -> str:
        """The line itself.

        >>> Progress(1000, None, "dashboard http://scheduler:8787/status").text(34.2)
        'orca metrics: 0 of 1,000 sources read, 0 lines, 34 s (dashboard http://scheduler:8787/status)'
        """
        where = f" ({self.where})" if self.where else ""
        return f"orca metrics: {self.sources:,} of {self.total:,} sources read, {self.lines:,} lines, " \
               f"{elapsed:.0f} s{where}"

    def end(self) -> None:
        """The line erased, if it was shown."""
        if self._write is not None and self._shown:
            self._write(_ERASE)
            self._shown = False


def _stderr(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(text)
        sys.stderr.flush()
