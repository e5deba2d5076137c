"""`orca metrics` on input made to break it: lines that never end, devices and sparse files, files that cannot be
read among others. Each ends with what could be read summarised, a message for the rest, and bounded memory."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orca.sample.line_format import ContainerSample, Sample
from orca.sample.readback.shell.cli.metrics import metrics_main
from orca.sample.readback.shell.sources import SourceError, read_samples
from orca.sample.readback.summary.text import block_text
from tests.reader.hand_worked import RUN, locked, sample
from tests.reader.test_summary import summarise

MEMORY_LIMIT = 512 * 2**20
"""The data segment `orca metrics` runs in here: far more than it needs, far less than the input it is given."""


def orca_metrics(*args: str, timeout: float = 120, memory: int = MEMORY_LIMIT) -> subprocess.CompletedProcess[str]:
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))

    return subprocess.run([sys.executable, "-m", "orca.sample", "metrics", *args], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limited)


def test_a_line_longer_than_any_samples_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with path.open("w") as out:
        out.write(sample(100.0) + "\n")
        out.write("{" + "x" * (50 * 2**20) + "\n")  # 50 MB on one line
        out.write(sample(105.0) + "\n")
    done = orca_metrics("--json", str(path))
    assert done.returncode == 0, done.stderr
    assert '"lines":2' in done.stdout
    assert f"{path}: 1 line skipped (1 longer than 16 MiB)" in done.stderr


def test_a_device_that_never_ends_is_given_up() -> None:
    done = orca_metrics("/dev/zero")
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["orca metrics: /dev/zero: read no further: 1 GiB without a newline",
                                        "orca metrics: /dev/zero: no sample lines"]


def test_a_sparse_file_is_not_read_through_its_hole(tmp_path: Path) -> None:
    """Ten gigabytes of nothing between two lines: the hole is passed over, its line (the zeros and the last
    sample) is too long to be a sample."""
    path = tmp_path / "sparse.jsonl"
    with path.open("wb") as out:
        out.write(sample(100.0).encode() + b"\n")
        out.seek(10 * 2**30)
        out.write(sample(105.0).encode() + b"\n")
    with path.open("rb") as check:
        if os.lseek(check.fileno(), 0, os.SEEK_HOLE) >= path.stat().st_size:
            pytest.skip("this file system keeps no holes")
    done = orca_metrics("--json", str(path), timeout=60)
    assert done.returncode == 0, done.stderr
    assert '"lines":1' in done.stdout and '"last_t":100.0' in done.stdout
    assert f"{path}: 1 line skipped (1 longer than 16 MiB)" in done.stderr


def unreadable(path: Path) -> Path:
    """A `*.jsonl` that cannot be read, whoever reads it: one whose reading fails (`/proc/self/mem` at offset 0)."""
    if not Path("/proc/self/mem").exists():
        pytest.skip("no /proc")
    path.symlink_to("/proc/self/mem")
    return path


def test_a_file_that_cannot_be_read_in_a_directory_is_named_and_the_rest_summarised(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "a.jsonl").write_text(RUN)
    bad = unreadable(run / "b.jsonl")
    (run / "c.jsonl").write_text(sample(200.0) + "\n")
    done = orca_metrics("--each", str(run))  # a fleet, each run's block after its table
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == f"orca metrics: {bad}: Input/output error"
    assert "no lines (1):\n  b  could not be read\n" in done.stdout
    assert f"{run / 'a.jsonl'}  (host h, 2 cores)" in done.stdout and f"{run / 'c.jsonl'}" in done.stdout
    assert "total: 2 runs, 6 lines" in done.stdout
    samples = read_samples(str(run))
    assert [next(samples).t for _ in range(5)] == [100.0, 105.0, 110.0, 125.0, 130.0]
    with pytest.raises(SourceError, match=r"b\.jsonl: Input/output error"):
        next(samples)


def test_a_file_without_permission_in_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(RUN)
    unread = locked(tmp_path / "b.jsonl")
    done = orca_metrics(str(tmp_path))
    assert done.returncode == 1
    assert f"orca metrics: {unread}: Permission denied" in done.stderr
    assert f"{tmp_path / 'a.jsonl'}  (host h, 2 cores)" in done.stdout


FORGED = "\x1b[2J\n  cpu       mean 0.0%"
"""Text that would clear a terminal and start a row of its own, were it printed as it is."""


def test_names_are_printed_with_their_control_characters_escaped(tmp_path: Path) -> None:
    path = tmp_path / f"run{FORGED}.jsonl"
    path.write_text(json.dumps({
        "v": 1, "t": 100.0, "dt": 5.0, "host": f"h{FORGED}\u202e", "self_cpu": 0.0,
        "disk": [{"path": f"/x{FORGED}", "total": 2, "used": 1, "free": 1}],
        "containers": [{"name": f"db{FORGED}", "mem": 1}],
    }) + "\n" + '{"v":2}\n')
    done = orca_metrics(str(path))
    assert done.returncode == 0, done.stderr
    shown = r"\x1b[2J\n  cpu       mean 0.0%"
    assert done.stdout.splitlines() == [
        f"{tmp_path}/run{shown}.jsonl  (host h{shown}\\u202e)",
        "  time           1970-01-01T00:01:35Z to 1970-01-01T00:01:40Z  (5.0 s)",
        "  lines          1, 0 gaps (median interval 5 s)",
        f"  host disk      fullest /x{shown} at 50.0%",
        f"  container      db{shown}: mem peak 1 B",
        "  sampler        0.00 s of CPU, 0.00% of one core",
    ]
    assert done.stderr == f"orca metrics: {tmp_path}/run{shown}.jsonl: 1 line skipped (1 v is not 1)\n"


def test_a_chart_of_names_matplotlib_would_read_as_mathematics(tmp_path: Path) -> None:
    path = tmp_path / "we$ird^.jsonl"
    path.write_text(json.dumps({"v": 1, "t": 100.0, "dt": 5.0, "host": "a$\\frac{x$b\x1b[31m",
                                "containers": [{"name": "$^$", "mem": 1}]}) + "\n")
    chart = tmp_path / "run.png"
    done = orca_metrics(str(path), "--plot", str(chart))
    assert done.returncode == 0, done.stderr
    assert chart.read_bytes().startswith(b"\x89PNG")


def test_with_many_containers_the_largest_are_shown_and_the_others_counted() -> None:
    """2,500 containers, each on one line with `mem` its number: the 1,000 of the highest peak are shown (1,500 to
    2,499), the 1,500 others counted, exactly while there are few names."""
    lines = [Sample(v=1, t=float(n), dt=1.0, host="h", containers=(ContainerSample(name=f"c{n:04d}", mem=n),))
             for n in range(2500)]
    summary = summarise("many", lines)
    assert summary is not None
    assert [container.name for container in summary.containers] == [f"c{n:04d}" for n in range(1500, 2500)]
    assert (summary.containers_omitted, summary.containers_omitted_estimated) == (1500, False)
    shown = "  container      and 1,500 more, not shown: the 1,000 above had the highest memory peaks\n"
    assert shown in block_text(summary)


def many_containers(path: Path) -> Path:
    """400,000 containers, 8 to a line."""
    with path.open("w") as out:
        for line in range(50_000):
            entries = [{"name": f"job-{line * 8 + n}", "mem": line * 8 + n} for n in range(8)]
            out.write(json.dumps({"v": 1, "t": 1000.0 + line, "dt": 1.0, "host": "h", "containers": entries}) + "\n")
    return path


def test_memory_stays_bounded_with_hundreds_of_thousands_of_containers(tmp_path: Path) -> None:
    path = many_containers(tmp_path / "many.jsonl")
    done = orca_metrics("--json", str(path), memory=160 * 2**20)
    assert done.returncode == 0, done.stderr[-2000:]
    (document,) = [json.loads(text) for text in done.stdout.splitlines()]
    assert [entry["name"] for entry in document["containers"]][:2] == ["job-399000", "job-399001"]
    assert len(document["containers"]) == 1000 and document["containers_omitted_estimated"]
    assert abs(document["containers_omitted"] - 399_000) < 399_000 * 0.05  # an estimate: about 1 % off


def test_the_chart_of_hundreds_of_thousands_of_containers_draws_the_largest(tmp_path: Path) -> None:
    path = many_containers(tmp_path / "many.jsonl")
    chart = tmp_path / "many.png"
    done = orca_metrics(str(path), "--plot", str(chart), memory=400 * 2**20, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert chart.read_bytes().startswith(b"\x89PNG")


def one_line_runs(path: Path, count: int) -> Path:
    """`count` runs of one line each, a minute apart, as a sampler started by cron with `--count 1` appends them."""
    with path.open("w") as out:
        for n in range(count):
            start = 1796000000.0 + 60 * n
            out.write(f'{{"v":1,"t":{start + 0.2:.3f},"dt":0.2,"host":"h","cores":2,"cpu":{{"user":{n % 90}.0,'
                      f'"system":1.0,"iowait":0.0,"steal":0.0,"busiest":50.0}},"mem":{{"total":1000,"used":{n % 900},'
                      f'"available":1,"cache":0,"swap_total":0,"swap_used":0,"rss":0}},"self_cpu":0.05,'
                      f'"start":{start:.3f}}}\n')
    return path


def test_a_hundred_thousand_runs_are_a_table_of_as_many_rows(tmp_path: Path) -> None:
    """A file of 100,000 runs of one line (cron) is one table: a row per run, in the order of their starts. Each run
    is kept as a compact row and its summary's JSON written aside (docs/metrics.md, "A file of many runs"), so the
    process's data (RLIMIT_DATA: its heap and private mappings, more than what is resident) stays within 96 MiB,
    as it stays within 64 MiB resident (bench/README.md measures that); kept whole, the runs took several hundred."""
    path = one_line_runs(tmp_path / "cron.jsonl", 100_000)
    done = orca_metrics("--json", str(path), memory=96 * 2**20)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout)["rows"]
    assert len(rows) == 100_000
    first, last = rows[0], rows[-1]
    assert (first["start"], first["lines"], last["start"]) == (1796000000.0, 1, 1796000000.0 + 60 * 99_999)


def test_a_directory_that_cannot_be_listed_is_named_and_the_rest_summarised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A subdirectory whose listing fails (another user's, 0700): one message naming it and why, the other files
    summarised, exit 1. The listing's failure is made here, as the permission is not one for a user who can read
    any file (root)."""
    run = tmp_path / "run"
    (run / "a").mkdir(parents=True)
    (run / "locked").mkdir()
    (run / "a" / "worker.jsonl").write_text(RUN)
    (run / "locked" / "hidden.jsonl").write_text(RUN)
    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        if str(path) == str(run / "locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert metrics_main([str(run)]) == 1
    out, err = capsys.readouterr()
    assert f"orca metrics: {run / 'locked'}: cannot list this directory: Permission denied\n" in err
    assert f"{run / 'a' / 'worker.jsonl'}  (host h, 2 cores)" in out and "hidden" not in out


def test_a_directory_given_that_cannot_be_listed_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "worker.jsonl").write_text(RUN)
    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        if str(path) == str(tmp_path):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert metrics_main([str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"orca metrics: {tmp_path}: Permission denied\n"


def test_a_directory_without_permission_as_a_user_would_meet_it(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(RUN)
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "b.jsonl").write_text(RUN)
    hidden.chmod(0)
    try:
        if os.access(hidden, os.R_OK):
            pytest.skip("running as a user who can read any directory (root)")
        done = orca_metrics(str(tmp_path))
    finally:
        hidden.chmod(0o700)
    assert done.returncode == 1
    assert f"orca metrics: {hidden}: cannot list this directory: Permission denied" in done.stderr
    assert f"{tmp_path / 'a.jsonl'}  (host h, 2 cores)" in done.stdout
