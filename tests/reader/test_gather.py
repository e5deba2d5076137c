"""The one gather (docs/architecture.md): a run's lines are read once, by one fold per section of the line, into the
summary, `--json` and the chart alike. A new field's read-side figures are one section: shown here by a field the
line does not have, added in the test itself (a GPU's busy share), whose section is all that is written for it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from orca.sample.line_format import Percent, Sample
from orca.sample.readback.gather.fold import SECTIONS, RunFold
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.gather.section import MEAN, Bounds, Column, present
from tests.lines import samples


class Gpu(msgspec.Struct, frozen=True, kw_only=True):
    busy: Percent


class GpuSample(Sample, frozen=True, kw_only=True):
    """A line with one more section, as a new field of the line's declaration would be."""

    gpu: Gpu | None = None


@dataclass(frozen=True, slots=True)
class GpuSummary:
    busy_mean: float


class GpuSection:
    """The new field's figures: its mean over the run for the summary, each point's mean for the chart."""

    key = "gpu"
    columns = (Column("gpu_busy", MEAN, tenths=True),)
    keyed = False

    def __init__(self) -> None:
        self.total = 0.0
        self.count = 0

    def add(self, lines: Sequence[Sample]) -> None:
        shares = present([getattr(line, "gpu", None) for line in lines])
        self.total += sum(gpu.busy for gpu in shares)
        self.count += len(shares)

    def rows(self, lines: Sequence[Sample], bounds: Bounds) -> list[Any]:
        rows = []
        for begin, end in bounds:
            shares = present([getattr(line, "gpu", None) for line in lines[begin:end]])
            rows.append((sum(gpu.busy for gpu in shares), len(shares)))
        return rows

    def merge(self, later: GpuSection) -> None:
        self.total += later.total
        self.count += later.count

    def summary(self) -> dict[str, Any]:
        return {"gpu": GpuSummary(self.total / self.count) if self.count else None}


def lines() -> list[GpuSample]:
    """Four lines a second apart, the GPU busy 10, 30, then none, then 50 percent."""
    return [GpuSample(v=1, t=100.0 + i, dt=1.0, host="h", gpu=None if busy is None else Gpu(busy=busy))
            for i, busy in enumerate((10.0, 30.0, None, 50.0))]


def test_a_new_field_is_one_section() -> None:
    """With the section added to the fold's, the new field is in the figures of the summary and in the chart's
    series, and a fold of two parts merged gives the figures of one; nothing else was written for it."""
    fold = RunFold(drawn=True, max_points=2, sections=(*SECTIONS, GpuSection))
    fold.add(lines())
    assert fold.figures()["gpu"] == GpuSummary(busy_mean=30.0)  # (10 + 30 + 50) / 3
    series = fold.series("run")
    assert series is not None
    # At most 2 × 2 slots: 2^10 ms each, the lines at 100 to 103 s in slots 97 to 100 (each its own point).
    assert series.values["gpu_busy"][:2] == (10.0, 30.0) and math.isnan(series.values["gpu_busy"][2])
    first, second = RunFold(sections=(*SECTIONS, GpuSection)), RunFold(sections=(*SECTIONS, GpuSection))
    first.add(lines()[:1])
    second.add(lines()[1:])
    first.merge(second)
    assert first.figures()["gpu"] == GpuSummary(busy_mean=30.0)


def test_each_sections_fields_are_the_summarys() -> None:
    """What every section of the line gives is a field of `InstanceSummary` of the same name (its `key` among them),
    which the text and `--json` print."""
    named = {field.name for field in fields(InstanceSummary)}
    fold = RunFold()
    for section in fold.sections:
        assert section.key in section.summary()
        assert set(section.summary()) <= named, section.key
    fold.add([Sample(v=1, t=1.0, dt=1.0, host="h")])
    summary = fold.summary("x")
    assert summary is not None
    for field, value in fold.figures().items():
        assert getattr(summary, field) == value


def test_every_section_draws_its_columns_and_no_two_share_a_name() -> None:
    fold = RunFold(drawn=True)
    names = [column.name for section in fold.sections if not section.keyed for column in section.columns]
    keyed = [column.name for section in fold.sections if section.keyed for column in section.columns]
    assert len(names + keyed) == len(set(names + keyed))
    fold.add([Sample(v=1, t=1.0, dt=1.0, host="h")])
    series = fold.series("x")
    assert series is not None and list(series.values) == names
    assert list(series.keyed) == keyed == ["containers", "top_mem", "top_cpu"]


@settings(max_examples=200, deadline=None)
@given(st.lists(samples, min_size=1, max_size=12))
def test_a_row_made_as_add_says_is_the_row_of_the_whole_batch(lines: list[Sample]) -> None:
    """A section whose `add` gives back how to make the batch's row gives the row `rows` gives for the batch as one
    stretch (its sums to within the rounding of floats added in another way), so a drawn batch within one point is
    drawn the same either way."""
    for make in SECTIONS:
        whole = make().add(lines)
        if whole is None:
            continue
        made, summed = whole(), tuple(make().rows(lines, [(0, len(lines))])[0])
        assert len(made) == len(summed), make
        for mine, theirs in zip(made, summed, strict=True):
            assert mine == theirs or math.isclose(mine, theirs, rel_tol=1e-12), make


def test_pressure_and_memory_give_their_row_from_add() -> None:
    """The sections that read in `add` what their row is made of say how to make it (the others loop again)."""
    assert {make().key for make in SECTIONS if make().add(lines()) is not None} == {"pressure", "memory"}
