"""A chart drawn and said, the same for a run's and a fleet's: one line naming the file, no traceback."""

from __future__ import annotations

from collections.abc import Callable

from orca.sample.parse.errors import reason_of
from orca.sample.readback.words import printable


def chart_said(draw: Callable[[], None], path: str, say: Callable[[str], None]) -> int:
    """The chart at `path` drawn (`draw`) and said: the exit status, 1 when it could not be drawn."""
    try:
        draw()
    except Exception as error:  # a file that cannot be written, or matplotlib's own failure: said, no traceback
        why = error.strerror or error if isinstance(error, OSError) else f"cannot draw the chart: {reason_of(error)}"
        say(f"orca metrics: {printable(path)}: {why}")
        return 1
    say(f"orca metrics: drew {printable(path)}")
    return 0
