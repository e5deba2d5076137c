"""`--out`: standard output (SPEC 4.1), a file (4.2), object storage chosen lazily (4.3), failures (4.5)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from orca.sample.shell.outputs import FileSink, StdoutSink, open_output
from tests.shell.run import environment, no_traceback, read_lines, start, stdout_lines


@pytest.mark.usefixtures("sample_reader")
def test_stdout_lines_are_prefixed_and_flushed_one_by_one() -> None:
    """SPEC 4.1: each line `orca-sample ` + JSON, flushed per line: the first is readable while the sampler runs."""
    sampler = start("--out", "-", "--count", "3", "--seconds", "0.5")
    try:
        assert sampler.stdout is not None
        first = sampler.stdout.readline()  # would block until exit if lines waited in a buffer
        running = sampler.poll() is None
        rest, stderr = sampler.communicate(timeout=10)
    finally:
        sampler.kill()
    assert running
    assert sampler.returncode == 0
    assert stderr == b""
    assert len(stdout_lines(first + rest)) == 3


@pytest.mark.slow
@pytest.mark.usefixtures("sample_reader")
def test_closed_pipe_drops_lines_with_one_message() -> None:
    """SPEC 4.5: standard output closed under the sampler: one message, it carries on to its end, exit 0."""
    sampler = start("--out", "-", "--count", "8", "--seconds", "0.1")
    try:
        assert sampler.stdout is not None and sampler.stderr is not None
        assert sampler.stdout.readline().startswith(b"orca-sample {")
        sampler.stdout.close()
        sampler.wait(timeout=10)
        stderr = sampler.stderr.read()
    finally:
        sampler.kill()
    assert sampler.returncode == 0
    no_traceback(stderr)
    messages = stderr.decode().splitlines()
    assert len(messages) == 1, messages
    assert "standard output" in messages[0]


def test_open_output_kinds(tmp_path: Path) -> None:
    assert isinstance(open_output("-", None), StdoutSink)
    sink = open_output(str(tmp_path / "m.jsonl"), 3)
    assert isinstance(sink, FileSink)
    assert sink.file.keep == 3
    sink.write('{"v":1}')
    sink.close()
    assert read_lines(tmp_path / "m.jsonl") == [{"v": 1}]


def test_s3_location_gets_the_object_storage_sink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCA_LOG_STAGE", str(tmp_path / "stage"))
    from orca.sample.shell.s3 import S3Sink

    sink = open_output("s3://bucket/some/key.jsonl", None)
    assert isinstance(sink, S3Sink)


@pytest.mark.usefixtures("sample_reader")
def test_a_file_sampler_never_imports_boto3(tmp_path: Path) -> None:
    """SPEC 4.3: boto3 is imported only for an s3:// location."""
    out = tmp_path / "m.jsonl"
    code = (
        "import sys\n"
        "from orca.sample.shell.cli import sample_main\n"
        f"assert sample_main(['p', 'sample', '--out', {str(out)!r}, '--count', '1']) == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=environment(), timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"[]\n"
    assert len(read_lines(out)) == 1


def test_stdout_sink_without_a_descriptor(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """An embedding program's stdout stand-in (no fileno) still gets whole, prefixed lines."""

    class Collector:
        def __init__(self) -> None:
            self.text = ""

        def write(self, text: str) -> int:
            self.text += text
            return len(text)

        def flush(self) -> None:
            pass

    collector = Collector()
    monkeypatch.setattr(sys, "stdout", collector)
    sink = StdoutSink()
    sink.write('{"v":1}')
    sink.write('{"v":2}')
    assert collector.text == 'orca-sample {"v":1}\norca-sample {"v":2}\n'
