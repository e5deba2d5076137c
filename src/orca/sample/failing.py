"""The one rule for telling a failure: once, when a thing starts failing, and not again until it has worked in
between (docs/behaviour.md §3.10, §4.5). A failure that lasts a day is one message, not seventeen thousand.

The rule only decides: the line maker (`compute/line_maker.py`) follows it for the readings, the outputs
(`shell/report.py`) for their writes and uploads. Light to import (nothing at all): a message may be said before
anything else is loaded, or with no descriptor left to load a module with.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TypeVar

    T = TypeVar("T")


class Failing:
    """Which things are failing now, as told. `news` takes each reading of them all."""

    __slots__ = ("things",)

    def __init__(self) -> None:
        self.things: frozenset[str] = frozenset()

    def news(self, failures: Mapping[str, T]) -> list[T]:
        """The failures of `failures` (thing → its failure, the things failing now) to tell: those of the things
        that were not failing before. A thing not in `failures` has worked.

        >>> failing = Failing()
        >>> failing.news({"net": "gone"}), failing.news({"net": "gone", "disks": "full"}), failing.news({})
        (['gone'], ['full'], [])
        >>> failing.news({"net": "gone again"})
        ['gone again']
        """
        if not failures and not self.things:  # the usual reading: nothing failing, nothing was
            return []
        told = [failure for thing, failure in failures.items() if thing not in self.things]
        self.things = frozenset(failures)
        return told
