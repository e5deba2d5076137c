"""`--out`: standard output (docs/behaviour.md §4.1), a file (§4.2), object storage chosen lazily (§4.3),
failures (§4.5)."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from orca.sample.shell.out import s3 as s3_out
from orca.sample.shell.out.open import StdoutSink, open_output
from tests.shell.run import command, environment, no_traceback, one_message, read_lines, start, stdout_lines


@pytest.mark.usefixtures("sample_reader")
def test_stdout_lines_are_prefixed_and_flushed_one_by_one() -> None:
    """docs/behaviour.md §4.1: each line `orca-sample ` + JSON, flushed per line: the first is readable while the
    sampler runs."""
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
    """docs/behaviour.md §4.5: standard output closed under the sampler: one message, it carries on to its end, exit
    0."""
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
    one_message(stderr, "standard output")


def test_open_output_dash_is_standard_output(capfd: pytest.CaptureFixture[str]) -> None:
    sink = open_output("-", None)
    sink.write(b'{"v":1}')
    sink.close()
    assert capfd.readouterr().out == 'orca-sample {"v":1}\n'


def test_open_output_a_path_is_that_file_with_keep(tmp_path: Path) -> None:
    """With --keep 2 the file is its last 2 lines once it holds 4: lines 3 and 4, then 5 appended."""
    path = tmp_path / "m.jsonl"
    sink = open_output(str(path), 2)
    for n in range(1, 6):
        sink.write(b'{"n":%d}' % n)
    sink.close()
    assert [line["n"] for line in read_lines(path)] == [3, 4, 5]


def test_open_output_s3_stages_the_lines_and_its_uploader_ends_with_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """An s3:// location appends to its staging file; close() makes the final upload (refused here: nothing
    listens on the port) and the uploading thread is gone afterwards, so nothing of it runs during later tests."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("ORCA_LOG_STAGE", str(tmp_path / "stage"))
    # What is held here is the refused upload's one message, not the exit's bound: on a loaded machine boto3's import
    # and client alone may take longer than those 5 s, and the message would then be that the upload did not finish.
    monkeypatch.setattr(s3_out, "FINAL_UPLOAD_SECONDS", 60.0)
    location = "s3://bucket/some/key.jsonl"
    sink = open_output(location, None)
    sink.write(b'{"v":1}')
    sink.close()
    assert (tmp_path / "stage" / "bucket" / "some" / "key.jsonl").read_bytes() == b'{"v":1}\n'
    assert not [thread for thread in threading.enumerate() if thread.name == "orca-sample-s3-upload"]
    messages = [line for line in capfd.readouterr().err.splitlines() if location in line]
    assert len(messages) == 1 and "cannot upload" in messages[0], messages


@pytest.mark.usefixtures("sample_reader")
def test_a_file_sampler_never_imports_boto3(tmp_path: Path) -> None:
    """docs/behaviour.md §4.3: boto3 is imported only for an s3:// location."""
    out = tmp_path / "m.jsonl"
    code = (
        "import sys\n"
        "from orca.sample.shell.cli.sample import sample_main\n"
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
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
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
    one_message(stderr, str(fifo))


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
    one_message(stderr, "standard output")
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
    assert "stopped" not in one_message(done.stderr, "standard output")
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
