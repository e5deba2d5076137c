"""When lines are written (docs/behaviour.md §2.2-§2.4): a fixed schedule, end conditions, and signals that end it at
once."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Protocol

from orca.sample.shell.cli.signals import Stop, has_ended
from orca.sample.shell.out.sink import LineSink
from orca.sample.shell.procs.portable import alive

FIRST_LINE_AFTER = 0.2
"""Seconds from start to the first line, so any instance the sampler ran on leaves one (docs/behaviour.md §2.2)."""
CHECK_EVERY = 0.25
"""End conditions are looked at this often, so the last line comes within 0.5 s of one becoming true
(docs/behaviour.md §2.3).

Only `--until` (and `--pid` on a kernel without pidfds) needs that polling: a wake-up costs CPU, and four a second
would cost more than the line itself at the default 5 s interval. The `--pid` process's pidfd wakes the wait the
moment the process ends, and with neither flag the loop sleeps until the next line."""


class LineSource(Protocol):
    def line_bytes(self) -> bytes:
        """The next line, encoded, without its newline: it stays bytes all the way to the output."""

    def last_line_bytes(self) -> bytes:
        """The line written because an end condition became true (`Sampler`'s says how COMMAND ended)."""


@dataclass(frozen=True, slots=True)
class EndConditions:
    """What ends sampling after one last line (docs/behaviour.md §2.3)."""

    pid: int | None = None
    until: str | None = None
    count: int | None = None
    proc: str = "/proc"
    exit_fd: int = -1
    """A pidfd of `pid` (readable once it has ended), or -1 when there is none (no --pid, or no pidfd_open)."""
    over: bool = False
    """Ended already: a COMMAND that could not be started (its one line, the first, is the last)."""
    at_once: bool = False
    """An end is written at once, even before the first line is due: COMMAND's, whose lines cover it from its start
    (docs/behaviour.md §9.4). Otherwise an end before the first line still waits for it (§5.2)."""

    def needs_polling(self) -> bool:
        return self.until is not None or (self.pid is not None and self.exit_fd < 0)

    def met_outside(self, ask_pid: bool = True) -> bool:
        """The watched process has ended, or the `--until` file exists; without `ask_pid` only the latter (the
        caller knows the process's state from the wait on its pidfd)."""
        if self.over:
            return True
        if self.pid is not None and ask_pid:
            # With a pidfd, one select says it without reading /proc/<pid>/stat (this runs every line).
            ended = has_ended(self.exit_fd) if self.exit_fd >= 0 else not alive(self.pid, self.proc)
            if ended:
                return True
        return self.until is not None and os.path.exists(self.until)


def run(source: LineSource, sink: LineSink, seconds: float, ends: EndConditions, start: float, stop: Stop) -> int:
    """Write lines at start + 0.2 + k·seconds (monotonic clock) until an end condition or a signal; the lines written.

    A tick already past when the previous line is done is skipped, not made up (docs/behaviour.md §2.2)."""
    first = start + FIRST_LINE_AFTER
    tick = 0
    due = first
    written = 0
    poll_every = CHECK_EVERY if ends.needs_polling() else math.inf
    while True:
        ending = False
        # Whether the `--pid` process has ended, as the last wait on its pidfd saw it; None: not seen since the
        # last line. Its state is asked for only when no wait has told it, so with a pidfd the wait is the one
        # system call between two lines.
        ended: bool | None = None
        while not stop.is_requested():
            now = time.monotonic()
            # Before the first line an ended process's pidfd would stay readable: that wait is short and plain
            # (unless an end is written at once).
            started = written > 0 or now >= first or ends.at_once
            watched = ends.exit_fd if started else -1
            # A wait on the pidfd returns at once if the process has ended: it will tell, no need to ask first.
            ask_pid = ended is None and not (watched >= 0 and now < due)
            # An end noticed before the first line still waits for it, a first line with a real dt
            # (docs/behaviour.md §5.2), unless it is COMMAND's.
            if (ended or ends.met_outside(ask_pid)) and started:
                ending = True
                break
            if now >= due:
                break
            readable = stop.wait(min(poll_every, due - now), watched)
            ended = readable if watched >= 0 else None
        if stop.is_requested():
            return written
        line = source.last_line_bytes() if ending else source.line_bytes()
        if stop.is_requested():
            return written  # a signal during the readings: no further line (docs/behaviour.md §2.4)
        sink.write(line)
        written += 1
        if ending or (ends.count is not None and written >= ends.count):
            return written
        elapsed = time.monotonic() - first
        tick = max(tick + 1, math.floor(elapsed / seconds) + 1)
        due = first + tick * seconds
