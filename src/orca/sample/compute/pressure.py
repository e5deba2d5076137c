"""The host's `pressure` object (docs/behaviour.md §3.9): percent of `dt` in which some task stalled, per resource."""

from __future__ import annotations

from collections.abc import Mapping

from orca.sample.compute.line import PressureShare
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
    shares: list[float | None] = []
    for resource in RESOURCES:
        old, new = before.get(resource), cur.get(resource)
        if new is None:
            shares.append(None)
        elif old is None:
            shares.append(0.0)
        else:
            shares.append(_stall_percent(old.some.total_us, new.some.total_us, dt))
    cpu, memory, io = shares
    return PressureShare(cpu=cpu, memory=memory, io=io)


def _stall_percent(previous_us: int, current_us: int, dt: float) -> float:
    """A counter that went backwards, or a dt that isn't > 0, gives 0.0; never above 100 (rounding, clock skew)."""
    if not dt > 0 or current_us <= previous_us:
        return 0.0
    return min(100.0, 100.0 * (current_us - previous_us) / (dt * USEC_PER_SECOND))
