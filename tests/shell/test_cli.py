"""`orca sample`'s command line (docs/behaviour.md §1.2, §2.1, §5) and the environment it reads (docs/behaviour.md
§2.1, §3.5, §6)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from orca.sample.shell.cli.env import default_dirs, metrics_location, sample_seconds
from orca.sample.shell.cli.sample import sample_main
from tests.shell.run import environment, no_traceback, run, stdout_lines

MALFORMED = [
    pytest.param([], id="no --out"),
    pytest.param(["--out", "-", "--bogus"], id="unknown flag"),
    pytest.param(["--out", "-", "--count", "x"], id="--count x"),
    pytest.param(["--out", "-", "--seconds", "nan"], id="--seconds nan"),
    pytest.param(["--out", "-", "--seconds", "-1"], id="--seconds -1"),
    pytest.param(["--out", "-", "--seconds", "1e10"], id="--seconds 1e10"),
    pytest.param(["--out", "-", "--seconds", "5e-324"], id="--seconds 5e-324"),
    pytest.param(["--out", "-", "--seconds", "1e-310"], id="--seconds 1e-310"),
    pytest.param(["--out", "-", "--pid", "12abc"], id="--pid 12abc"),
    pytest.param(["--out", "-", "--keep", "0"], id="--keep 0"),
    pytest.param(["--out", "s3://bucket-only"], id="s3 without key"),
    pytest.param(["--out"], id="--out without value"),
    pytest.param(["--out", "-", "stray"], id="positional"),
]


@pytest.mark.parametrize("args", MALFORMED)
def test_malformed_command_line_in_process(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """docs/behaviour.md §5.1 and §1.2: status 2, a one-line reason then the usage on stderr; never raises, not even
    SystemExit."""
    assert sample_main(["pipeline", "sample", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    reason, usage = captured.err.split("\n", 1)
    assert reason.startswith("orca sample: ") and len(reason) > len("orca sample: ")
    assert usage.startswith("usage: orca sample --out <location>")


@pytest.mark.slow
@pytest.mark.parametrize("args", MALFORMED[:4])
def test_malformed_command_line_process(args: list[str]) -> None:
    """docs/behaviour.md §5.1, as a user sees it: exit 2, no traceback, nothing written."""
    done = run(*args)
    assert done.returncode == 2
    assert done.stdout == b""
    no_traceback(done.stderr)
    assert b"usage: orca sample" in done.stderr
    assert done.stderr.startswith(b"orca sample: ")


@pytest.mark.parametrize("value", ["1e10", "1000001", "0.0009", "5e-324", "1e-400", "1E-999"])
def test_seconds_out_of_range_is_refused_naming_the_range(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An interval the schedule cannot keep (beyond the clock's range, or so small it divides to infinity) is a
    malformed command line, not a sampler that stops after its first line."""
    assert sample_main(["orca", "sample", "--out", "-", "--seconds", value]) == 2
    reason = capsys.readouterr().err.splitlines()[0]
    assert "0.001" in reason and "1000000" in reason and value in reason


def test_seconds_at_the_ends_of_the_range_run(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    assert sample_main(["orca", "sample", "--out", str(out), "--seconds", "1000000", "--count", "1"]) == 0
    assert sample_main(["orca", "sample", "--out", str(out), "--seconds", "0.001", "--count", "3"]) == 0
    assert len(out.read_bytes().splitlines()) == 4


def test_seconds_zero_from_environment_writes_nothing(tmp_path: Path) -> None:
    """docs/behaviour.md §2.1: ORCA_SAMPLE_SECONDS=0 turns sampling off: nothing written, exit 0 at once."""
    out = tmp_path / "metrics.jsonl"
    done = run("--out", str(out), "--count", "3", env=environment(ORCA_SAMPLE_SECONDS="0"))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not out.exists()


def test_seconds_zero_flag_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "metrics.jsonl"
    assert sample_main(["orca", "sample", "--out", str(out), "--seconds", "0"]) == 0
    assert not out.exists()


@pytest.mark.usefixtures("sample_reader")
def test_count_on_standard_output() -> None:
    """`--out - --count 3` prints three well-formed lines."""
    done = run("--out", "-", "--count", "3", "--seconds", "0.2")
    assert done.returncode == 0
    assert done.stderr == b""
    lines = stdout_lines(done.stdout)
    assert len(lines) == 3
    assert [list(line)[:3] for line in lines] == [["v", "t", "dt"]] * 3


def test_console_script_dispatches_sample(tmp_path: Path) -> None:
    """docs/behaviour.md §1.2: the `orca` console script with the subcommand `sample`."""
    orca = Path(sys.executable).parent / "orca"
    if not orca.exists():
        pytest.skip("no console script beside this interpreter")
    out = tmp_path / "m.jsonl"
    done = subprocess.run([str(orca), "sample", "--out", str(out), "--count", "1"], capture_output=True, timeout=30)
    assert done.returncode == 0
    assert len(out.read_bytes().splitlines()) == 1
    other = subprocess.run([str(orca), "bogus"], capture_output=True, timeout=30)
    assert other.returncode == 2
    no_traceback(other.stderr)


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert sample_main(["orca", "sample", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--keep" in out
    assert out.count("usage:") == 1  # printed once, not again after argparse's own help action


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 5.0), ("", 5.0), ("2.5", 2.5), ("0", 0.0), ("-1", 5.0), ("nan", 5.0), ("inf", 5.0), ("five", 5.0),
        ("1e10", 5.0), ("5e-324", 5.0), ("0.001", 0.001), ("1000000", 1e6), ("1e-400", 5.0), ("1e-5", 5.0),
        ("0.0", 0.0), ("0e-400", 0.0), ("-0", 0.0),
    ],
)
def test_sample_seconds(monkeypatch: pytest.MonkeyPatch, value: str | None, expected: float) -> None:
    """docs/behaviour.md §2.1: not a finite number, or negative, is the default 5."""
    if value is None:
        monkeypatch.delenv("ORCA_SAMPLE_SECONDS", raising=False)
    else:
        monkeypatch.setenv("ORCA_SAMPLE_SECONDS", value)
    seconds = sample_seconds()
    assert math.isfinite(seconds)
    assert seconds == expected


@pytest.mark.parametrize(
    ("logs", "expected"),
    [
        ("/var/log/orca", "/var/log/orca/etl/42/metrics/worker-a.jsonl"),
        ("/var/log/orca/", "/var/log/orca/etl/42/metrics/worker-a.jsonl"),
        ("s3://bucket/logs//", "s3://bucket/logs/etl/42/metrics/worker-a.jsonl"),
        ("", ""),
        (None, ""),
    ],
)
def test_metrics_location(monkeypatch: pytest.MonkeyPatch, logs: str | None, expected: str) -> None:
    """docs/behaviour.md §6: `$ORCA_LOGS/<pipeline>/<run>/metrics/<instance>.jsonl`, one `/` between parts; "" without
    it."""
    if logs is None:
        monkeypatch.delenv("ORCA_LOGS", raising=False)
    else:
        monkeypatch.setenv("ORCA_LOGS", logs)
    assert metrics_location("etl", 42, "worker-a") == expected


def test_default_dirs(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/behaviour.md §3.5: $TMPDIR or /tmp, plus dista's directories when set and not empty."""
    for name in ("TMPDIR", "DISTA_SPILL_DIR", "DISTA_STORE_DIR"):
        monkeypatch.delenv(name, raising=False)
    assert default_dirs() == ["/tmp"]
    monkeypatch.setenv("TMPDIR", "/scratch")
    monkeypatch.setenv("DISTA_SPILL_DIR", "")
    monkeypatch.setenv("DISTA_STORE_DIR", "/store")
    assert default_dirs() == ["/scratch", "/store"]
    monkeypatch.setenv("DISTA_SPILL_DIR", "/spill")
    monkeypatch.setenv("TMPDIR", "")
    assert default_dirs() == ["/tmp", "/spill", "/store"]
