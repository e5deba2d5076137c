"""The soak harness (`bench/soak.py`) for two minutes with each fault once, and the harness's own checks and clean-up
shown to work: a check that cannot fail and a fault that never fires prove nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench import soak

ROOT = Path(__file__).resolve().parents[2]

RSS_BOUND_KIB = 8 * 1024
"""B's resident memory may grow this much from the end of the warm-up to the end: a leak of 100 bytes a line is
about 10 MiB over the two minutes' 6,000 lines."""
FDS_BOUND = 2
"""B's descriptors, but those it keeps of processes' files in /proc, may grow by this many: one an upload leaked would
be some fifty."""


def _config(tmp_path: Path, minutes: float) -> soak.Config:
    return soak.Config(minutes=minutes, seconds=0.02, cycle_seconds=90, fault_seconds=6, check_seconds=30,
                       upload_seconds=2, keep=500, churn_rate=20, stage_mib=48, warm_up_seconds=20, read_seconds=1,
                       work=tmp_path / "work", report=tmp_path / "report.md")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_two_minutes_of_every_fault_lose_nothing(tmp_path: Path) -> None:
    findings = soak.soak(_config(tmp_path, 2.0))
    report = (tmp_path / "report.md").read_text()
    assert findings.failures == [], report
    assert findings.lost == 0 and findings.torn == 0
    expected = {"503", "reset", "stall", "kill", "term", "churn", "clock", "wait4"}
    if not findings.skipped:
        expected.add("full")
        assert findings.dropped_full >= 1, "the full file system dropped no line: it was not full"
    assert expected <= set(findings.faults), findings.faults
    assert findings.keep_rewrites >= 1 and findings.reader_runs >= 10
    assert findings.churned >= 1000
    probes = [p for p in _probes(tmp_path / "work" / "probes.csv") if p[0] >= 20]
    # A leak grows what the last probes see; the very last may catch B closing its files as the soak stops it, so
    # the most of the last five is held to the first, not the last alone.
    last = probes[-5:]
    assert max(p[1] for p in last) - probes[0][1] <= RSS_BOUND_KIB, probes
    assert max(p[2] for p in last) - probes[0][2] <= FDS_BOUND, probes
    pids = [int(p) for p in (tmp_path / "work" / "pids").read_text().split()]
    assert not [pid for pid in pids if _alive(pid)]
    assert "multipart uploads left open | 0" in report


def _probes(path: Path) -> list[tuple[float, int, int]]:
    rows = [line.split(",") for line in path.read_text().splitlines()]
    return [(float(r[0]), int(r[1]), int(r[2])) for r in rows]


@pytest.mark.slow
def test_an_interrupted_harness_ends_everything_it_started(tmp_path: Path) -> None:
    work = tmp_path / "work"
    harness = subprocess.Popen([sys.executable, "-m", "bench.soak", "--minutes", "5", "--work", str(work)],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            pids = work / "pids"
            if pids.exists() and len(pids.read_text().split()) >= 5:  # moto, two run processes, A and B
                break
            time.sleep(0.2)
        else:
            pytest.fail("the harness did not start its processes")
        started = [int(p) for p in (work / "pids").read_text().split()]
        assert all(_alive(pid) for pid in started[:5])
        if os.geteuid() == 0:
            assert str(work / "stage-a").encode() in Path("/proc/self/mounts").read_bytes()
        harness.send_signal(signal.SIGINT)
        _, stderr = harness.communicate(timeout=120)
    finally:
        if harness.poll() is None:
            os.killpg(harness.pid, signal.SIGKILL)
            harness.wait()
    assert harness.returncode == 1, stderr
    assert b"interrupted" in stderr
    everything = [int(p) for p in (work / "pids").read_text().split()]
    assert not [pid for pid in everything if _alive(pid)]
    assert str(work / "stage-a").encode() not in Path("/proc/self/mounts").read_bytes()


def _check(tmp_path: Path, lines: list[bytes], excused: str | None = None) -> soak.Findings:
    findings = soak.Findings()
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(lines))
    check = soak.LineCheck(path, findings, "X", lambda _before, _after: excused)
    check.advance()
    check.close()
    return findings


def _line(t: float, dt: float, start: float = 100.0) -> bytes:
    return json.dumps({"v": 1, "t": t, "dt": dt, "start": start}).encode() + b"\n"


def test_the_line_check_finds_a_lost_line(tmp_path: Path) -> None:
    whole = [_line(100.2, 0.2), _line(100.22, 0.02), _line(100.24, 0.02), _line(100.26, 0.02)]
    assert _check(tmp_path, whole).failures == []
    lost = _check(tmp_path, whole[:2] + whole[3:])
    assert lost.lost == 1
    assert _check(tmp_path, whole[:2] + whole[3:], excused="full").dropped_full == 1


def test_the_line_check_tells_a_t_off_its_moment_from_a_lost_line(tmp_path: Path) -> None:
    """The third line's `t` 7 ms after the moment its `dt` counts to (the clocks read apart), the fourth's step
    making up for it: no line lost, one `t` off."""
    off = _check(tmp_path, [_line(100.2, 0.2), _line(100.22, 0.02), _line(100.247, 0.02), _line(100.26, 0.02)])
    assert (off.lost, off.t_off) == (0, 1)
    assert off.t_off_max == pytest.approx(0.007)


def test_the_line_check_finds_a_torn_line_and_an_unexplained_new_sampler(tmp_path: Path) -> None:
    torn = _check(tmp_path, [_line(100.2, 0.2), _line(100.22, 0.02)[:30] + b"\n", _line(100.24, 0.04)])
    assert torn.torn == 1
    restarted = [_line(100.2, 0.2), _line(101.2, 0.2, start=101.0)]
    assert len(_check(tmp_path, restarted).failures) == 1
    assert _check(tmp_path, restarted, excused="restart").failures == []


def test_the_slope_is_per_hour() -> None:
    assert soak.slope_per_hour([(0, 0), (60, 1), (120, 2)]) == pytest.approx(60)
    assert soak.slope_per_hour([(0, 5), (60, 5), (120, 5)]) == 0


class _Store:
    """Stands for moto: the object's bytes."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def read(self, bucket: str, key: str) -> bytes:
        return self.body


@pytest.mark.parametrize(
    ("body", "said", "failures"),
    [
        (b"a\nb\n", b"", 0),  # the staging file's whole lines
        (b"a\n", b"orca sample: cannot upload X to s3://B/K: the final upload did not finish within 5 s\n", 0),
        (b"a\n", b"", 1),  # a prefix, though the final upload said nothing
        (b"a\nc\n", b"", 1),  # neither
    ],
)
def test_the_object_check_holds_the_object_to_the_file(
    tmp_path: Path, body: bytes, said: bytes, failures: int
) -> None:
    runner = soak.Soak(_config(tmp_path, 1.0))
    runner.server = _Store(body)  # type: ignore[assignment]
    runner.bucket = "B"
    stage, stderr = tmp_path / "stage.jsonl", tmp_path / "stderr"
    stage.write_bytes(b"a\nb\n{\"half")
    stderr.write_bytes(b"orca sample: cannot upload X to s3://B/K: SlowDown\n" + said)
    sampler = soak.Sampler("A", [], {}, stage, "K", stderr)
    runner.object_against_file(sampler, final=True, since=len(b"orca sample: cannot upload X to s3://B/K: SlowDown\n"))
    assert len(runner.findings.failures) == failures
