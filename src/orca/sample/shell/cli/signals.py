"""Signals and process exits that end sampling (docs/behaviour.md §2.3, §2.4), kept light so they are in place
early.

This module imports nothing of the sampler: `orca sample` installs its SIGTERM/SIGINT/SIGHUP handlers before it
loads the readers and parsers, and takes over what `caught.py` recorded before them, so a runner that stops a sampler
right after starting it still gets exit status 0.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from orca.sample.shell.cli.caught import STOP_SIGNALS, Caught, not_ignored
from orca.sample.shell.procs.portable import nonblocking_pipe


class Stop:
    """Set by a stop signal. The handler only sets `requested`; a byte on `wake_fd` cuts the current wait short."""

    def __init__(self) -> None:
        self.requested = False
        self.wake_fd = -1

    def is_requested(self) -> bool:
        return self.requested

    def wait(self, seconds: float, also: int = -1) -> bool:
        """Sleep up to `seconds`, less if a signal arrives or the file descriptor `also` becomes readable; whether
        `also` was readable when the wait ended (looked at even when there is no time to wait; False without it)."""
        if seconds <= 0 and also < 0:
            return False
        fds = [fd for fd in (self.wake_fd, also) if fd >= 0]
        if not fds:
            time.sleep(seconds)
            return False
        readable, _, _ = select.select(fds, [], [], max(seconds, 0))
        if self.wake_fd in readable:
            try:
                while os.read(self.wake_fd, 512):
                    pass
            except (BlockingIOError, InterruptedError):
                pass
        return also >= 0 and also in readable


@contextmanager
def watching_exit(pid: int | None) -> Iterator[int]:
    """A pidfd of `pid` for the time inside (-1 when there is no pid, it is gone, or the kernel has no pidfds)."""
    fd = -1
    if pid is not None and pid > 0:
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError, OverflowError):
            fd = -1  # no such process (the loop's alive() says so), Linux < 5.3, or not Linux: poll instead
    try:
        yield fd
    finally:
        if fd >= 0:
            os.close(fd)


@contextmanager
def stopping_on_signals(stop: Stop, *, then_ignore: bool = False, caught: Caught | None = None) -> Iterator[Stop]:
    """SIGTERM, SIGINT and SIGHUP set `stop.requested` while inside (those not ignored: `not_ignored`); the previous
    handlers come back after. A stop signal `caught` recorded before (the sampler's first handler) is a stop
    requested already.

    With `then_ignore` (the process exits with status 0 right after) they are ignored after instead: a runner's
    SIGTERM that lands once the last line is written, while the process is exiting, must not turn that status into
    the signal's. The handler is swapped for "ignore" in one step, so no moment is left uncovered.

    Python runs the handler between bytecodes of the main thread, so it must not write or raise: a line being
    written is finished, then the loop sees the flag. The C-level wakeup fd ends a `select` at once. Outside the
    main thread (an embedding program) signals cannot be caught: the program's own handling stays."""

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.requested = True

    saved: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}
    read_fd, write_fd = nonblocking_pipe()
    previous_wakeup = -2
    try:
        try:
            previous_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
            for signum in not_ignored(STOP_SIGNALS):
                saved[signum] = signal.signal(signum, handler)
            stop.wake_fd = read_fd
        except ValueError:
            pass  # not the main thread
        if caught is not None and set(caught.take()) & set(STOP_SIGNALS):
            stop.requested = True
        yield stop
    finally:
        for signum, previous in saved.items():
            signal.signal(signum, signal.SIG_IGN if then_ignore else previous)
        if previous_wakeup != -2:
            signal.set_wakeup_fd(previous_wakeup)
        stop.wake_fd = -1
        os.close(read_fd)
        os.close(write_fd)


def has_ended(exit_fd: int) -> bool:
    """Whether the process behind a pidfd has ended (a zombie included): the pidfd is readable then."""
    try:
        readable, _, _ = select.select([exit_fd], [], [], 0)
    except (OSError, ValueError):
        return False
    return bool(readable)
