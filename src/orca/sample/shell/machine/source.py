"""A line's readers, as one table walked by one function (`read_each`), and the one place where a reader's exception
becomes the reason a person reads (`attempt`, which `read_each` follows; psutil's `wrap_exceptions` is the model);
the readings every platform takes the same way (the host's name, the sampler's own CPU).

Every reading is a `returns` `Result`: the reading, or a `ParseError` naming what was read and why it could not be.
A reader that raises instead (a bug, a platform call that failed) is read through `attempt`, which makes the
exception that `ParseError`: a source that fails makes its section null and is told once until it reads well again
(docs/behaviour.md §3.10), and nothing a reader raises stops the sampler.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

from returns.result import Failure, Result

from orca.sample.compute.snapshot import HostReadings, Readings
from orca.sample.parse.errors import ParseError

T = TypeVar("T")


class Reader(NamedTuple):
    """One reading of a line beside the host's counters: the `Snapshot` field it fills, the source its failure is
    told under (docs/behaviour.md §3.10), what a failure names when the reader raised, and the reader, given the
    host's readings of the same moment (the run's walk follows the fork count, the whole disks the devices)."""

    field: str
    source: str
    name: str
    read: Callable[[HostReadings], Result[Any, ParseError]]


def read_each(readers: Sequence[Reader], host: HostReadings) -> Readings:
    """Each of `readers` in turn: field → its reading (None when it failed), and source → why it failed."""
    values: dict[str, object] = {}
    failures: dict[str, ParseError] = {}
    for field, source, name, read in readers:
        try:
            reading = read(host)
        except Exception as error:  # as `attempt`: written out, as it runs for each reader of every line
            reading = Failure(ParseError.raised(name, error))
        values[field] = value = reading.value_or(None)
        if value is None and type(reading) is Failure:  # Failure is final: no ABC check for each reading
            failures[source] = reading.failure()
    return Readings(values, failures)


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
    """The sampler's own user + system CPU seconds so far."""
    times = os.times()
    return times.user + times.system
