"""What a chart draws of one run: its values over time, thinned (`readback/gather/points.py`), and the facts its
title and labels say."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from orca.sample.line_format import CommandExit


@dataclass(frozen=True, slots=True)
class Series:
    """One run's values over time, ready to draw: one entry per point of `t`, NaN where its lines had no value; a
    point of NaN stands between two points too far apart to be joined (`points.GAP_FACTOR`)."""

    name: str
    """The file (or object) the lines came from, and the host when it holds several."""
    t: tuple[float, ...]
    """Unix seconds of each point: the middle of its first and last line."""
    values: dict[str, tuple[float, ...]]
    """Per column the sections give (`cpu_user`, `run_cpu`, `mem_rss`, ...), one value per point of `t`."""
    keyed: dict[str, dict[str, tuple[float, ...]]] = field(default_factory=dict)
    """Per keyed column (`containers`, `top_mem`, `top_cpu`), each name's highest value per point of `t`: the
    `points.MAX_KEYED` of the highest peak, by name."""
    omitted: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """Per keyed column, how many other names the lines had, and whether that count is exact (rather than off by
    about 1 %, past thousands of names)."""
    lines_per_point: int = 1
    """The most lines a point stands for (1: every line drawn as it is)."""
    host: str = ""
    start: float | None = None
    """The sampler's start (`start`), None for lines of a sampler older than it."""
    first: float = math.nan
    """The first and the last line's `t`."""
    last: float = math.nan
    lines: int = 0
    command: tuple[str, ...] | None = None
    """What `-- COMMAND` ran (its first line's `run.command`), and how many arguments it had when more."""
    argc: int | None = None
    exit: CommandExit | None = None
    """How COMMAND ended (its last line's `run.exit`)."""
    cores: int | None = None
    """The newest `cores`."""
    span: float = math.nan
    """The run's duration as the summary gives it (`InstanceSummary.duration`)."""

    @property
    def origin(self) -> float:
        """The moment elapsed time counts from: the sampler's start, else the first line."""
        return self.first if self.start is None else min(self.start, self.first)
