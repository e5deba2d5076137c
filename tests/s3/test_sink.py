"""S3Sink in this process, against the real moto server of conftest.py (docs/behaviour.md §4.3, §4.4, §4.5, §2.4)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.shared.s3_location import parse_location
from orca.sample.shell.out.s3 import DEFAULT_UPLOAD_SECONDS, S3Sink, stage_of, upload_seconds
from orca.sample.shell.out.staging import stage_root
from tests.moto_server import MotoServer, aws_environment


def wait_for(condition: object, seconds: float = 10.0) -> bool:
    """Poll `condition()` until it is true or `seconds` pass."""
    assert callable(condition)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def messages_about(text: str, location: str) -> list[str]:
    # Other tests' uploader threads may still be talking on stderr: count only this location's messages.
    return [line for line in text.splitlines() if location in line]


# --- locations (docs/behaviour.md §4.3; the CLI refuses what parse_location refuses, docs/behaviour.md §5.1) ---


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("s3://bucket/key", ("bucket", "key")),
        ("s3://logs/prefix/pipe/7/metrics/i-0abc.jsonl", ("logs", "prefix/pipe/7/metrics/i-0abc.jsonl")),
        ("s3://my.bucket-1/a b/c.jsonl", ("my.bucket-1", "a b/c.jsonl")),
    ],
)
def test_a_location_is_bucket_and_key(location: str, expected: tuple[str, str]) -> None:
    assert parse_location(location) == expected


@pytest.mark.parametrize(
    "location",
    [
        "s3://", "s3://bucket", "s3://bucket/", "s3:///key", "s3://bucket/dir/", "S3://bucket/key",
        "/tmp/file.jsonl", "-", "", "s3://../key", "s3://bucket/../../etc/passwd", "s3://bucket/a/./b",
        "s3://bucket/a\0b", "s3://bucket/a//b.jsonl", "s3://bucket//a", "s3://bucket/a/", "s3://bucket/a/..",
    ],
)
def test_a_malformed_location_is_refused(location: str) -> None:
    assert parse_location(location) is None
    with pytest.raises(ValueError):
        stage_of(location)


def test_the_staging_root_is_orca_log_stage_then_tmpdir_then_tmp(monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/behaviour.md §4.3: under $ORCA_LOG_STAGE, else $TMPDIR/orca-logs, else /tmp/orca-logs.
    assert stage_root({"ORCA_LOG_STAGE": "/stage", "TMPDIR": "/scratch"}) == "/stage"
    assert stage_root({"TMPDIR": "/scratch"}) == "/scratch/orca-logs"
    assert stage_root({"ORCA_LOG_STAGE": "", "TMPDIR": "/scratch"}) == "/scratch/orca-logs"
    assert stage_root({}) == "/tmp/orca-logs"
    assert stage_root({"TMPDIR": ""}) == "/tmp/orca-logs"
    monkeypatch.setenv("ORCA_LOG_STAGE", "/var/stage")
    assert stage_of("s3://logs/p/7/metrics/i.jsonl") == "/var/stage/logs/p/7/metrics/i.jsonl"
    monkeypatch.delenv("ORCA_LOG_STAGE")
    monkeypatch.setenv("TMPDIR", "/scratch")
    assert stage_of("s3://logs/k.jsonl") == "/scratch/orca-logs/logs/k.jsonl"


@given(st.text())
def test_a_staging_file_never_leaves_its_bucket_directory(text: str) -> None:
    location = "s3://" + text
    parsed = parse_location(location)
    if parsed is None:
        return
    root = "/stage-root"
    bucket_dir = os.path.join(root, parsed[0])
    os.environ["ORCA_LOG_STAGE"] = root
    try:
        path = stage_of(location)
    finally:
        del os.environ["ORCA_LOG_STAGE"]
    assert os.path.normpath(path).startswith(bucket_dir + os.sep)
    assert os.path.normpath(path) != bucket_dir


@given(st.text(alphabet="ab/.", max_size=8), st.text(alphabet="ab/.", max_size=8))
@example("a//b", "a/b")
@example("a/b/", "a/b")
def test_distinct_locations_have_distinct_staging_files(one: str, other: str) -> None:
    # A key is refused (a malformed command line) or staged where no other key is: `a//b` and `a/b` would otherwise
    # share one staging file, and two samplers their lines.
    first, second = f"s3://logs/{one}", f"s3://logs/{other}"
    if one == other or parse_location(first) is None or parse_location(second) is None:
        return
    assert stage_of(first) != stage_of(second)


def test_two_slashes_are_a_malformed_command_line(tmp_path: Path) -> None:
    env = aws_environment(dict(os.environ), "http://127.0.0.1:9", tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "orca.sample", "--out", "s3://logs/a//b.jsonl", "--count", "1"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert done.returncode == 2
    assert "s3://BUCKET/KEY" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("", DEFAULT_UPLOAD_SECONDS), ("30", 30.0), ("1", 1.0), ("0.25", 0.25), ("0", DEFAULT_UPLOAD_SECONDS),
        ("-5", DEFAULT_UPLOAD_SECONDS), ("nan", DEFAULT_UPLOAD_SECONDS), ("inf", DEFAULT_UPLOAD_SECONDS),
        ("ten", DEFAULT_UPLOAD_SECONDS), ("1e400", DEFAULT_UPLOAD_SECONDS),
    ],
)
def test_upload_seconds_is_a_positive_finite_number_else_30(text: str, seconds: float) -> None:
    # docs/behaviour.md §4.3: default 30; not a positive (finite) number is the default.
    assert DEFAULT_UPLOAD_SECONDS == 30.0
    assert upload_seconds({"ORCA_SAMPLE_UPLOAD_SECONDS": text}) == seconds


def test_upload_seconds_unset_is_30() -> None:
    assert upload_seconds({}) == 30.0


# --- the sink against the server ---


def test_close_uploads_the_whole_staging_file(s3_env: dict[str, str], s3_server: MotoServer, bucket: str) -> None:
    location = f"s3://{bucket}/pipe/7/metrics/i-1.jsonl"
    sink = S3Sink(location, None)
    for n in range(3):
        sink.write(f'{{"n":{n}}}'.encode())
    sink.close()
    staged = Path(stage_of(location)).read_bytes()
    assert staged == b'{"n":0}\n{"n":1}\n{"n":2}\n'
    assert Path(stage_of(location)).is_relative_to(s3_env["ORCA_LOG_STAGE"])
    assert s3_server.read(bucket, "pipe/7/metrics/i-1.jsonl") == staged


def test_close_twice_is_harmless(s3_env: dict[str, str], s3_server: MotoServer, bucket: str) -> None:
    sink = S3Sink(f"s3://{bucket}/k.jsonl", None)
    sink.write(b"one")
    sink.close()
    sink.close()
    assert s3_server.read(bucket, "k.jsonl") == b"one\n"


def test_nothing_written_uploads_nothing(
    s3_env: dict[str, str], s3_server: MotoServer, bucket: str, capfd: pytest.CaptureFixture[str]
) -> None:
    location = f"s3://{bucket}/empty.jsonl"
    S3Sink(location, None).close()
    assert s3_server.read(bucket, "empty.jsonl") is None
    assert messages_about(capfd.readouterr().err, location) == []


def test_uploads_happen_while_lines_are_written(
    s3_env: dict[str, str], s3_server: MotoServer, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_SAMPLE_UPLOAD_SECONDS", "0.2")
    sink = S3Sink(f"s3://{bucket}/k.jsonl", None)
    try:
        sink.write(b"first")
        # Before close: only the periodic upload can have put it there.
        assert wait_for(lambda: s3_server.read(bucket, "k.jsonl") == b"first\n")
        sink.write(b"second")
        assert wait_for(lambda: s3_server.read(bucket, "k.jsonl") == b"first\nsecond\n")
    finally:
        sink.close()


def test_an_unchanged_staging_file_is_not_uploaded_again(
    s3_env: dict[str, str], s3_server: MotoServer, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/behaviour.md §4.3: uploaded "when it changed since the last upload". Deleting the object shows whether it
    # comes back.
    monkeypatch.setenv("ORCA_SAMPLE_UPLOAD_SECONDS", "0.1")
    sink = S3Sink(f"s3://{bucket}/k.jsonl", None)
    try:
        sink.write(b"first")
        assert wait_for(lambda: s3_server.read(bucket, "k.jsonl") is not None)
        s3_server.client().delete_object(Bucket=bucket, Key="k.jsonl")
        time.sleep(0.5)  # five upload rounds
        assert s3_server.read(bucket, "k.jsonl") is None
        sink.write(b"second")
        assert wait_for(lambda: s3_server.read(bucket, "k.jsonl") == b"first\nsecond\n")
    finally:
        sink.close()


def test_a_restarted_sink_appends_so_the_object_keeps_every_line(
    s3_env: dict[str, str], s3_server: MotoServer, bucket: str
) -> None:
    location = f"s3://{bucket}/k.jsonl"
    first = S3Sink(location, None)
    first.write(b"a")
    first.write(b"b")
    first.close()
    second = S3Sink(location, None)
    second.write(b"c")
    second.close()
    assert Path(stage_of(location)).read_bytes() == b"a\nb\nc\n"
    assert s3_server.read(bucket, "k.jsonl") == b"a\nb\nc\n"


def test_keep_applies_to_the_staging_file(s3_env: dict[str, str], s3_server: MotoServer, bucket: str) -> None:
    # docs/behaviour.md §4.4 with N=2: at 2N=4 lines the file becomes its last 2 (3, 4); the fifth line is appended to
    # those.
    location = f"s3://{bucket}/k.jsonl"
    sink = S3Sink(location, 2)
    for n in range(1, 6):
        sink.write(b"%d" % n)
    sink.close()
    assert Path(stage_of(location)).read_bytes() == b"3\n4\n5\n"
    assert s3_server.read(bucket, "k.jsonl") == b"3\n4\n5\n"


def test_a_missing_bucket_gives_one_message_and_keeps_every_line(
    s3_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ORCA_SAMPLE_UPLOAD_SECONDS", "0.1")
    location = "s3://orca-no-such-bucket-for-sink/k.jsonl"
    sink = S3Sink(location, None)
    for n in range(5):
        sink.write(b"%d" % n)
        time.sleep(0.15)  # several upload rounds fail
    sink.close()
    messages = messages_about(capfd.readouterr().err, location)
    assert len(messages) == 1, messages
    assert "NoSuchBucket" in messages[0]
    assert Path(stage_of(location)).read_bytes() == b"0\n1\n2\n3\n4\n"


def test_after_a_success_a_new_failure_gets_a_new_message(
    s3_env: dict[str, str],
    s3_server: MotoServer,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    # docs/behaviour.md §4.5: one message, silence until an upload succeeds again, then a later failure is told again.
    monkeypatch.setenv("ORCA_SAMPLE_UPLOAD_SECONDS", "0.1")
    bucket = f"orca-late-{os.getpid()}-{time.monotonic_ns()}"
    location = f"s3://{bucket}/k.jsonl"
    client = s3_server.client()
    sink = S3Sink(location, None)
    try:
        sink.write(b"a")
        assert wait_for(lambda: len(messages_about(capfd.readouterr().err, location)) == 1)
        client.create_bucket(Bucket=bucket)
        assert wait_for(lambda: s3_server.read(bucket, "k.jsonl") == b"a\n")
        client.delete_object(Bucket=bucket, Key="k.jsonl")
        client.delete_bucket(Bucket=bucket)
        time.sleep(0.3)
        sink.write(b"b")
        time.sleep(0.5)
    finally:
        sink.close()
    messages = messages_about(capfd.readouterr().err, location)
    assert len(messages) == 1, messages  # the second failure run's message; the first was read above
    assert Path(stage_of(location)).read_bytes() == b"a\nb\n"


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """An endpoint that accepts connections (the kernel's backlog does) and never answers: uploads hang until the
    client's read timeout."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_close_is_bounded_and_lines_are_not_delayed_by_a_hanging_upload(
    s3_env: dict[str, str], silent_endpoint: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Both: uploads never delay a line, and the final upload is bounded to 5 s (docs/behaviour.md §2.4).
    monkeypatch.setenv("AWS_ENDPOINT_URL", silent_endpoint)
    monkeypatch.setenv("ORCA_SAMPLE_UPLOAD_SECONDS", "0.1")
    location = "s3://orca-hanging/k.jsonl"
    sink = S3Sink(location, None)
    slowest = 0.0
    for n in range(20):
        started = time.monotonic()
        sink.write(b"%d" % n)
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.05)  # the uploader is now stuck waiting for an answer that never comes
    started = time.monotonic()
    sink.close()
    closing = time.monotonic() - started
    # A write is a local append; 0.5 s is a wide margin on a shared 2-core machine,
    # and far below the 10 s read timeout a write would wait if it waited for the upload.
    assert slowest < 0.5, slowest
    assert closing < 5.5, closing
    messages = messages_about(capfd.readouterr().err, location)
    assert len(messages) == 1, messages
    assert "did not finish within 5 s" in messages[0]
    assert Path(stage_of(location)).read_bytes() == "".join(f"{n}\n" for n in range(20)).encode()


def test_importing_the_module_does_not_import_boto3() -> None:
    # docs/behaviour.md §4.3: boto3 only when an s3:// location is used; importing the module is not using it.
    code = "import sys, orca.sample.shell.out.s3; assert 'boto3' not in sys.modules and 'botocore' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
