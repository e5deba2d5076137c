"""The one gather (docs/architecture.md, "Which folder holds what"): a run's lines folded into everything `orca
metrics` shows of it, the summary and, when the run is drawn, the chart's points. `RunFold` holds the run's times
(`times.py`), one fold per section of the line (`SECTIONS`: a new line field's figures are one more) and the points
(`points.py`), in memory that does not grow with the lines; a fold merged with the fold of the lines after them is
the fold of all of them, to the last bit (`RunFold.merge`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, cast

from orca.sample.line_format import Sample
from orca.sample.readback.gather.containers import ContainersSection
from orca.sample.readback.gather.host import CpuSection, DiskSection, MemorySection
from orca.sample.readback.gather.limits import CgroupSection
from orca.sample.readback.gather.points import MAX_POINTS, Points
from orca.sample.readback.gather.pressure import PressureSection
from orca.sample.readback.gather.processes import RunSection
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.gather.sampler import SamplerSection
from orca.sample.readback.gather.section import Section
from orca.sample.readback.gather.series import Series
from orca.sample.readback.gather.times import Times
from orca.sample.readback.gather.top import TopSection
from orca.sample.readback.gather.traffic import IoSection, NetSection

SECTIONS: tuple[Callable[[], Section], ...] = (
    CpuSection, MemorySection, DiskSection, IoSection, NetSection, PressureSection, ContainersSection, SamplerSection,
    RunSection, TopSection, CgroupSection,
)
"""Every section of the line the read side shows, each gathered by its own fold."""
MIN_OVERHEAD_SECONDS = 1.0
"""The sampler's overhead is given as a share of one core only over lines covering at least this long: over a
fraction of a second its start-up alone would read as a large share."""


class RunFold:
    """Everything shown of one run, folded from its lines in the order written: see the module's docstring."""

    __slots__ = ("_makers", "_max_points", "_sections", "_times", "cores", "held", "host", "points", "start")

    def __init__(self, drawn: bool = False, max_points: int = MAX_POINTS,
                 sections: Sequence[Callable[[], Section]] = SECTIONS) -> None:
        self.host = ""
        self.start: float | None = None
        """The lines' `start`: which run they are of (None for an older sampler's)."""
        self.cores: int | None = None
        """The newest `cores`."""
        self._times: Times | None = None
        self._makers = sections
        self._sections: list[Section] | None = None
        self.held: Sample | None = None
        """The run's only line so far, not yet folded: a run of one line (a sampler started by cron for one line)
        may be shown from its line alone (`fleet/rows.py`), without the sections' folds made at all."""
        self.points: Points | None = None
        """The chart's points; None when the run is not drawn."""
        self._max_points = max_points
        if drawn:
            self.draw()

    @property
    def times(self) -> Times:
        """The lines' count and times, made when first asked for (a run of one line held needs none)."""
        if self._times is None:
            self._times = Times()
        return self._times

    @property
    def sections(self) -> list[Section]:
        """Each section's fold, made (and the line held folded into them) when first asked for."""
        if self._sections is None:
            self._sections = [make() for make in self._makers]
            held, self.held = self.held, None
            if held is not None:
                self.add([held])
        return self._sections

    def draw(self) -> None:
        """From here on, the lines are folded for the chart too."""
        columns = [column for section in self.sections if not section.keyed for column in section.columns]
        keyed = sum(len(section.columns) for section in self.sections if section.keyed)
        self.points = Points(columns, keyed, self._max_points)

    def add(self, lines: Sequence[Sample]) -> None:
        """The run's next lines, in the order written: each section reads them once (a first batch of one line is
        held until a second comes, or the folds are asked for)."""
        if not lines:
            return
        if self._sections is None and len(lines) == 1 and self.held is None and self._times is None:
            self.held = lines[0]
            self.host, self.start, self.cores = self.held.host, self.held.start, self.held.cores
            return
        sections = self.sections
        self.times.add(lines)
        self.host, self.start = lines[-1].host, lines[-1].start
        self.cores = next((line.cores for line in reversed(lines) if line.cores is not None), self.cores)
        wholes = [section.add(lines) for section in sections]
        points = self.points
        if points is not None:
            times = [line.t for line in lines]
            bounds = points.cut(times)
            # A batch within one point (many of a long run's): a section's row made as its `add` said, if it did.
            one = len(bounds) == 1
            points.take(times, bounds, [[whole()] if one and whole is not None else section.rows(lines, bounds)
                                        for section, whole in zip(sections, wholes, strict=True) if not section.keyed],
                        [list(column) for section in sections if section.keyed
                         for column in zip(*section.rows(lines, bounds), strict=True)])

    def merge(self, later: RunFold) -> None:
        """Take in the fold of the lines that came after these, folded on their own: this fold becomes the fold of
        both parts' lines in one pass; `later` is not used again."""
        if not later.times.lines and later.held is None:
            return
        mine, theirs = self.sections, later.sections  # a line held folded
        self.times.merge(later.times)
        self.host, self.start = later.host, later.start
        self.cores = later.cores if later.cores is not None else self.cores
        for section, their_section in zip(mine, theirs, strict=True):
            section.merge(their_section)
        if self.points is not None and later.points is not None:
            self.points.merge(later.points)

    def section(self, key: str) -> Section:
        return next(section for section in self.sections if section.key == key)

    def figures(self) -> dict[str, Any]:
        """Every section's fields of the summary, by name."""
        return {field: value for section in self.sections for field, value in section.summary().items()}

    def summary(self, name: str) -> InstanceSummary | None:
        """The summary of the lines folded so far, under `name` (the source's); None when there were none."""
        figures = self.figures()  # first: a line held is folded
        times = self.times
        if not times.lines:
            return None
        covered = times.covered
        overhead = 100.0 * figures["self_cpu_seconds"] / covered if covered >= MIN_OVERHEAD_SECONDS else None
        # Each section's fields are the summary's of the same names (`Section.key`): a test holds them to it.
        return InstanceSummary(
            name=name, host=self.host, start=self.start, cores=self.cores, first_t=times.first_t,
            last_t=times.last_t, duration=times.span, lines=times.lines, gaps=times.gaps, median_dt=times.median_dt,
            overhead_percent=overhead, **figures)

    def series(self, name: str) -> Series | None:
        """The run's values over time, to draw, under `name`; None when it is not drawn."""
        if self.points is None:
            return None
        run = cast("RunSection", self.section("run"))
        drawn = self.points.drawn([column.name for section in self.sections if section.keyed
                                   for column in section.columns])
        return replace(drawn, name=name, host=self.host, start=self.start, command=run.command, argc=run.argc,
                       exit=run.exit, cores=self.cores, span=self.times.span)
