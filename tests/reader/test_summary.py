"""The summary of a hand-worked run: every expected value below is computed by hand from `hand_worked.RUN`."""

from __future__ import annotations

import math
from dataclasses import asdict

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orca.sample.line_format import Sample
from orca.sample.readback.chart.panels import drawn, panels
from orca.sample.readback.gather.fold import RunFold
from orca.sample.readback.gather.records import (
    ContainerSummary,
    CpuSummary,
    DiskSummary,
    InstanceSummary,
    IoSummary,
    MemorySummary,
    NetSummary,
    PressureSummary,
)
from orca.sample.readback.minute import newest_minute
from orca.sample.readback.sample_line import decode_all
from orca.sample.readback.summary.as_json import json_line
from orca.sample.readback.summary.text import block_text
from tests.lines import samples
from tests.reader.folding import summaries
from tests.reader.hand_worked import RUN


def checked(text: str) -> list[Sample]:
    """The samples of `text`, its other lines passed over."""
    return decode_all(text.encode().splitlines())[0]


def summarise(name: str, lines: list[Sample], batch: int = 1024) -> InstanceSummary | None:
    """The summary of lines as one run, whatever their hosts and starts, folded `batch` lines at a time."""
    fold = RunFold()
    for start in range(0, len(lines), batch):
        fold.add(lines[start:start + batch])
    return fold.summary(name)


def summarise_hosts(name: str, batches: list[list[Sample]]) -> list[InstanceSummary]:
    """The summaries of a source's runs, folded in the batches given."""
    return summaries(name, batches)


def summarise_batches(name: str, batches: list[list[Sample]]) -> InstanceSummary | None:
    """The summary of one run's lines, folded in the batches given."""
    [summary] = summarise_hosts(name, batches)
    return summary


def test_the_hand_worked_run() -> None:
    summary = summarise("run.jsonl", checked(RUN))
    assert summary is not None
    assert (summary.name, summary.host, summary.cores) == ("run.jsonl", "h", 2)
    # dt 5, 5, 5, 15, 5: one after the first over 2 × the median dt (5). The run lasted their sum, 35 s: from 95
    # (the last line's t less that) to 130.
    assert (summary.first_t, summary.last_t, summary.duration, summary.lines) == (100.0, 130.0, 35.0, 5)
    assert (summary.median_dt, summary.gaps) == (5.0, 1)
    # busy = user + system + steal: 15, 30, 65, 10 (the fourth line has no cpu). Mean 120 / 4 = 30; the
    # nearest-rank p95 is the ceil(0.95 × 4) = 4th smallest: 65. busiest 40, 60, 90, 20: p95 90.
    assert summary.cpu == CpuSummary(mean_all_cores_percent=30.0, p95_all_cores_percent=65.0,
                                     max_all_cores_percent=65.0, busiest_core_p95_percent=90.0)
    # used 100, 300, 250, 400 of 1000, 350 of 500: the most bytes is 400 (of 1000), the highest share 70 %.
    assert summary.memory == MemorySummary(total=1000, used_peak=400, used_peak_percent=70.0, swap_peak=7,
                                           rss_peak=50)
    # /a 25 %, then /a 50 % and /b 75 %, then /a 75 %: /b reached 75 % first.
    assert summary.disk == DiskSummary(path="/b", peak_percent=75.0)
    # io over 5 s each: read (100 + 200) × 5, write 50 × 5. net 10 × 5 and 20 × 5.
    assert summary.io == IoSummary(read=1500, write=250, read_peak=200, write_peak=50)
    assert summary.net == NetSummary(received=50, sent=100, received_peak=10, sent_peak=20)
    # cpu (1 + 3) / 2, memory 2 / 1, io 4 / 1.
    assert summary.pressure == PressureSummary(cpu=2.0, memory=2.0, io=4.0)
    # db's oom_kill 0, 1, 3, then 1 (its counter went back: a new container of that name): 1 + 2 + 1 = 4.
    assert summary.containers == (ContainerSummary("db", mem_peak=300, oom_kills=4),
                                  ContainerSummary("web", mem_peak=50, oom_kills=0))
    # self_cpu 0.1, 0.2, 0.3, then 0.05 (started again), 0.15: 0.1 + 0.1 + 0.1 + 0.05 + 0.1 = 0.45 s over the
    # 35 s the lines cover: 1.29 % of one core.
    assert summary.self_cpu_seconds == pytest.approx(0.45)
    assert summary.overhead_percent == pytest.approx(0.45 / 35 * 100)


def test_no_lines_no_summary() -> None:
    assert summarise("empty", []) is None


def test_a_line_with_nothing_but_its_time() -> None:
    summary = summarise("bare", checked('{"v":1,"t":7.0,"dt":0.2,"host":"x"}'))
    assert summary is not None
    assert (summary.lines, summary.gaps, summary.duration, summary.median_dt) == (1, 0, 0.2, 0.2)
    assert (summary.cpu, summary.memory, summary.disk, summary.io, summary.net, summary.pressure) == (None,) * 6
    assert (summary.containers, summary.self_cpu_seconds, summary.cores) == ((), 0.0, None)


def test_percentiles_of_twenty_values() -> None:
    """busy 1, 2, ..., 20: the nearest-rank p95 is the 19th value, the mean 10.5."""
    text = "\n".join(
        f'{{"v":1,"t":{t}.0,"dt":1.0,"host":"x","cpu":{{"user":{t}.0,"system":0.0,"iowait":0.0,"steal":0.0,'
        f'"busiest":{t}.0}}}}' for t in range(1, 21)
    )
    summary = summarise("twenty", checked(text))
    assert summary is not None and summary.cpu == CpuSummary(mean_all_cores_percent=10.5, p95_all_cores_percent=19.0,
                                                             max_all_cores_percent=20.0, busiest_core_p95_percent=19.0)


def test_self_cpu_across_batches_and_restarts() -> None:
    def batch(*values: float) -> list[Sample]:
        text = (f'{{"v":1,"t":{i}.0,"dt":1.0,"host":"x","self_cpu":{v}}}' for i, v in enumerate(values))
        return checked("\n".join(text))

    # One sampler: its counter went from 0 (before the first line) to 0.5.
    steady = summarise_batches("steady", [batch(0.1, 0.2), batch(0.3, 0.5)])
    assert steady is not None and steady.self_cpu_seconds == pytest.approx(0.5)
    # Started again in the second batch: 0.2 from the first sampler, then 0.05 + 0.1 from the second.
    restarted = summarise_batches("restarted", [batch(0.1, 0.2), batch(0.05, 0.15)])
    assert restarted is not None and restarted.self_cpu_seconds == pytest.approx(0.35)
    # ... and between the lines of one batch.
    inside = summarise_batches("inside", [batch(0.1, 0.2, 0.05, 0.15)])
    assert inside is not None and inside.self_cpu_seconds == pytest.approx(0.35)


def test_each_host_of_a_source_is_its_own_instance() -> None:
    """Two hosts' lines interleaved in one file, as in a log collected from several pods."""
    def line(host: str, t: float, user: float, dt: float = 5.0) -> str:
        return (f'{{"v":1,"t":{t},"dt":{dt},"host":"{host}","cpu":{{"user":{user},"system":0.0,"iowait":0.0,'
                f'"steal":0.0,"busiest":{user}}}}}')

    text = "\n".join([line("a", 0.0, 10.0), line("b", 1.0, 50.0), line("a", 5.0, 20.0), line("b", 6.0, 50.0),
                      line("a", 10.0, 30.0), line("b", 21.0, 50.0, 15.0)])
    lines = checked(text)
    for batches in ([lines], [lines[:3], lines[3:]], [[one] for one in lines]):
        a, b = summarise_hosts("pods.log", batches)
        # a: t 0, 5, 10 (dt 5, 5, 5: no gap), busy 10, 20, 30 (mean 20); b: t 1, 6, 21 (dt 5, 5, 15: the last is
        # over twice the median dt of 5, one gap), busy 50 throughout.
        assert (a.name, a.host, a.lines, a.gaps, a.first_t, a.last_t) == ("pods.log", "a", 3, 0, 0.0, 10.0)
        assert (b.name, b.host, b.lines, b.gaps, b.first_t, b.last_t) == ("pods.log", "b", 3, 1, 1.0, 21.0)
        assert a.cpu is not None and (a.cpu.mean_all_cores_percent, a.cpu.max_all_cores_percent) == (20.0, 30.0)
        assert b.cpu is not None and (b.cpu.mean_all_cores_percent, b.cpu.max_all_cores_percent) == (50.0, 50.0)


def test_containers_limits_pids_and_throttling() -> None:
    def line(t: float, *entries: str) -> str:
        return f'{{"v":1,"t":{t},"dt":1.0,"host":"h","containers":[{",".join(entries)}]}}'

    text = "\n".join([
        line(1.0, '{"name":"db","mem":10,"throttled":10.0,"pids":3,"mem_max":100}', '{"name":"web","mem":5}'),
        line(2.0, '{"name":"db","mem":30,"throttled":30.0,"pids":7,"mem_max":200}', '{"name":"web","mem":4}'),
        line(3.0, '{"name":"db","mem":20,"pids":5,"io":{"read":1,"write":2},"net":{"in":3,"out":4}}'),
    ])
    summary = summarise("c", checked(text))
    assert summary is not None
    # db: throttled on two lines, (10 + 30) / 2; pids at most 7; the newest limit 200. web has none of these.
    assert summary.containers == (
        ContainerSummary("db", mem_peak=30, oom_kills=0, mem_max=200, pids_peak=7, throttled_mean=20.0),
        ContainerSummary("web", mem_peak=5, oom_kills=0, mem_max=None, pids_peak=None, throttled_mean=None),
    )


runs = st.lists(samples.map(lambda sample: msgspec.structs.replace(sample, host="h", start=7.0)), min_size=1,
                max_size=12)


@settings(max_examples=60, deadline=None)
@given(runs, st.data())
def test_the_summary_does_not_depend_on_how_lines_are_batched(lines: list[Sample], data: st.DataObject) -> None:
    """Counters that go back (self_cpu, oom_kill), gaps and peaks across batch boundaries: any cut of the same lines
    into batches gives the same summary as one batch."""
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(lines) - 1)), max_size=4)))
    batches = [lines[start:end] for start, end in zip([0, *cuts], [*cuts, len(lines)], strict=True)]
    [summary] = summarise_hosts("x", batches)
    assert close(asdict(summary), asdict_of(summarise("x", lines)))


def asdict_of(summary: InstanceSummary | None) -> object:
    return None if summary is None else asdict(summary)


def close(a: object, b: object) -> bool:
    """Equal, numbers within a relative 1e-9: sums taken batch by batch round differently (the byte totals too, which
    are whole numbers rounded from such sums)."""
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[key], b[key]) for key in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(samples, st.sampled_from(["a", "b", "c"]), st.sampled_from([None, 1.0, 2.0])), min_size=1,
                max_size=12))
def test_each_instances_summary_is_that_of_its_lines_alone(
    lines_hosts_starts: list[tuple[Sample, str, float | None]]
) -> None:
    """Each host's lines of each run (its `start`; an older sampler's lines have none) are an instance."""
    lines = [msgspec.structs.replace(line, host=host, start=start) for line, host, start in lines_hosts_starts]
    summaries = summarise_hosts("x", [lines[:5], lines[5:]])
    instances = list(dict.fromkeys((line.host, line.start) for line in lines))
    assert [(summary.host, summary.start) for summary in summaries] == instances
    for summary in summaries:
        alone = summarise("x", [line for line in lines if (line.host, line.start) == (summary.host, summary.start)])
        assert close(asdict(summary), asdict_of(alone))


@settings(max_examples=100, deadline=None)
@given(st.lists(samples, min_size=1, max_size=6))
def test_any_line_a_reader_takes_is_summarised_printed_and_drawn(lines: list[Sample]) -> None:
    """Every value up to the bounds of the line's declaration gives a summary, its text and JSON, a chart's series
    and the newest minute: never an exception (a number too large for a float, a year out of range)."""
    summaries = summarise_hosts("x", [lines])
    assert all(block_text(summary) and json_line(summary) for summary in summaries)
    fold = RunFold(drawn=True)
    for line in lines:
        fold.add([line])
    series = fold.series("x")
    assert series is not None
    for panel in panels([series]):
        drawn(panel, [series])
    newest_minute(lines, now=max(line.t for line in lines))
