"""A file of many runs as a table (docs/metrics.md, "A file of many runs"): its rows kept compact as each run closes,
a run of one line said from the line alone (`fleet/line_row.py`), held to what the same runs each folded and kept
whole (`read_fleet_source`, each made a compact row by `rows.compact`) print as a fleet of one source: the labels
said a piece at a time against `cells.run_labels` of all the runs at once, the rows said from a line against the
fold's."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from orca.sample import line_format as lf
from orca.sample.readback.fleet.columns import SORT_COLUMNS
from orca.sample.readback.fleet.line_row import plain
from orca.sample.readback.fleet.table import Table, fleet_table
from orca.sample.readback.fleet.text import table_text
from orca.sample.readback.fleet.usage import UsageSection
from orca.sample.readback.gather.fold import SECTIONS
from orca.sample.readback.shell.cli.fleet import fleet_output
from orca.sample.readback.shell.cli.metrics import aside, runs_output
from orca.sample.readback.shell.fleet_read import read_fleet_source
from orca.sample.readback.shell.parts import show_runs
from orca.sample.readback.shell.run_rows import RowsKept, nothing
from orca.sample.readback.shell.sources import sources
from tests.lines import line, text_of

START = 1796016000.0
tenths = st.integers(0, 1000).map(lambda n: n / 10)
counts = st.integers(0, 2**40)
cpus = st.builds(lf.CpuShare, tenths, tenths, tenths, tenths, tenths)
mems = st.builds(lf.Mem, *[counts] * 7)
disks = st.builds(lf.Disk, st.sampled_from(["/", "/data"]), counts, counts, counts)
cgroups = st.builds(lf.CgroupSample, mem=st.none() | counts, mem_max=st.none() | counts, cpu=st.none() | tenths,
                    cpu_max=st.none() | st.integers(0, 8000).map(lambda n: n / 1000), oom_kill=st.none() | counts)
exits = st.builds(lf.CommandExit, code=st.none() | st.integers(0, 3), signal=st.none() | st.sampled_from([9, 15, 40]),
                  wall=st.none() | st.integers(0, 10**5).map(lambda n: n / 1000))
runs_ = st.builds(lf.RunSample, cpu=st.none() | tenths, procs=st.none() | st.integers(0, 9),
                  io=st.none() | st.builds(lf.IoRate, counts, counts), exit=st.none() | exits)
containers = st.lists(st.builds(lf.ContainerSample, name=st.sampled_from(["db", "web"]), mem=counts,
                                oom_kill=st.none() | st.integers(0, 2)), max_size=2, unique_by=lambda each: each.name)


T = TypeVar("T")


def rarely(sections: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
    """A section in one line of three: most of cron's lines are the host's figures alone."""
    return st.one_of(st.none(), st.none(), sections)


@st.composite
def many_runs(draw: st.DrawFn) -> list[lf.Sample]:
    """Runs of one to three lines (mostly one, as cron writes them), of one or two hosts, a few of an older sampler
    (no `start`), each section there or not, in the order written; a run's lines may be interleaved with the next's.
    Values from the line's declaration, the flags' bounds among them (idle, saturated, failed, stragglers)."""
    lines: list[lf.Sample] = []
    for number in range(draw(st.integers(2, 12))):
        host = draw(st.sampled_from(["a", "a", "b"]))
        start = None if draw(st.integers(0, 9)) == 0 else START + 60 * number + draw(st.integers(0, 5))
        count = draw(st.sampled_from([1, 1, 1, 2, 3]))
        at = (start or START + 60 * number) + draw(st.integers(0, 600_000)) / 1000
        for _ in range(count):
            dt = draw(st.integers(0, 5000)) / 1000
            at += dt
            lines.append(line(
                t=round(at, 3), dt=dt, host=host, cores=draw(rarely(st.integers(0, 8))),
                cpu=draw(cpus | st.none()), mem=draw(mems | st.none()),
                disk=draw(st.none() | st.lists(disks, max_size=2).map(tuple)),
                io=draw(st.none() | st.builds(lf.IoRate, counts, counts)),
                net=draw(st.none() | st.builds(lf.NetRate, counts, counts)),
                containers_enabled=draw(st.booleans()), containers=tuple(draw(containers)),
                self_cpu=draw(st.none() | st.integers(0, 10**4).map(lambda n: n / 100)),
                pressure=draw(st.none() | st.builds(lf.PressureShare, cpu=tenths, memory=tenths, io=tenths)),
                cgroup=draw(rarely(cgroups)), run=draw(rarely(runs_)), start=start,
            ))
    return lines


def written(path: Path, lines: list[lf.Sample]) -> Path:
    path.write_text("".join(text_of(each) + "\n" for each in lines))
    return path


def both(path: Path, json: bool, each: bool, sort: str) -> tuple[str, str, int]:
    """What `orca metrics` prints of the file at `path` (its runs kept as rows as they close), what the fleet of the
    same runs folded and kept whole prints, and how many runs there are."""
    options = argparse.Namespace(json=json, each=each, sort=sort)
    [source] = sources(str(path))
    kept = RowsKept(aside(options), lambda _: None)
    show_runs(source, kept, parts=1, sections=(*SECTIONS, UsageSection))
    try:
        rows = "".join(runs_output(source.name, kept, options))
    finally:
        kept.aside.close()
    whole = read_fleet_source(source, drawn=0, buckets=False)
    return rows, "".join(fleet_output(fleet_table(whole.runs, (), sort), whole.runs, options)), len(whole.runs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=many_runs(), json=st.booleans(), each=st.booleans(), sort=st.sampled_from(SORT_COLUMNS))
def test_the_table_of_many_runs_is_the_fleets_of_the_same_runs(tmp_path: Path, lines: list[lf.Sample], json: bool,
                                                                each: bool, sort: str) -> None:
    rows, whole, runs = both(written(tmp_path / "cron.jsonl", lines), json, each, sort)
    assume(runs > 1)  # one run prints its block (tests/reader/test_runs.py)
    assert rows == whole


def cron_line(number: int, busy: float, used: int) -> lf.Sample:
    """A run of one line, as `orca sample --count 1` started by cron writes it: the host's figures only."""
    start = START + 60 * number
    return line(t=start + 0.2, dt=0.2, host="h", cores=2, cpu=lf.CpuShare(busy, 1.0, 0.0, 0.0, 50.0),
                mem=lf.Mem(total=1000, used=used, available=0, cache=0, swap_total=0, swap_used=0, rss=0),
                disk=(lf.Disk("/", 100, 40, 60),), io=lf.IoRate(1000, 2000), net=lf.NetRate(30, 40),
                containers_enabled=False,
                containers=None, self_cpu=0.05, pressure=lf.PressureShare(cpu=1.0, memory=0.0, io=0.0), start=start)


@pytest.mark.parametrize("json", [False, True])
def test_runs_of_one_line_and_of_several_print_the_fleets_table(tmp_path: Path, json: bool) -> None:
    """One-line runs said from their lines (the idle among them, with its flag; but the saturated), then a run of
    three lines folded, then more one-line runs: the same table and JSON as the fleet of them all folded."""
    lines = [cron_line(number, 20.0 + number, 300) for number in range(40)]
    lines += [cron_line(40, 5.0, 100), cron_line(41, 95.0, 950)]  # idle (said from its line), saturated (folded)
    three = cron_line(42, 30.0, 500)
    lines += [three, *(msgspec_replace(three, t=three.t + step, dt=1.0) for step in (1.0, 2.0))]
    lines += [cron_line(number, 50.0, 600) for number in range(43, 60)]
    rows, whole, _ = both(written(tmp_path / "cron.jsonl", lines), json, False, "name")
    assert rows == whole
    if not json:
        assert rows.count("\n") > 60 and "idle (1):" in rows and "saturated (1):" in rows


def msgspec_replace(sample: lf.Sample, **changes: float) -> lf.Sample:
    import msgspec

    return msgspec.structs.replace(sample, **changes)


def test_a_line_that_may_be_flagged_but_idle_or_has_a_run_is_folded_not_said_from_the_line() -> None:
    assert plain(cron_line(0, 30.0, 300))
    assert plain(cron_line(0, 5.0, 100))  # idle: its flag said from its line too
    assert not plain(cron_line(0, 95.0, 300))  # saturated
    assert not plain(cron_line(0, 30.0, 950))  # memory full
    assert not plain(msgspec_replace(cron_line(0, 30.0, 300), dt=0.0))  # covers no time
    with_run = cron_line(0, 30.0, 300)
    import msgspec

    assert not plain(msgspec.structs.replace(with_run, run=lf.RunSample(cpu=1.0)))


def test_the_table_of_many_runs_is_written_a_piece_at_a_time(tmp_path: Path) -> None:
    path = written(tmp_path / "cron.jsonl", [cron_line(number, 30.0, 300) for number in range(10_000)])
    [source] = sources(str(path))
    kept = RowsKept(nothing, lambda _: None)
    show_runs(source, kept, parts=1, sections=(*SECTIONS, UsageSection))
    pieces = list(table_text(Table(source.name, kept.rows, "name"), io.StringIO()))
    assert len(pieces) > 3 and "".join(pieces).count("\n") > 10_000


@pytest.mark.parametrize("json", [False, True])
def test_a_file_of_many_runs_read_in_parts_is_the_same_table(tmp_path: Path, json: bool) -> None:
    """The rows of a part read by another process come back (its runs' texts, then its columns) after this
    process's: the table and JSON of two parts are those of one."""
    lines = [cron_line(number, 20.0 + number % 70, 300 + number % 500) for number in range(3000)]
    three = cron_line(3000, 30.0, 500)
    lines += [three, *(msgspec_replace(three, t=three.t + step, dt=1.0) for step in (1.0, 2.0))]
    lines += [cron_line(number, 5.0, 100) for number in range(3001, 3010)]  # idle
    path = written(tmp_path / "cron.jsonl", lines)
    options = argparse.Namespace(json=json, each=False, sort="name")
    printed = []
    for parts in (1, 2):
        [source] = sources(str(path))
        kept = RowsKept(aside(options), lambda _: None)
        show_runs(source, kept, parts=parts, sections=(*SECTIONS, UsageSection))
        try:
            printed.append("".join(runs_output(source.name, kept, options)))
        finally:
            kept.aside.close()
    assert printed[0] == printed[1] and printed[0].count("idle") > 1
