"""The host's `pressure` object (docs/behaviour.md §3.9): percent of `dt` in which some task stalled, per resource."""

from __future__ import annotations

from collections.abc import Mapping

from orca.sample.line_format import PressureShare
from orca.sample.parse.numbers import USEC_PER_SECOND
from orca.sample.parse.pressure import Pressure

RESOURCES = ("cpu", "memory", "io")
"""The resources of a `PressureShare`, in its field order."""


def pressure_share(
    prev: Mapping[str, Pressure] | None, cur: Mapping[str, Pressure] | None, dt: float
) -> PressureShare | None:
    """Per resource, 100 × delta(`some` total) / dt, clamped to 0..100; None without PSI (`cur` is None).

    A resource missing from `cur` is None (left out of the line). One that `prev` lacks (its file appeared, or the
    baseline read failed) is 0.0, like a container's first line: no delta yet, but never an empty `{}`.

    >>> from orca.sample.parse.pressure import PressureLine
    >>> def p(total_us: int) -> Pressure:
    ...     return Pressure(PressureLine(0.0, 0.0, 0.0, total_us), None)
    >>> pressure_share({"cpu": p(1_000), "io": p(0)}, {"cpu": p(251_000), "io": p(0), "memory": p(5)}, 2.0)
    PressureShare(cpu=12.5, memory=0.0, io=0.0)
    >>> pressure_share({"cpu": p(1_000)}, {"cpu": p(251_000)}, 2.0)
    PressureShare(cpu=12.5, memory=None, io=None)
    >>> pressure_share({"cpu": p(1)}, None, 2.0) is None
    True
    """
    if cur is None:
        return None
    before = prev or {}
    span_us = dt * USEC_PER_SECOND
    shares: list[float | None] = []
    for resource in RESOURCES:
        old, new = before.get(resource), cur.get(resource)
        if new is None:
            shares.append(None)
        elif old is None or not dt > 0 or new.some.total_us <= old.some.total_us:
            shares.append(0.0)
        else:  # never above 100 (rounding, clock skew)
            shares.append(min(100.0, 100.0 * (new.some.total_us - old.some.total_us) / span_us))
    cpu, memory, io = shares
    return PressureShare(cpu=cpu, memory=memory, io=io)
