"""A run's lines against its cgroup's limits, for `orca metrics` (docs/behaviour.md §3.11): the fold of the `cgroup`
sections worked out by hand, a fold in parts the same as one over all the lines, and the summary's texts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orca.sample.line_format import CgroupSample, Sample
from orca.sample.readback.gather.limits import CgroupSection, CgroupSummary
from orca.sample.readback.summary.text import cgroup_texts

GIB = 2**30


class Folded:
    """The fold of lines with these sections and `dt`s, each line a batch of its own."""

    def __init__(self, sections: list[tuple[CgroupSample, float]]) -> None:
        self.fold = CgroupSection()
        for section, dt in sections:
            self.fold.add([Sample(v=1, t=0.0, dt=dt, host="h", cgroup=section)])

    def merge(self, later: Folded) -> None:
        self.fold.merge(later.fold)

    def summary(self) -> CgroupSummary | None:
        summary: CgroupSummary | None = self.fold.summary()["cgroup"]
        return summary


folded = Folded


def texts(summary: CgroupSummary) -> dict[str, str]:
    return dict(cgroup_texts(summary))


def test_a_run_against_its_limits() -> None:
    """Three lines: 0.2 s, then 5 s and 5 s. CPU seconds used: 0.2 × 0.5 + 5 × 1.0 + 5 × 0.94 = 9.8 over 10.2 s."""
    sections = [
        (CgroupSample(mem=GIB, mem_max=2 * GIB, cpu=50.0, cpu_max=1.0, throttled=0.0, oom_kill=0, pids=3), 0.2),
        (CgroupSample(mem=1932735283, mem_max=2 * GIB, cpu=100.0, cpu_max=1.0, throttled=60.0, oom_kill=0, pids=9),
         5.0),
        (CgroupSample(mem=GIB, mem_max=2 * GIB, cpu=94.0, cpu_max=1.0, throttled=22.0, oom_kill=1, pids=5), 5.0),
    ]
    summary = folded(sections).summary()
    assert summary is not None
    assert (summary.mem_peak, summary.mem_max, summary.cpu_max, summary.oom_kills, summary.pids_peak) == (
        1932735283, 2 * GIB, 1.0, 1, 9)
    assert summary.cpu_cores == pytest.approx(98 / 102, rel=1e-12)
    assert summary.throttled == pytest.approx(4100 / 102, rel=1e-12)  # (5 × 60 + 5 × 22) / 10.2
    assert texts(summary) == {"memory": "peak 1.80 GiB of 2.00 GiB limit (90%), 1 OOM kill",
                              "cpu": "0.96 of 1.0 cores, throttled 40% of periods"}  # pids: no limit


def test_a_memory_limit_alone() -> None:
    summary = folded([(CgroupSample(mem=100 * 2**20, mem_max=256 * 2**20, oom_kill=0), 5.0)]).summary()
    assert summary is not None
    assert texts(summary) == {"memory": "peak 100.00 MiB of 256.00 MiB limit (39%)"}


def test_no_section_no_summary() -> None:
    assert Folded([]).summary() is None


def test_an_oom_counter_that_started_again_counts_from_its_new_value() -> None:
    counts = [2, 3, 3, 1, 4]
    fold = folded([(CgroupSample(mem_max=1, oom_kill=count), 1.0) for count in counts])
    summary = fold.summary()
    assert summary is not None and summary.oom_kills == 1 + 1 + 3


sections = st.builds(
    CgroupSample,
    mem=st.none() | st.integers(0, 2**40),
    mem_max=st.none() | st.integers(1, 2**40),
    cpu=st.none() | st.integers(0, 2000).map(lambda tenths: tenths / 10),
    cpu_max=st.none() | st.integers(1, 64000).map(lambda thousandths: thousandths / 1000),
    throttled=st.none() | st.integers(0, 1000).map(lambda tenths: tenths / 10),
    oom_kill=st.none() | st.integers(0, 50),
    pids=st.none() | st.integers(0, 4096),
    pids_max=st.none() | st.integers(1, 4096),
)
lines = st.lists(st.tuples(sections, st.integers(1, 10**6).map(lambda ms: ms / 1000)), max_size=12)


@given(lines, st.integers(0, 12))
def test_a_fold_in_parts_is_the_fold_of_it_all(run: list[tuple[CgroupSample, float]], cut: int) -> None:
    whole = folded(run)
    first, second = folded(run[:cut]), folded(run[cut:])
    first.merge(second)
    assert first.summary() == whole.summary()


@given(lines)
def test_the_summary_is_never_negative_and_its_shares_bounded(run: list[tuple[CgroupSample, float]]) -> None:
    summary = folded(run).summary()
    if summary is None:
        return
    assert summary.oom_kills >= 0
    assert summary.cpu_cores is None or summary.cpu_cores >= 0.0
    assert summary.throttled is None or 0.0 <= summary.throttled <= 100.0


def test_texts_when_a_figure_is_unknown() -> None:
    summary = CgroupSummary(mem_peak=None, mem_max=GIB, cpu_cores=None, cpu_max=0.25, throttled=None, oom_kills=0,
                            pids_peak=None, pids_max=None)
    assert texts(summary) == {"memory": "peak unknown of 1.00 GiB limit", "cpu": "unknown of 0.25 cores"}


def test_throttled_throughout_is_100_percent_not_an_ulp_over() -> None:
    # 100 * 0.013 / 0.013 is 100.00000000000001 in floats: the mean of shares of at most 100 stays at most 100.
    summary = folded([(CgroupSample(cpu_max=1.0, throttled=100.0), 0.013)]).summary()
    assert summary is not None
    assert summary.throttled == 100.0
