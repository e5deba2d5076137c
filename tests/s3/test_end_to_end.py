"""The real sampler (`python -m orca.sample --out s3://...`) as a subprocess against the real moto server of
conftest.py: what docs/s3.md promises of `s3://` (docs/behaviour.md §4.3, §4.5, §2.4)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from orca.sample.shared.s3_location import parse_location
from tests.moto_server import MotoServer, aws_environment
from tests.s3.proxy import FaultProxy
from tests.s3.staged import MIB, Location, append, lines_over

pytestmark = pytest.mark.slow


@dataclass(frozen=True, slots=True)
class Run:
    process: subprocess.Popen[bytes]
    stderr_path: Path
    stage_root: Path

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def staged(self, key_path: str) -> bytes:
        path = self.stage_root / key_path
        return path.read_bytes() if path.exists() else b""


def start_sampler(tmp_path: Path, env: dict[str, str], *args: str) -> Run:
    stderr_path = tmp_path / "sampler.stderr"
    with (tmp_path / "sampler.stdout").open("wb") as out, stderr_path.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "orca.sample", *args], env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL
        )
    return Run(process, stderr_path, Path(env["ORCA_LOG_STAGE"]))


def signal_and_wait(run: Run, signum: int) -> tuple[int, float]:
    """Send `signum`; the exit status and the seconds from the signal to the exit."""
    run.process.send_signal(signum)
    signalled = time.monotonic()
    status = run.process.wait(timeout=30)
    return status, time.monotonic() - signalled


def end(run: Run) -> None:
    if run.process.poll() is None:
        run.process.kill()
        run.process.wait()


def location_messages(run: Run, location: str) -> list[str]:
    return [line for line in run.stderr().splitlines() if location in line]


def whole_lines(data: bytes) -> list[bytes]:
    assert data == b"" or data.endswith(b"\n"), data[-80:]
    return data.splitlines()


def test_the_object_grows_during_the_run_and_ends_as_the_staging_file(
    tmp_path: Path, s3_server: MotoServer, bucket: str
) -> None:
    # Uploads every 0.5 s of lines every 0.25 s; the run goes on `--until` an upload of some of its lines has been
    # seen, however long a loaded machine takes to make the first, then writes a last line and uploads it all.
    env = aws_environment(dict(os.environ), s3_server.url, tmp_path) | {"ORCA_SAMPLE_UPLOAD_SECONDS": "0.5"}
    key = "pipe/7/metrics/i-1.jsonl"
    location = f"s3://{bucket}/{key}"
    until = tmp_path / "seen"
    run = start_sampler(tmp_path, env, "--out", location, "--until", str(until), "--seconds", "0.25")
    seen: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while run.process.poll() is None:
            body = s3_server.read(bucket, key)
            if body:
                seen.append(body)
                until.touch()
            assert time.monotonic() < deadline, run.stderr()
            time.sleep(0.05)
    finally:
        end(run)
    assert run.process.wait() == 0, run.stderr()

    staged = run.staged(f"{bucket}/{key}")
    lines = whole_lines(staged)
    assert all(json.loads(line)["v"] == 1 for line in lines)
    assert s3_server.read(bucket, key) == staged  # byte for byte
    # Mid-run the object was there with some but not all of the lines, each time whole lines of the final file.
    assert seen and 0 < len(whole_lines(seen[0])) < len(lines), [len(whole_lines(body)) for body in seen]
    assert all(staged.startswith(body) for body in seen)
    assert run.stderr() == ""


def wait_until(condition: Callable[[], bool], run: Run, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline and run.process.poll() is None, run.stderr()
        time.sleep(0.05)


def test_a_server_that_goes_away_and_comes_back_gets_every_line(
    tmp_path: Path, restartable_server: MotoServer
) -> None:
    # Sampling goes on while uploads fail, one message, and once the server is back a periodic upload (not only the
    # final one) brings the object level again. The sampler runs --until the test has seen that.
    server = restartable_server
    bucket = server.new_bucket()
    key = "restart.jsonl"
    location = f"s3://{bucket}/{key}"
    until = tmp_path / "until"
    env = aws_environment(dict(os.environ), server.url, tmp_path) | {"ORCA_SAMPLE_UPLOAD_SECONDS": "0.5"}
    run = start_sampler(tmp_path, env, "--out", location, "--until", str(until), "--seconds", "0.25")
    try:
        wait_until(lambda: server.read(bucket, key) is not None, run)
        server.stop()
        down_from = time.time()
        time.sleep(1.5)  # about three upload rounds fail
        down_until = time.time()
        server.start()  # moto starts empty: the bucket is made again, the object must be uploaded whole again
        server.client().create_bucket(Bucket=bucket)
        written_before_back = len(whole_lines(run.staged(f"{bucket}/{key}")))
        wait_until(lambda: len(whole_lines(server.read(bucket, key) or b"")) >= written_before_back, run)
        until.touch()
        assert run.process.wait(timeout=60) == 0, run.stderr()
    finally:
        end(run)

    staged = run.staged(f"{bucket}/{key}")
    lines = whole_lines(staged)
    written_while_down = [line for line in lines if down_from < json.loads(line)["t"] < down_until]
    assert len(written_while_down) >= 4, written_while_down  # a line every 0.25 s over 1.5 s: sampling went on
    messages = location_messages(run, location)
    assert len(messages) == 1, run.stderr()
    assert run.stderr().splitlines() == messages  # and nothing else: no traceback, no library warning
    assert server.read(bucket, key) == staged


@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "SIGINT", "SIGHUP"]
)
def test_a_signal_ends_it_with_a_final_upload_within_5_s(
    tmp_path: Path, s3_server: MotoServer, bucket: str, signum: int
) -> None:
    # docs/behaviour.md §2.4: no further line, one final upload of at most 5 s, exit 0. The upload interval is the
    # default 30 s, so only the final upload can put the object there.
    env = aws_environment(dict(os.environ), s3_server.url, tmp_path)
    env.pop("ORCA_SAMPLE_UPLOAD_SECONDS", None)
    key = "signal.jsonl"
    run = start_sampler(tmp_path, env, "--out", f"s3://{bucket}/{key}", "--seconds", "0.2")
    try:
        wait_until(lambda: len(whole_lines(run.staged(f"{bucket}/{key}"))) >= 3, run)
        assert s3_server.read(bucket, key) is None
        status, took = signal_and_wait(run, signum)
    finally:
        end(run)
    assert status == 0, run.stderr()
    assert run.stderr() == ""
    assert took < 5.0, took
    staged = run.staged(f"{bucket}/{key}")
    assert len(whole_lines(staged)) >= 3
    assert s3_server.read(bucket, key) == staged


@pytest.mark.parametrize("failure", ["no credentials", "no such bucket"])
def test_an_upload_that_cannot_work_gives_one_message_and_exit_0(
    tmp_path: Path, s3_server: MotoServer, failure: str
) -> None:
    # docs/behaviour.md §4.5: one message naming the location and the reason, every line still in the staging file.
    credentials = failure != "no credentials"
    bucket = s3_server.new_bucket() if failure == "no credentials" else "orca-bucket-that-does-not-exist"
    key = "fails.jsonl"
    location = f"s3://{bucket}/{key}"
    env = aws_environment(dict(os.environ), s3_server.url, tmp_path, credentials=credentials)
    env["ORCA_SAMPLE_UPLOAD_SECONDS"] = "0.3"
    run = start_sampler(tmp_path, env, "--out", location, "--count", "6", "--seconds", "0.3")
    assert run.process.wait(timeout=60) == 0, run.stderr()
    messages = location_messages(run, location)
    assert len(messages) == 1, run.stderr()
    assert run.stderr().splitlines() == messages
    reason = "credentials" if failure == "no credentials" else "NoSuchBucket"
    assert reason in messages[0]
    lines = whole_lines(run.staged(f"{bucket}/{key}"))
    assert len(lines) == 6
    assert all(json.loads(line)["v"] == 1 for line in lines)
    if failure == "no credentials":
        assert s3_server.read(bucket, key) is None


def test_access_denied_gives_one_message_and_exit_0(tmp_path: Path, authorizing_server: MotoServer) -> None:
    # Access denied is one of the failures that never stop sampling (docs/behaviour.md §4.5).
    server = authorizing_server
    bucket = server.new_bucket()  # request 1 of the three free ones
    iam = server.client("iam")
    iam.create_user(UserName="no-permissions")  # 2
    key = iam.create_access_key(UserName="no-permissions")["AccessKey"]  # 3
    location = f"s3://{bucket}/denied.jsonl"
    env = aws_environment(dict(os.environ), server.url, tmp_path, credentials=False) | {
        "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
        "ORCA_SAMPLE_UPLOAD_SECONDS": "0.3",
    }
    run = start_sampler(tmp_path, env, "--out", location, "--count", "6", "--seconds", "0.3")
    assert run.process.wait(timeout=60) == 0, run.stderr()
    messages = location_messages(run, location)
    assert len(messages) == 1, run.stderr()
    assert run.stderr().splitlines() == messages
    assert "AccessDenied" in messages[0]
    assert len(whole_lines(run.staged(f"{bucket}/denied.jsonl"))) == 6


def test_an_endpoint_that_never_answers_costs_at_most_5_s_at_the_end(tmp_path: Path) -> None:
    # docs/behaviour.md §2.4: an unreachable endpoint never holds up the end by more than the 5 s of the final upload.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)  # connections are accepted by the kernel, and nothing ever answers them
        endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
        env = aws_environment(dict(os.environ), endpoint, tmp_path) | {"ORCA_SAMPLE_UPLOAD_SECONDS": "0.2"}
        location = "s3://orca-silent/k.jsonl"
        run = start_sampler(tmp_path, env, "--out", location, "--count", "3", "--seconds", "0.3")
        assert run.process.wait(timeout=60) == 0, run.stderr()
        ended = time.time()
    lines = whole_lines(run.staged("orca-silent/k.jsonl"))
    assert len(lines) == 3
    # From the last line to the exit: the 5 s bound, plus the interpreter's exit on a shared machine.
    assert ended - json.loads(lines[-1])["t"] < 6.0
    messages = location_messages(run, location)
    assert len(messages) == 1, run.stderr()
    assert run.stderr().splitlines() == messages


def test_a_signal_with_an_endpoint_that_never_answers_ends_within_5_s(tmp_path: Path) -> None:
    """The 5 s of the final upload is the whole wait, connection set-up and the process's exit included: a runner
    waiting for the sampler waits no longer."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
        env = aws_environment(dict(os.environ), endpoint, tmp_path) | {"ORCA_SAMPLE_UPLOAD_SECONDS": "0.2"}
        run = start_sampler(tmp_path, env, "--out", "s3://orca-silent/k.jsonl", "--seconds", "0.1")
        try:
            deadline = time.monotonic() + 20
            while len(whole_lines(run.staged("orca-silent/k.jsonl"))) < 5 and time.monotonic() < deadline:
                time.sleep(0.05)
            status, took = signal_and_wait(run, signal.SIGTERM)
        finally:
            end(run)
    assert status == 0, run.stderr()
    assert took < 5.0, took
    assert len(run.stderr().splitlines()) == 1, run.stderr()


CHECK_IMPORTS = """
import sys
from orca.sample import sample_main
status = sample_main(["orca", "sample", "--out", sys.argv[1], "--count", "1"])
print(status, "boto3" in sys.modules, "botocore" in sys.modules)
"""


def test_a_file_sampler_does_not_import_boto3(tmp_path: Path) -> None:
    # docs/behaviour.md §4.3: boto3 is imported only when an s3:// location is used. A fresh interpreter, the sampler
    # in-process.
    out = tmp_path / "lines.jsonl"
    result = subprocess.run(
        [sys.executable, "-c", CHECK_IMPORTS, str(out)], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == ["0", "False", "False"], result.stderr
    assert len(out.read_bytes().splitlines()) == 1


def test_an_s3_sampler_uses_a_boto3_client(tmp_path: Path, s3_server: MotoServer, bucket: str) -> None:
    # The check above can fail: the same interpreter check with an s3:// location sees boto3 loaded.
    env = aws_environment(dict(os.environ), s3_server.url, tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", CHECK_IMPORTS, f"s3://{bucket}/k.jsonl"],
        capture_output=True, text=True, timeout=60, check=True, env=env,
    )
    assert result.stdout.split() == ["0", "True", "True"], result.stderr
    assert s3_server.read(bucket, "k.jsonl") == (tmp_path / "stage" / bucket / "k.jsonl").read_bytes()


CHECK_FIRST_UPLOAD = """
import sys, time
from orca.sample.shell.out.s3 import S3Sink
sink = S3Sink(sys.argv[1], None)
sink.write(b'{"n":1}')
time.sleep(0.5)
before = "boto3" in sys.modules or "botocore" in sys.modules
sink.close()
print(before, "boto3" in sys.modules)
"""


def test_the_client_is_made_at_the_first_upload(tmp_path: Path, s3_server: MotoServer, bucket: str) -> None:
    # With the default 30 s between uploads the first upload is the final one: until then nothing of AWS's
    # libraries is loaded, and sampling pays neither their start-up time nor their memory.
    env = aws_environment(dict(os.environ), s3_server.url, tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", CHECK_FIRST_UPLOAD, f"s3://{bucket}/first.jsonl"],
        capture_output=True, text=True, timeout=60, check=True, env=env,
    )
    assert result.stdout.split() == ["False", "True"], result.stderr
    assert s3_server.read(bucket, "first.jsonl") == b'{"n":1}\n'


def test_an_upload_cut_off_at_the_end_is_aborted_by_the_next_start(
    tmp_path: Path, s3_server: MotoServer, bucket: str, proxy: FaultProxy
) -> None:
    # The final upload's 5 s bound can cut an append off halfway: its multipart upload stays open (what the
    # bucket's lifecycle rule is for) until the next sampler for the key starts and aborts it.
    env = aws_environment(dict(os.environ), proxy.url, tmp_path) | {"ORCA_SAMPLE_UPLOAD_SECONDS": "0.3"}
    at = Location(s3_server, bucket, "cut.jsonl", stage_root=env["ORCA_LOG_STAGE"])
    append(at.stage, lines_over(5 * MIB))  # a restarted sampler's staging file: it appends to what it finds
    run = start_sampler(tmp_path, env, "--out", at.location, "--seconds", "0.2")
    try:
        wait_until(lambda: at.object() is not None, run)
        proxy.delay(lambda seen: seen.operation == "UploadPart", 30.0, times=None)
        wait_until(lambda: any(seen.operation == "UploadPart" for seen in proxy.seen), run)
        status, took = signal_and_wait(run, signal.SIGTERM)
    finally:
        end(run)
    assert status == 0, run.stderr()
    assert took < 5.0, took
    assert len(at.open_uploads()) == 1, ([seen.operation for seen in proxy.seen], run.stderr())
    assert at.prefix()
    proxy.heal()
    again = start_sampler(tmp_path, env, "--out", at.location, "--count", "2", "--seconds", "0.2")
    assert again.process.wait(timeout=60) == 0, again.stderr()
    assert again.stderr() == ""
    assert at.open_uploads() == []
    assert at.level()


@pytest.mark.parametrize("logs", ["s3://{bucket}/prefix", "s3://{bucket}/prefix/", "s3://{bucket}"])
def test_metrics_location_under_an_s3_orca_logs_is_accepted_and_uploaded(
    tmp_path: Path, s3_server: MotoServer, bucket: str, logs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runner passes --out metrics_location(...) with ORCA_LOGS=s3://bucket/prefix (docs/behaviour.md §6).
    from orca.sample.shell.cli.env import metrics_location

    monkeypatch.setenv("ORCA_LOGS", logs.format(bucket=bucket))
    location = metrics_location("nightly", 42, "worker-i_0abc")
    prefix = "prefix/" if "prefix" in logs else ""
    key = f"{prefix}nightly/42/metrics/worker-i_0abc.jsonl"
    assert parse_location(location) == (bucket, key)

    env = aws_environment(dict(os.environ), s3_server.url, tmp_path)
    run = start_sampler(tmp_path, env, "--out", location, "--count", "2", "--seconds", "0.2")
    assert run.process.wait(timeout=60) == 0, run.stderr()
    staged = run.staged(f"{bucket}/{key}")
    assert len(whole_lines(staged)) == 2
    assert s3_server.read(bucket, key) == staged
