"""The one place where a reader's exception becomes the reason a person reads (psutil's `wrap_exceptions` is the
model), and the readings every reader takes the same way (the host's name, the sampler's own CPU).

Every reading is a `returns` `Result`: the reading, or a `ParseError` naming what was read and why it could not be.
A reader that raises instead (a bug, a platform call that failed) is read through `attempt`, which makes the
exception that `ParseError`: a source that fails makes its section null and is told once until it reads well again
(docs/behaviour.md §3.10), and nothing a reader raises stops the sampler.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

from returns.result import Failure, Result

from orca.sample.parse.errors import ParseError

T = TypeVar("T")


def attempt(source: str, read: Callable[..., Result[T, ParseError]], *args: object) -> Result[T, ParseError]:
    """`read(*args)`, or the failure of reading `source` when it raised."""
    try:
        return read(*args)
    except Exception as error:  # a reader's bug, or a call that failed: said, never fatal, never a traceback
        return Failure(ParseError.raised(source, error))


def host_name() -> str:
    # What gethostname() returns, without importing socket (a few ms of every start) for it.
    try:
        return os.uname().nodename
    except (OSError, AttributeError):
        return ""


def self_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system
