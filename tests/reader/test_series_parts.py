"""The chart's series of a file read in parts, each folded on its own (by another process) and merged in order, are
those of one pass over the whole file, exactly: however the lines are cut or batched, whenever the slots grow."""

from __future__ import annotations

from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orca.sample.line_format import CpuShare, Disk, IoRate, Mem, NetRate, PressureShare, Sample
from orca.sample.readback.gather.series import Series
from orca.sample.readback.runs import Run
from orca.sample.readback.shell.parts import show_runs
from orca.sample.readback.shell.shown import Shown
from orca.sample.readback.shell.sources import sources
from tests.reader.folding import every_run, runs_in_parts, series_of, shown_by
from tests.reader.test_parts import cgroups, containers, counting_forks, pieces, run_file, runs, small, tenths

# Values with the decimals a sampler writes (percentages in tenths, bytes whole), as the exactness needs.
line_parts: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries({
    "host": st.sampled_from(["a", "b"]),
    "start": st.sampled_from([None, 10.0, 20.0]),
    "cores": st.none() | st.integers(1, 4),
    "cpu": st.none() | st.builds(CpuShare, tenths, tenths, tenths, tenths, tenths),
    "mem": st.none() | st.builds(Mem, *[small] * 7),
    "disk": st.none() | st.lists(st.builds(Disk, st.sampled_from(["/a", "/b"]), small, small, small),
                                 max_size=2).map(tuple),
    "io": st.none() | st.builds(IoRate, small, small),
    "net": st.none() | st.builds(NetRate, small, small),
    "containers": st.none() | st.lists(containers, max_size=2).map(tuple),
    "pressure": st.none() | st.builds(PressureShare, cpu=st.none() | tenths, memory=st.none() | tenths,
                                      io=st.none() | tenths),
    "run": st.none() | runs,
    "cgroup": st.none() | cgroups,
})
# Times in whole milliseconds that never go back: 0 apart (one slot), a few ms, or seconds (a gap).
steps = st.lists(st.sampled_from([0, 1, 7, 1000, 5000, 60_000]), min_size=1, max_size=60)


@st.composite
def sampled_lines(draw: st.DrawFn) -> list[Sample]:
    times = list(accumulate(draw(steps)))
    return [Sample(v=1, t=1000.0 + ms / 1000, dt=1.0, **draw(line_parts)) for ms in times]


def shown(series: list[Series]) -> str:
    """Everything a chart is drawn from, as text (a NaN is `nan` in it, equal to another)."""
    return repr(series)


def drawn(runs: list[Run]) -> str:
    return shown(series_of(runs, "run"))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sampled_lines(), st.data())
def test_series_of_parts_merged_in_order_are_the_series_of_the_whole(lines: list[Sample],
                                                                     data: st.DataObject) -> None:
    max_points = data.draw(st.sampled_from([1, 2, 3, 2000]))
    whole = runs_in_parts([[lines]], drawn=6, max_points=max_points)
    cuts = data.draw(st.lists(st.integers(0, len(lines)), max_size=3))
    every_part = [pieces(part, data.draw(st.lists(st.integers(0, len(part)), max_size=3)))
                  for part in pieces(lines, cuts)]
    assert drawn(runs_in_parts(every_part, drawn=6, max_points=max_points)) == drawn(whole)


def test_a_file_drawn_in_parts_by_several_processes_as_in_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--plot`'s reading: the series and the summaries of 3,000 lines (two hosts, each with two runs) read by three
    processes are one reader's."""
    path = run_file(tmp_path / "run.jsonl", 3000)
    [source] = sources(str(path))
    forks = counting_forks(monkeypatch)
    one, one_series, one_tally = shown_by(source, 1, drawn=6)
    many, many_series, many_tally = shown_by(source, 3, drawn=6)
    assert len(forks) == 2
    assert many_tally == one_tally and many_tally.samples == 3000
    assert many == one
    assert [(one.host, one.start) for one in many_series] == [("b", 95.0), ("a", 95.0), ("a", 7595.0),
                                                               ("b", 7595.0)]
    assert shown(many_series) == shown(one_series)


def test_only_the_first_runs_are_drawn_however_the_file_is_cut(tmp_path: Path) -> None:
    """Of the four runs, the first two to begin are drawn, read whole or in parts."""
    path = run_file(tmp_path / "run.jsonl", 3000)
    [source] = sources(str(path))
    one, whole, _ = shown_by(source, 1, drawn=2)
    many, cut, _ = shown_by(source, 3, drawn=2)
    assert [(one.host, one.start) for one in cut] == [("b", 95.0), ("a", 95.0)]
    assert shown(cut) == shown(whole) and many == one


def test_the_drawing_is_prepared_once_this_process_has_read_its_part(tmp_path: Path) -> None:
    """`meanwhile` (matplotlib's import) runs once when other processes read parts of the file, and not at all when
    this process reads it alone (then the drawing imports what it needs)."""
    path = run_file(tmp_path / "run.jsonl", 3000)
    [source] = sources(str(path))
    calls: list[int] = []
    show_runs(source, Shown(lambda _: "", lambda _: None), 6, 1, meanwhile=lambda: calls.append(1))
    assert calls == []
    tally = show_runs(source, Shown(lambda _: "", lambda _: None), 6, 3, meanwhile=lambda: calls.append(1))
    assert calls == [1] and tally.samples == 3000


def test_every_run_of_the_lines_in_one_pass() -> None:
    """The series of a source's runs folded in one pass are those of each run's lines alone."""
    lines = [Sample(v=1, t=1000.0 + i, dt=1.0, host="ab"[i % 2], start=10.0, cpu=CpuShare(1.0, 0.0, 0.0, 0.0, 1.0))
             for i in range(20)]
    both = series_of(every_run([lines], drawn=2), "run")
    alone = [series_of(every_run([[line for line in lines if line.host == host]], drawn=1), "run")[0]
             for host in "ab"]
    assert shown(both) == shown(alone)
