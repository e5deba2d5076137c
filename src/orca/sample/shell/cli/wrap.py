"""`orca sample [FLAGS] -- COMMAND [ARGS...]`: run COMMAND as a child, sample it as `--pid` of it, and exit with its
status (README, "Sampling a command").

COMMAND keeps the sampler's standard input, output and error. SIGINT, SIGTERM and SIGHUP that reach the sampler are
passed on to COMMAND instead of ending sampling, so the line written when COMMAND ends is still written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from types import FrameType

from orca.sample.parse.errors import reason_of
from orca.sample.shell.report import say

FORWARDED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
NOT_FOUND = 127
NOT_EXECUTABLE = 126
"""The statuses a shell gives a command it cannot find or cannot run."""


def exit_status(returncode: int) -> int:
    """A child's status as a shell reports it: 128 + the signal number when a signal ended it.

    >>> exit_status(3), exit_status(-9)
    (3, 137)
    """
    return 128 - returncode if returncode < 0 else returncode


class _Forwarder:
    """Passes SIGINT, SIGTERM and SIGHUP on to the child; one that arrives before the child exists is passed on at
    start."""

    def __init__(self) -> None:
        self.pid = 0
        self.pending: list[int] = []

    def handler(self, signum: int, frame: FrameType | None) -> None:
        if self.pid > 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)
        else:
            self.pending.append(signum)

    def started(self, pid: int) -> None:
        self.pid = pid
        for signum in self.pending:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)
        self.pending.clear()


@contextlib.contextmanager
def _forwarding(forwarder: _Forwarder) -> Iterator[None]:
    saved = {}
    try:
        for signum in FORWARDED:
            saved[signum] = signal.signal(signum, forwarder.handler)
    except ValueError:
        pass  # not the main thread: signals stay the embedding program's
    try:
        yield
    finally:
        for signum, previous in saved.items():
            signal.signal(signum, previous)


def run_command(command: list[str], sample: Callable[[int], None] | None) -> int:
    """Start `command`, call `sample(pid)` (which returns once the child has ended and its last line is written;
    None when sampling is off), wait for the child, and return its exit status. Never raises."""
    forwarder = _Forwarder()
    with _forwarding(forwarder):
        try:
            child = subprocess.Popen(command)
        except OSError as error:
            status = NOT_FOUND if error.errno == errno.ENOENT else NOT_EXECUTABLE
            say(f"cannot run {command[0]!r}: {reason_of(error)}")
            return status
        forwarder.started(child.pid)
        if sample is not None:
            try:
                sample(child.pid)
            except (Exception, KeyboardInterrupt) as error:
                # Sampling broke: the command goes on, and its status is still the one returned.
                say(f"stopped: {type(error).__name__}: {' '.join(str(error).split())}")
        return exit_status(child.wait())
