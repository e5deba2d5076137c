"""One source of a line's readings, and the readings every reader takes the same way (the host's name, the
sampler's own CPU).

A source that fails makes its section null and says why on standard error, once until it reads well again; an
unexpected exception in a reader is told the same way, with its type, and never stops the sampler
(docs/behaviour.md §3.10).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Generic, TypeVar

from returns.result import Result, Success

from orca.sample.parse.errors import ParseError
from orca.sample.shell.report import FailureReport

T = TypeVar("T")


class Source(Generic[T]):
    """One source of a line's readings: `read` gives its snapshot or why there is none; `value()` is the snapshot
    or None, the failure told once until the source reads well again."""

    __slots__ = ("_report", "name", "read")

    def __init__(self, name: str, read: Callable[[], Result[T, ParseError]]) -> None:
        self.name = name
        """What is read, for a message about an unexpected failure (a ParseError names its own file)."""
        self.read = read
        self._report = FailureReport()

    def value(self) -> T | None:
        try:
            result = self.read()
        except Exception as error:  # a reader's bug: said, never fatal, never a traceback
            self._report.failed(f"cannot read {self.name}: {type(error).__name__}: {' '.join(str(error).split())}")
            return None
        succeeded = isinstance(result, Success)  # kept apart so mypy keeps `result`'s own type, not Success[Any]
        if succeeded:
            if self._report.failing:
                self._report.worked()
            return result.unwrap()
        failure = result.failure()
        self._report.failed(f"cannot read {failure.source}: {failure.reason}")
        return None

    def failing(self) -> bool:
        """Its last read failed (and was told)."""
        return self._report.failing


def guarded(read: Callable[[], T | None]) -> T | None:
    """A reader's value, or None when it raised: for the psutil reader's readings that are no section's own (swap,
    its own CPU, /sys/block), whose failure is no failure to tell."""
    try:
        return read()
    except Exception:
        return None


def host_name() -> str:
    # What gethostname() returns, without importing socket (a few ms of every start) for it.
    try:
        return os.uname().nodename
    except (OSError, AttributeError):
        return ""


def self_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system
