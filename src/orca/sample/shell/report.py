"""Messages to a person on standard error, and the rule that a failure is told once until it recovers.

A sampler that cannot write a line, upload its file or read a source says so once, then nothing more until that
thing has worked again: a failure that lasts a day is one message, not seventeen thousand.
"""

from __future__ import annotations

import os
import sys

PROGRAM = "orca sample"


def say(message: str) -> None:
    """One line on standard error, prefixed with the program's name; never raises.

    With standard error closed or broken the message is lost, never sent anywhere else: standard output may be
    the sample stream."""
    data = f"{PROGRAM}: {message}\n".encode(errors="replace")
    try:
        fd = sys.stderr.fileno() if sys.stderr is not None else -1
    except (AttributeError, OSError, ValueError):
        fd = -1
    try:
        if fd < 0:
            if sys.stderr is not None:
                sys.stderr.write(data.decode())
                sys.stderr.flush()
            return
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except (OSError, ValueError, AttributeError):
        return


def reason_of(error: BaseException) -> str:
    """What went wrong, in a few words: the system's message for an OSError, else the exception's type and text."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class FailureReport:
    """Tells a run of failures of one thing once: the first failure says its reason, later ones are silent until
    `worked()` has been called in between."""

    __slots__ = ("failing",)

    def __init__(self) -> None:
        self.failing = False

    def failed(self, message: str) -> None:
        if not self.failing:
            self.failing = True
            say(message)

    def worked(self) -> None:
        self.failing = False
