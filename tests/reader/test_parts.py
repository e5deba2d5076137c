"""A file read in parts, each folded on its own (by another process) and the folds merged in order, gives what one
pass over the whole file gives: the summaries, the tally of what was passed over, every line once. Every part is read
from the file that was opened first."""

from __future__ import annotations

import json
import os
import pickle
import signal
from dataclasses import asdict
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from orca.sample.line_format import (
    CgroupSample,
    CommandExit,
    ContainerSample,
    CpuShare,
    Disk,
    IoRate,
    Mem,
    NetRate,
    PressureShare,
    RunSample,
    Sample,
)
from orca.sample.readback.lines import Batch
from orca.sample.readback.runs import opens_run, run_key
from orca.sample.readback.shell import parts
from orca.sample.readback.shell.cli import metrics
from orca.sample.readback.shell.sources import Tally, descriptor_batches, part_starts, sources
from orca.sample.shared.backwards import line_start_before
from tests.lines import text_of
from tests.reader.folding import runs_in_parts, shown_by, summaries, summaries_of
from tests.reader.test_summary import close

# Lines that meet across a cut: two hosts, the same containers and disks, counters that go back (oom_kill,
# self_cpu), times that repeat or step back, equal peaks (the first must win, as in one pass).
small = st.integers(0, 6)
tenths = st.integers(0, 1000).map(lambda n: n / 10)
containers = st.builds(
    ContainerSample, name=st.sampled_from(["db", "web"]), mem=small, cpu=tenths, mem_nocache=small,
    oom_kill=st.none() | small, throttled=st.none() | tenths, mem_max=st.none() | small, pids=st.none() | small,
)
cgroups = st.builds(
    CgroupSample, mem=st.none() | small, mem_max=st.none() | small, cpu=st.none() | tenths,
    cpu_max=st.none() | st.sampled_from([0.5, 1.0, 2.25]), throttled=st.none() | tenths,
    oom_kill=st.none() | small, pids=st.none() | small, pids_max=st.none() | small,
)
runs = st.builds(
    RunSample, cpu=st.none() | tenths, procs=st.none() | small,
    command=st.none() | st.sampled_from([("make",), ("sh", "-c", "x")]), argc=st.none() | small,
    exit=st.none() | st.builds(CommandExit, code=st.none() | small, signal=st.none() | small,
                               wall=st.none() | tenths, max_rss=st.none() | small),
)
close_lines = st.builds(
    Sample,
    v=st.just(1),
    t=st.integers(0, 40).map(float),
    dt=st.sampled_from([1.0, 5.0, 0.5]),
    host=st.sampled_from(["a", "b"]),
    cores=st.none() | st.integers(1, 4),
    cpu=st.none() | st.builds(CpuShare, tenths, tenths, tenths, tenths, tenths),
    mem=st.none() | st.builds(Mem, *[small] * 7),
    disk=st.none() | st.lists(st.builds(Disk, st.sampled_from(["/a", "/b"]), small, small, small), max_size=2).map(
        tuple),
    io=st.none() | st.builds(IoRate, small, small),
    net=st.none() | st.builds(NetRate, small, small),
    containers=st.none() | st.lists(containers, max_size=2).map(tuple),
    self_cpu=(st.integers(0, 50) | st.integers(0, 10**7)).map(lambda n: n / 100),
    pressure=st.none() | st.builds(PressureShare, cpu=st.none() | tenths, memory=st.none() | tenths,
                                   io=st.none() | tenths),
    cgroup=st.none() | cgroups,
    run=st.none() | runs,
    # Two runs of a host, and lines of an older sampler, which have no start.
    start=st.none() | st.sampled_from([1.0, 2.0]),
)


def pieces(items: list[Sample], cuts: list[int]) -> list[list[Sample]]:
    bounds = sorted(cuts)
    return [items[start:end] for start, end in zip([0, *bounds], [*bounds, len(items)], strict=True)]


def by_run(documents: list[Any]) -> list[Any]:
    """Summaries in the order of their runs (host and start): a block's place among the others may differ between a
    file read in parts and read whole, for runs that cross a cut."""
    return sorted(documents, key=lambda each: (each["host"], str(each["start"]), each["first_t"]))


def as_written(lines: list[Sample]) -> list[Sample]:
    """`lines` as samplers write them: only a run's first line has the `t` of its `start` plus its `dt` (a later line
    that happens to is moved a quarter of a second on), as a part of a file tells a run that begins in it by that."""
    seen: set[tuple[str, float | None]] = set()
    written = []
    for line in lines:
        if run_key(line) in seen and opens_run(line):
            line = msgspec.structs.replace(line, t=line.t + 0.25)
        seen.add(run_key(line))
        written.append(line)
    return written


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(close_lines, min_size=1, max_size=16).map(as_written), st.data())
def test_folds_of_parts_merged_in_order_are_the_fold_of_the_whole(lines: list[Sample], data: st.DataObject) -> None:
    # Cuts anywhere, at the start and the end too (an empty part), each part batched its own way.
    cuts = data.draw(st.lists(st.integers(0, len(lines)), max_size=3))
    every_part = [pieces(part, data.draw(st.lists(st.integers(0, len(part)), max_size=2)))
                  for part in pieces(lines, cuts)]
    every_batch = [batch for part in every_part for batch in part]
    merged = runs_in_parts([pickle.loads(pickle.dumps(part)) for part in every_part])  # as a worker sends it back
    in_parts = [asdict(summary) for summary in summaries_of(merged)]
    # Exactly what one fold of the same batches gives, to the last bit of every float (a file's parts are read in
    # the batches one reader of the whole file has) ...
    assert by_run(in_parts) == by_run([asdict(summary) for summary in summaries("x", every_batch)])
    # ... and what one fold of the lines in a single batch gives, but for the rounding of sums.
    assert close(by_run(in_parts), by_run([asdict(summary) for summary in summaries("x", [lines])]))


def test_a_counter_that_goes_back_across_the_cut() -> None:
    """self_cpu 0.1, 0.3 | 0.05, 0.2 (the sampler started again after the cut): 0.1 + 0.2, then 0.05 + 0.15 = 0.5 s.
    oom_kill of db 1, 2 | 4 (rose by 2 across the cut), 0 (a new container of that name): 1 + 2 + 0 = 3."""
    def line(t: float, self_cpu: float, oom_kill: int) -> Sample:
        return Sample(v=1, t=t, dt=1.0, host="h", containers=(ContainerSample(name="db", mem=1, oom_kill=oom_kill),),
                      self_cpu=self_cpu)

    lines = [line(1.0, 0.1, 1), line(2.0, 0.3, 2), line(3.0, 0.05, 4), line(4.0, 0.2, 0)]
    [summary] = summaries_of(runs_in_parts([[lines[:2]], [lines[2:]]]))
    assert summary.self_cpu_seconds == pytest.approx(0.5)
    assert summary.containers[0].oom_kills == 3


TEXT = st.lists(st.sampled_from([b"a", b"bc", b"\n", b"{}\n", b"xyz\n"]), max_size=30).map(b"".join)


@settings(max_examples=150, deadline=None)
@given(TEXT, st.integers(1, 9), st.integers(1, 5), st.integers(0, 40))
@example(b"", 4, 2, 0)
@example(b"no newline at all", 4, 3, 0)
@example(b"ab\ncd\nef", 3, 3, 0)  # cuts right after a newline
@example(b"ab\ncd\nef\ngh\n", 1, 2, 1000)  # the first part as short as it may be
def test_parts_hold_every_line_once_in_the_batches_of_one_reader(
    tmp_path_factory: pytest.TempPathFactory, text: bytes, chunk: int, count: int, shorter_first: int
) -> None:
    path = tmp_path_factory.mktemp("parts") / "lines"
    path.write_bytes(text)
    starts = part_starts(lambda offset, length: text[offset:offset + length], len(text), count, chunk, shorter_first)
    assert starts[0] == 0 and starts == sorted(set(starts)) and len(starts) <= count
    assert all(text[start - 1:start] == b"\n" for start in starts[1:])
    ends: list[int | None] = [*starts[1:], None]
    batches = [batch.lines for start, end in zip(starts, ends, strict=True)
               for batch in batches_of(path, start, end, chunk)]
    # The same batches as one reader from the start; the last line without its newline is left out, as by one.
    assert batches == [batch.lines for batch in batches_of(path, 0, None, chunk)]
    assert b"".join(line for batch in batches for line in batch) == text[:text.rfind(b"\n") + 1]


def batches_of(path: Path, start: int, end: int | None, chunk: int) -> list[Batch]:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        return list(descriptor_batches(descriptor, start, end, chunk))
    finally:
        os.close(descriptor)


def test_the_first_part_is_shorter_by_what_is_asked_at_most_half_an_even_share() -> None:
    text = b"abcdefghi\n" * 100  # 1,000 bytes of lines of 10

    def read_at(offset: int, length: int) -> bytes:
        return text[offset:offset + length]

    assert part_starts(read_at, len(text), 2, 1) == [0, 500]
    assert part_starts(read_at, len(text), 2, 1, shorter_first=200) == [0, 400]  # parts of 400 and 600 bytes
    assert part_starts(read_at, len(text), 2, 1, shorter_first=10**6) == [0, 370]  # 250 at most: 375, at a line
    assert part_starts(read_at, len(text), 3, 1, shorter_first=150) == [0, 230, 610]  # 230, 380 and 390


@settings(max_examples=100, deadline=None)
@given(TEXT, st.lists(st.integers(0, 200), max_size=4))
def test_cuts_at_any_offset_lose_and_repeat_no_line(tmp_path_factory: pytest.TempPathFactory, text: bytes,
                                                    offsets: list[int]) -> None:
    """Cut at a line's start found from any offset: inside a line, on a newline, at 0, at or past the end."""
    path = tmp_path_factory.mktemp("cuts") / "lines"
    path.write_bytes(text)
    starts = sorted({0, *(line_start_before(lambda at, n: text[at:at + n], min(o, len(text)), 3) for o in offsets)})
    ends: list[int | None] = [*starts[1:], None]
    lines = [line for start, end in zip(starts, ends, strict=True) for batch in batches_of(path, start, end, 4)
             for line in batch.lines]
    assert lines == text.splitlines(keepends=True)[:text.count(b"\n")]


def run_file(path: Path, count: int) -> Path:
    """`count` lines of two hosts, each host's first half of one run and second half of another (started again with
    the same file), with a pod's own text, bad lines and a last line being written among them."""
    rows: list[bytes] = []
    for i in range(count):
        first_half = i < count // 2
        rows.append(text_of(Sample(
            v=1, t=100.0 + i * 5, dt=5.0, host="a" if i % 7 else "b", cores=2,
            cpu=CpuShare(i % 97 + 0.5, 1.0, 0.0, 0.0, float(i % 89)),
            mem=Mem(1000, i % 500, 1, 1, 0, 0, i % 300), disk=(Disk("/", 100, i % 60, 40),),
            io=IoRate(i % 13, 7), net=NetRate(3, i % 11),
            containers=(ContainerSample(name="db", mem=i % 41, cpu=0.0, mem_nocache=1, oom_kill=i // 100),),
            self_cpu=(i % 50) / 100, pressure=PressureShare(cpu=i % 10 + 0.1, io=0.0),
            cgroup=CgroupSample(mem=i % 37, mem_max=64, cpu=float(i % 101), cpu_max=0.5, throttled=float(i % 3),
                                oom_kill=i // 300, pids=i % 9, pids_max=100),
            run=RunSample(cpu=i % 51 + 0.5, procs=i % 5, command=("make", "-j4") if i in (0, count // 2) else None,
                          exit=CommandExit(code=i % 4, wall=float(i)) if i in (count // 2 - 1, count - 1) else None),
            start=95.0 if first_half else 95.0 + 5 * (count // 2),
        ), frozenset({"argc", "code", "command", "error", "exit", "max_rss", "signal", "system", "user",
                      "wall"})).encode())
        if i % 101 == 0:
            rows.append(b"pod says hello")
        if i % 211 == 0:
            rows.append(b'{"v":2,"t":1.0}')
    path.write_bytes(b"\n".join(rows) + b"\n" + b'{"v":1,"t":')
    return path


def counting_forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    forks: list[int] = []
    real_fork = os.fork

    def counted_fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", counted_fork)
    return forks


@pytest.mark.parametrize("count", [2, 3])
def test_a_file_in_parts_by_several_processes_as_in_one(tmp_path: Path, count: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = run_file(tmp_path / "run.jsonl", 3000)
    [source] = sources(str(path))
    forks = counting_forks(monkeypatch)
    one, _, one_tally = shown_by(source, 1)
    assert not forks
    many, _, many_tally = shown_by(source, count)
    assert len(forks) == count - 1
    # 3000 samples; 30 pod lines (i = 0, 101, ..., 2929) and 15 lines of another v (i = 0, 211, ..., 2954) passed
    # over; the last, without its newline, not read.
    assert (many_tally.samples, many_tally.other, many_tally.skipped) == (3000, 30, 15)
    assert many_tally == one_tally
    assert many == one and len(many) == 4  # two hosts, each of two runs: in the same order


def test_when_no_process_can_be_made_the_file_is_read_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = run_file(tmp_path / "run.jsonl", 500)
    [source] = sources(str(path))
    expected = shown_by(source, 1)[0]

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    documents, _, tally = shown_by(source, 2)
    assert documents == expected and tally.samples == 500


def test_a_worker_that_fails_has_its_part_read_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = run_file(tmp_path / "run.jsonl", 500)
    [source] = sources(str(path))
    expected = shown_by(source, 1)[0]
    here = os.getpid()
    real = descriptor_batches

    def fails_elsewhere(descriptor: int, start: int = 0, end: int | None = None) -> Any:
        if os.getpid() != here:
            os.kill(os.getpid(), signal.SIGKILL)  # the worker dies, as one killed for memory would
        return real(descriptor, start, end)

    monkeypatch.setattr(parts, "descriptor_batches", fails_elsewhere)
    documents, _, tally = shown_by(source, 3)
    assert documents == expected and tally.samples == 500


WHY = {
    "raises": "ZeroDivisionError: a bug in a worker, raised in fails_elsewhere (test_parts.py:",
    "dies": "BrokenProcessPool: A process in the process pool was terminated abruptly",
    "comes back unreadable": "BrokenProcessPool: A process in the process pool was terminated abruptly while the "
    "future was running or pending. (ValueError: not taken), raised in not_taken (test_parts.py:",
}


@pytest.mark.parametrize("fails", sorted(WHY))
def test_a_worker_that_fails_says_why_and_the_output_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   fails: str) -> None:
    """A worker's failure costs only time, and says itself on standard error, naming the file: what it raised and
    where, that it died, or why its part could not be taken back. A bug in a worker, or a worker killed, shows as
    what it is, not as a slower read."""
    path = run_file(tmp_path / "run.jsonl", 2000)
    monkeypatch.setattr(parts, "MIN_PART_BYTES", path.stat().st_size // 3)
    monkeypatch.setattr(parts, "usable_cores", lambda: 1)
    assert metrics.metrics_main([str(path), "--json"]) == 0
    alone = capsys.readouterr()
    here = os.getpid()
    real = descriptor_batches

    def fails_elsewhere(descriptor: int, start: int = 0, end: int | None = None) -> Any:
        if os.getpid() != here and fails == "dies":
            os.kill(os.getpid(), signal.SIGKILL)
        if os.getpid() != here and fails == "raises":
            raise ZeroDivisionError("a bug  in a worker")
        return real(descriptor, start, end)

    def not_taken(self: object, state: object) -> None:  # the part's tally, as this process takes it from the pipe
        raise ValueError("not taken")

    monkeypatch.setattr(parts, "descriptor_batches", fails_elsewhere)
    if fails == "comes back unreadable":
        monkeypatch.setattr(Tally, "__setstate__", not_taken, raising=False)
    monkeypatch.setattr(parts, "usable_cores", lambda: 2)
    assert metrics.metrics_main([str(path), "--json"]) == 0
    both = capsys.readouterr()
    assert both.out == alone.out
    said, rest = both.err.split("\n", 1)
    assert rest == alone.err
    start = part_starts(lambda at, length: path.read_bytes()[at:at + length], path.stat().st_size, 2)[1]
    assert said.startswith(f"orca metrics: {path}: a worker failed reading its part (from byte {start}): {WHY[fails]}")
    assert said.endswith("; its part was read here"), said


@pytest.mark.parametrize("count", [2, 3])
def test_a_worker_that_cannot_be_started_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], count: int) -> None:
    """No process can be forked (too many processes: EAGAIN): said once, naming the file and the first part not
    given to a worker, and every part is read here."""
    path = run_file(tmp_path / "run.jsonl", 2000)
    monkeypatch.setattr(parts, "MIN_PART_BYTES", path.stat().st_size // 4)
    monkeypatch.setattr(parts, "usable_cores", lambda: 1)
    assert metrics.metrics_main([str(path), "--json"]) == 0
    alone = capsys.readouterr()

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setattr(parts, "usable_cores", lambda: count)
    assert metrics.metrics_main([str(path), "--json"]) == 0
    both = capsys.readouterr()
    assert both.out == alone.out
    said, rest = both.err.split("\n", 1)
    assert rest == alone.err
    start = part_starts(lambda at, length: path.read_bytes()[at:at + length], path.stat().st_size, count)[1]
    then = "its part was read here" if count == 2 else "the parts from there on were read here"
    assert said == (f"orca metrics: {path}: no worker could be started for its part (from byte {start}): "
                     f"Resource temporarily unavailable; {then}")


def test_a_file_replaced_while_read_in_parts_is_read_whole_from_the_first(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`--keep` replaces the file by rename while it is read: every part is read from the file opened first, so the
    summary is the old file's, never a mix of the two."""
    path = run_file(tmp_path / "run.jsonl", 600)
    other = run_file(tmp_path / "other.jsonl", 900)
    [source] = sources(str(path))
    expected = shown_by(source, 1)[0]
    real = part_starts

    def replaced_meanwhile(*args: Any, **kwargs: Any) -> list[int]:
        starts = real(*args, **kwargs)
        os.replace(other, path)  # after this reader opened it, before the workers read their parts
        return starts

    monkeypatch.setattr(parts, "part_starts", replaced_meanwhile)
    documents, _, tally = shown_by(source, 3)
    assert documents == expected and tally.samples == 600


def test_orca_metrics_reads_a_large_file_in_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = run_file(tmp_path / "run.jsonl", 2000)
    monkeypatch.setattr(parts, "MIN_PART_BYTES", path.stat().st_size // 3)
    monkeypatch.setattr(parts, "usable_cores", lambda: 1)
    assert metrics.metrics_main([str(path), "--json"]) == 0
    alone = capsys.readouterr()
    monkeypatch.setattr(parts, "usable_cores", lambda: 2)
    forks = counting_forks(monkeypatch)
    assert metrics.metrics_main([str(path), "--json"]) == 0
    both = capsys.readouterr()
    assert both.out == alone.out and both.err == alone.err
    assert len(json.loads(both.out)["rows"]) == 4  # two hosts, each of two runs: a table of four rows
    # i = 0, 211, ..., 1899: 10 lines of another v.
    assert "10 lines skipped (10 v is not 1)" in both.err
    assert forks == [1]


def test_equal_peaks_across_the_cut_the_first_wins() -> None:
    """/a at 50 % before the cut, /b at 50 % after: /a was at the fullest first. used 5 of 10, then 5 of 20: the
    first line with the most used gives the total, 10."""
    def line(t: float, path: str, total: int) -> Sample:
        return Sample(v=1, t=t, dt=1.0, host="h", mem=Mem(total, 5, 0, 0, 0, 0, 0), disk=(Disk(path, 2, 1, 1),),
                      self_cpu=0.0)

    lines = [line(1.0, "/a", 10), line(2.0, "/b", 20)]
    [summary] = summaries_of(runs_in_parts([[lines[:1]], [lines[1:]]]))
    assert summary.disk is not None and (summary.disk.path, summary.disk.peak_percent) == ("/a", 50.0)
    assert summary.memory is not None and (summary.memory.total, summary.memory.used_peak) == (10, 5)


def test_a_rise_across_the_cut_to_the_last_bit() -> None:
    """self_cpu 3488.56 | 9390.78, 7565.31 (started again): 9390.78 + 7565.31 = 16956.09 s, the same float whether
    the two batches were folded apart and merged or one after the other (taking the rise across the cut as one
    rounded difference would be off in the last bit)."""
    def line(t: float, self_cpu: float) -> Sample:
        return Sample(v=1, t=t, dt=1.0, host="h", self_cpu=self_cpu)

    lines = [line(1.0, 3488.56), line(2.0, 9390.78), line(3.0, 7565.31)]
    [merged] = summaries_of(runs_in_parts([[lines[:1]], [lines[1:]]]))
    [one] = summaries("x", [lines[:1], lines[1:]])
    assert merged.self_cpu_seconds == one.self_cpu_seconds == pytest.approx(16956.09)


def test_a_file_too_small_to_cut_does_not_ask_for_the_cores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory of many small files reads each in one process without reading the cgroup's limits for each."""
    path = run_file(tmp_path / "run.jsonl", 50)

    def asked() -> int:
        raise AssertionError("the cores were asked for")

    monkeypatch.setattr(parts, "usable_cores", asked)
    [source] = sources(str(path))
    assert shown_by(source)[2].samples == 50


def test_the_workers_parts_are_not_read_again_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Each worker reads its part and hands it back whole: this process reads only the first part (a worker whose
    result could not come back would have its part read here again, as a failed one)."""
    path = run_file(tmp_path / "run.jsonl", 3000)
    [source] = sources(str(path))
    here = os.getpid()
    read_here: list[int] = []
    real = descriptor_batches

    def counted(descriptor: int, start: int = 0, end: int | None = None) -> Any:
        if os.getpid() == here:
            read_here.append(start)
        return real(descriptor, start, end)

    monkeypatch.setattr(parts, "descriptor_batches", counted)
    forks = counting_forks(monkeypatch)
    for drawn in (0, 6):
        read_here.clear()
        forks.clear()
        documents, _, tally = shown_by(source, 3, drawn=drawn)
        # A part read here again says why: no worker could be forked, or what the failed one said.
        assert read_here == [0], f"{len(forks)} of 2 workers forked; {capsys.readouterr().err or 'nothing said'}"
        assert tally.samples == 3000 and len(documents) == 4
