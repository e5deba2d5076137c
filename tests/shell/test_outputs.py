"""`--out`: standard output (SPEC 4.1), a file (4.2), object storage chosen lazily (4.3), failures (4.5)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orca.sample.shell.outputs import FileSink, StdoutSink, open_output
from tests.shell.run import command, environment, no_traceback, read_lines, start, stdout_lines

F_SETPIPE_SZ = 1031  # fcntl(2); the fcntl module names it from Python 3.10 on Linux only


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
    sink.write(b'{"v":1}')
    sink.close()
    assert read_lines(tmp_path / "m.jsonl") == [{"v": 1}]


def test_s3_location_gets_the_object_storage_sink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCA_LOG_STAGE", str(tmp_path / "stage"))
    from orca.sample.shell.s3 import S3Sink

    sink = open_output("s3://bucket/some/key.jsonl", None)
    assert isinstance(sink, S3Sink)


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
    sink.write(b'{"v":1}')
    sink.write(b'{"v":2}')
    assert collector.text == 'orca-sample {"v":1}\norca-sample {"v":2}\n'


# --- an output that blocks, or is missing ---


def _small_pipe() -> tuple[int, int]:
    """A pipe holding one page (F_SETPIPE_SZ rounds up to it), so a few lines fill it."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
    return read_end, write_end


@pytest.mark.slow
def test_a_fifo_without_a_reader_drops_lines_and_the_sampler_reaches_its_end(tmp_path: Path) -> None:
    """Opening a FIFO nobody reads would block forever: the line is dropped with one message instead."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sampler = start("--out", str(fifo), "--count", "3", "--seconds", "0.1")
    try:
        _, stderr = sampler.communicate(timeout=20)
    finally:
        sampler.kill()
    assert sampler.returncode == 0
    no_traceback(stderr)
    messages = stderr.decode().splitlines()
    assert len(messages) == 1, messages
    assert str(fifo) in messages[0]


@pytest.mark.slow
def test_sigterm_ends_a_sampler_whose_fifo_has_no_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sampler = start("--out", str(fifo), "--seconds", "0.1")
    try:
        time.sleep(0.6)
        sampler.send_signal(signal.SIGTERM)
        _, stderr = sampler.communicate(timeout=5)
    finally:
        sampler.kill()
    assert sampler.returncode == 0
    no_traceback(stderr)


@pytest.mark.slow
def test_a_stalled_standard_output_never_holds_the_sampler(tmp_path: Path) -> None:
    """`--out -` into a pipe nobody reads: the pipe fills, later lines are dropped with one message, `--count` is
    still reached, and the run's own standard output is left blocking (its description's flags unchanged)."""
    read_end, write_end = _small_pipe()
    try:
        sampler = start("--out", "-", "--count", "25", "--seconds", "0.02", stdout=write_end)
        try:
            _, stderr = sampler.communicate(timeout=30)
        finally:
            sampler.kill()
        assert fcntl.fcntl(write_end, fcntl.F_GETFL) & os.O_NONBLOCK == 0
        os.close(write_end)
        write_end = -1
        with os.fdopen(read_end, "rb") as reader:
            read_end = -1
            written = reader.read()
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)
    assert sampler.returncode == 0
    no_traceback(stderr)
    messages = stderr.decode().splitlines()
    assert len(messages) == 1, messages
    assert "standard output" in messages[0]
    assert 1 <= len(stdout_lines(written)) < 25  # what fitted, each line whole


@pytest.mark.slow
def test_sigterm_ends_a_sampler_whose_standard_output_is_full(tmp_path: Path) -> None:
    read_end, write_end = _small_pipe()
    try:
        sampler = start("--out", "-", "--seconds", "0.02", stdout=write_end)
        try:
            time.sleep(1.0)  # dozens of lines: the one-page pipe is full
            sampler.send_signal(signal.SIGTERM)
            _, stderr = sampler.communicate(timeout=5)
        finally:
            sampler.kill()
    finally:
        os.close(read_end)
        os.close(write_end)
    assert sampler.returncode == 0
    no_traceback(stderr)


def test_a_line_longer_than_a_pipe_is_completed_before_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-blocking standard output (its flags set by someone else) that takes part of a long line: the rest is
    written before anything else, so a reader never sees a cut line followed by more lines."""
    read_end, write_end = _small_pipe()
    os.set_blocking(write_end, False)
    os.set_blocking(read_end, False)

    def drain() -> bytes:
        try:
            return os.read(read_end, 1 << 20)
        except BlockingIOError:
            return b""

    class PipeStdout:
        def fileno(self) -> int:
            return write_end

    monkeypatch.setattr(sys, "stdout", PipeStdout())
    sink = StdoutSink()
    received = b""
    try:
        for n in range(6):
            sink.write(b'{"n":%d,"pad":"%s"}' % (n, b"x" * 5000))  # over a page: the pipe takes part of it
            received += drain()
        sink.close()
        received += drain()
    finally:
        os.close(read_end)
        os.close(write_end)
    lines = stdout_lines(received)
    assert [line["n"] for line in lines] == sorted({line["n"] for line in lines})
    assert len(lines) >= 3  # lines were completed, not all dropped


def test_closed_standard_output_drops_lines_and_sampling_goes_on(tmp_path: Path) -> None:
    """`>&-`: one message, then sampling goes on to its end (here: the --pid process's end)."""
    watched = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    try:
        done = subprocess.run(
            ["sh", "-c", 'exec "$@" >&-', "sh", *command("--out", "-", "--pid", str(watched.pid), "--seconds", "0.1")],
            capture_output=True,
            env=environment(),
            timeout=30,
        )
        watched_ended = watched.poll() is not None
    finally:
        watched.kill()
        watched.wait()
    assert done.returncode == 0
    no_traceback(done.stderr)
    messages = done.stderr.decode().splitlines()
    assert len(messages) == 1, messages
    assert "standard output" in messages[0] and "stopped" not in messages[0]
    assert watched_ended  # the sampler ran until the watched process ended


def test_closed_standard_error_sends_no_message_to_standard_output(tmp_path: Path) -> None:
    """A message with nowhere to go is lost, never written into the sample stream."""
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" 2>&-', "sh", *command("--out", str(tmp_path), "--count", "2", "--seconds", "0.05")],
        capture_output=True,
        env=environment(),
        timeout=30,
    )
    assert done.returncode == 0
    assert done.stdout == b""


CLOSED_STANDARD_FDS = """
import os
from orca.sample.shell.stdio import occupy_closed_standard_fds
os.close(0)
os.close(1)
occupy_closed_standard_fds()
fd = os.open(os.devnull, os.O_RDONLY)
null = os.stat(os.devnull).st_rdev
os.write(2, b"%d %d %d" % (fd, os.fstat(0).st_rdev == null, os.fstat(1).st_rdev == null))
"""


def test_a_closed_standard_descriptor_is_never_handed_out_again() -> None:
    """Else the next open (a pidfd, the output file) would get number 1 and a "standard output" line land in it."""
    done = subprocess.run([sys.executable, "-c", CLOSED_STANDARD_FDS], capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b"3 1 1"  # the next open gets 3; 0 and 1 are the null device
