"""Messages to a person on standard error; and the outputs' use of the rule that a failure is told once until it
recovers (`failing.py`, which the line maker follows for the readings).

A sampler that cannot write a line, upload its file or read a source says so once, then nothing more until that
thing has worked again: a failure that lasts a day is one message, not seventeen thousand.
"""

from __future__ import annotations

import sys

from orca.sample.failing import Failing
from orca.sample.shell.stdio import NonBlockingWriter

PROGRAM = "orca sample"


def say(message: str) -> None:
    """One line on standard error, prefixed with the program's name; never raises, never waits."""
    tell(f"{PROGRAM}: {message}\n")


def tell(text: str) -> None:
    """`text` on standard error as it is; never raises, never waits.

    With standard error closed the text is lost, never sent anywhere else: standard output may be the sample
    stream. A standard error nobody reads loses the text rather than stopping the sampler."""
    data = text.encode(errors="replace")
    stream = sys.stderr
    if stream is None:
        return
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = -1
    try:
        if fd < 0:
            # An embedding program's (or a test's) stand-in, without a descriptor.
            stream.write(data.decode())
            stream.flush()
            return
        # A new writer each time: messages are rare, and the descriptor may have been pointed elsewhere since.
        writer = NonBlockingWriter(fd)
        try:
            writer.write(data)
            writer.flush()
        finally:
            writer.close()
    except Exception:
        return


class FailureReport:
    """Tells a run of failures of one thing once (`failing.py`'s rule): the first failure says its reason,
    later ones are silent until `worked()` has been called in between."""

    __slots__ = ("_failing",)

    def __init__(self) -> None:
        self._failing = Failing()

    def failed(self, message: str) -> None:
        for told in self._failing.news({"": message}):
            say(told)

    def worked(self) -> None:
        self._failing.news({})
