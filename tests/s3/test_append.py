"""How an upload brings the object level with the staging file (README, "Writing to S3"): the whole file below 5 MiB,
then only the new lines (a multipart upload whose first part is the object copied inside the store), and the whole
file again whenever the object is not what the last upload left. Against the real moto server of conftest.py; the
uploader's rounds are called one by one here, with no thread and no timing."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orca.sample.shell.out import s3
from orca.sample.shell.out.s3 import MIN_PART_BYTES, S3Client, Span, Uploader, stage_of, whole_lines_end
from tests.moto_server import MotoServer, aws_environment

# A sampler's line is about 450 bytes.
LINE = b'{"v":1,"t":1796016198.738,"dt":5.0,' + b'"x":"' + b"m" * 400 + b'"}\n'


def append(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as staged:
        staged.write(data)


def lines(count: int) -> bytes:
    return LINE * count


class Fixture:
    def __init__(self, server: MotoServer, bucket: str, key: str = "p/7/metrics/i-1.jsonl") -> None:
        self.server, self.bucket, self.key = server, bucket, key
        self.location = f"s3://{bucket}/{key}"
        self.stage = Path(stage_of(self.location))

    def uploader(self) -> Uploader:
        return Uploader(self.location, self.bucket, self.key, str(self.stage), 30.0)

    def object(self) -> bytes | None:
        return self.server.read(self.bucket, self.key)

    def etag(self) -> str:
        etag: str = self.server.client().head_object(Bucket=self.bucket, Key=self.key)["ETag"]
        return etag

    def open_uploads(self) -> list[Any]:
        uploads: list[Any] = self.server.client().list_multipart_uploads(Bucket=self.bucket).get("Uploads", [])
        return uploads


@pytest.fixture
def at(s3_env: dict[str, str], s3_server: MotoServer, bucket: str) -> Fixture:
    return Fixture(s3_server, bucket)


def multipart(etag: str) -> bool:
    # S3 (and moto) give a multipart upload's object the ETag "<md5 of the parts' md5s>-<number of parts>".
    return etag.strip('"').endswith("-2")


def test_the_object_equals_the_staging_file_across_5_mib_and_many_appends(at: Fixture) -> None:
    uploader = at.uploader()
    below = MIN_PART_BYTES // len(LINE) - 2
    append(at.stage, lines(below))
    uploader.upload_if_changed()
    assert at.object() == at.stage.read_bytes()
    assert not multipart(at.etag())
    # Across the threshold: the object (below 5 MiB) cannot be a part of its own yet, so the file goes whole.
    append(at.stage, lines(6))
    uploader.upload_if_changed()
    assert at.object() == at.stage.read_bytes()
    assert len(at.stage.read_bytes()) >= MIN_PART_BYTES
    assert not multipart(at.etag())
    for round_ in range(12):
        append(at.stage, lines(1 + round_ % 7))
        uploader.upload_if_changed()
        assert at.object() == at.stage.read_bytes(), round_
        assert multipart(at.etag()), round_
    assert at.open_uploads() == []


def test_a_line_being_written_waits_for_the_next_upload(at: Fixture) -> None:
    uploader = at.uploader()
    append(at.stage, lines(MIN_PART_BYTES // len(LINE) + 1))
    uploader.upload_if_changed()
    whole = at.stage.read_bytes()
    append(at.stage, LINE + LINE[:100])  # the second line half written
    uploader.upload_if_changed()
    assert at.object() == whole + LINE
    append(at.stage, LINE[100:])
    uploader.upload_if_changed()
    assert at.object() == whole + LINE + LINE
    assert multipart(at.etag())


@pytest.mark.parametrize("count", [3, MIN_PART_BYTES // len(LINE) + 1])
def test_nothing_new_sends_nothing(at: Fixture, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    uploader = at.uploader()
    append(at.stage, lines(count))
    uploader.upload_if_changed()
    requests = record_requests(monkeypatch)
    append(at.stage, LINE[:50])  # the file changed, but holds no new whole line
    uploader.upload_if_changed()
    assert requests == []


def test_a_restarted_sampler_uploads_the_file_it_appends_to(at: Fixture) -> None:
    append(at.stage, lines(MIN_PART_BYTES // len(LINE) + 1))
    first = at.uploader()
    first.upload_if_changed()
    append(at.stage, lines(3))
    first.upload_if_changed()
    assert multipart(at.etag())
    # A new process knows nothing of the object: its first upload is the whole file, then it appends again.
    append(at.stage, lines(2))
    second = at.uploader()
    second.upload_if_changed()
    assert at.object() == at.stage.read_bytes()
    assert not multipart(at.etag())
    append(at.stage, lines(2))
    second.upload_if_changed()
    assert at.object() == at.stage.read_bytes()
    assert multipart(at.etag())


def test_an_object_changed_by_another_writer_is_replaced_by_the_whole_file(at: Fixture) -> None:
    uploader = at.uploader()
    append(at.stage, lines(MIN_PART_BYTES // len(LINE) + 1))
    uploader.upload_if_changed()
    for other in (b"someone else's object\n", b"x" * (MIN_PART_BYTES + 10)):
        at.server.client().put_object(Bucket=at.bucket, Key=at.key, Body=other)
        append(at.stage, lines(2))
        uploader.upload_if_changed()
        assert at.object() == at.stage.read_bytes()
    at.server.client().delete_object(Bucket=at.bucket, Key=at.key)
    append(at.stage, lines(2))
    uploader.upload_if_changed()
    assert at.object() == at.stage.read_bytes()
    assert at.open_uploads() == []


def test_a_rewritten_staging_file_is_uploaded_whole(at: Fixture) -> None:
    # --keep replaces the file by a shorter one (a new inode): appending to the object would keep the old lines.
    uploader = at.uploader()
    append(at.stage, lines(MIN_PART_BYTES // len(LINE) + 1))
    uploader.upload_if_changed()
    replacement = at.stage.with_name("replacement")
    replacement.write_bytes(b"kept\n" * (MIN_PART_BYTES // 4))
    os.replace(replacement, at.stage)
    uploader.upload_if_changed()
    assert at.object() == at.stage.read_bytes()


def record_requests(
    monkeypatch: pytest.MonkeyPatch, fail: Callable[[str, str], bool] = lambda method, query: False,
    after: Callable[[str, str], bool] = lambda method, query: False,
) -> list[tuple[str, str]]:
    """Every request the uploader makes, as (method, query); `fail` makes one raise before it is sent, `after` once
    the store has answered it (the answer lost on the way back)."""
    made: list[tuple[str, str]] = []
    real = S3Client._request

    def recording(self: S3Client, method: str, bucket: str, key: str, query: str = "", **kwargs: Any) -> Any:
        made.append((method, query))
        if fail(method, query):
            raise ConnectionResetError(104, "Connection reset by peer")
        answer = real(self, method, bucket, key, query, **kwargs)
        if after(method, query):
            raise ConnectionResetError(104, "Connection reset by peer")
        return answer

    monkeypatch.setattr(S3Client, "_request", recording)
    return made


def is_tail(method: str, query: str) -> bool:
    return method == "PUT" and query.startswith("partNumber=2")


def is_complete(method: str, query: str) -> bool:
    return method == "POST" and query.startswith("uploadId=")


def test_appending_sends_the_new_lines_only(at: Fixture, monkeypatch: pytest.MonkeyPatch) -> None:
    uploader = at.uploader()
    append(at.stage, lines(MIN_PART_BYTES // len(LINE) + 1))
    uploader.upload_if_changed()
    sent: list[int] = []
    real_read = Span.read

    def counting(self: Span, size: int = -1) -> bytes:
        data = real_read(self, size)
        sent.append(len(data))
        return data

    monkeypatch.setattr(Span, "read", counting)
    append(at.stage, lines(6))
    uploader.upload_if_changed()
    assert at.object() == at.stage.read_bytes()
    # The signer reads the body once to hash it and the connection once to send it: twice the six lines, no more.
    assert sum(sent) == 2 * len(lines(6))


@pytest.mark.parametrize(("where", "when"), [(is_tail, "before"), (is_complete, "before"), (is_complete, "after")])
def test_a_failed_append_leaves_no_upload_open_and_the_next_upload_is_right(
    at: Fixture,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    where: Callable[[str, str], bool],
    when: str,
) -> None:
    uploader = at.uploader()
    append(at.stage, lines(MIN_PART_BYTES // len(LINE) + 1))
    uploader.upload_if_changed()
    before = at.object()
    failing = [True]

    def once(method: str, query: str) -> bool:
        if failing[0] and where(method, query):
            failing[0] = False
            return True
        return False

    made = record_requests(monkeypatch, **{"fail" if when == "before" else "after": once})
    append(at.stage, lines(3))
    uploader.upload_if_changed()
    assert not failing[0]
    assert ("DELETE", made[-1][1]) == made[-1]  # aborted
    assert at.open_uploads() == []
    messages = [line for line in capfd.readouterr().err.splitlines() if at.location in line]
    assert len(messages) == 1 and "Connection reset by peer" in messages[0], messages
    if when == "before":
        assert at.object() == before
    append(at.stage, lines(2))
    uploader.upload_if_changed()
    assert at.object() == at.stage.read_bytes()
    assert at.open_uploads() == []


@pytest.mark.parametrize("last_newline", [0, 1, 100, s3.READ_BYTES - 1, s3.READ_BYTES, 2 * s3.READ_BYTES + 5])
@pytest.mark.parametrize("after", [0, 1, s3.READ_BYTES + 3])
def test_whole_lines_end_is_just_past_the_last_newline(tmp_path: Path, last_newline: int, after: int) -> None:
    data = b"a" * last_newline + b"\n" + b"b" * after
    path = tmp_path / "f"
    path.write_bytes(data)
    with path.open("rb") as staged:
        assert whole_lines_end(staged.fileno(), len(data)) == last_newline + 1
        assert whole_lines_end(staged.fileno(), last_newline) == 0  # before it, no newline at all


def test_a_span_reads_its_bytes_in_bounded_pieces_and_rewinds(tmp_path: Path) -> None:
    data = bytes(range(256)) * 1024
    path = tmp_path / "f"
    path.write_bytes(data)
    with path.open("rb") as staged:
        span = Span(staged.fileno(), 1000, 200_000)
        assert len(span) == 199_000
        pieces = list(iter(lambda: span.read(), b""))
        assert max(map(len, pieces)) <= s3.READ_BYTES
        assert b"".join(pieces) == data[1000:200_000]
        assert span.tell() == 199_000
        assert span.seek(0) == 0
        assert span.read(10) == data[1000:1010]
        path.write_bytes(data[:5000])  # the file cut short under the span
        span.seek(0)
        with pytest.raises(OSError, match="shrank"):
            while span.read(4096):
                pass


def test_signed_requests_are_accepted_for_a_key_with_awkward_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server that checks every request's signature after its first four (moto's INITIAL_NO_AUTH_ACTION_COUNT): a
    # path signed otherwise than the server reads it is refused (SignatureDoesNotMatch), for the PUT as for the
    # multipart requests and the copy source.
    server = MotoServer(tmp_path, {"INITIAL_NO_AUTH_ACTION_COUNT": "4"})
    server.start()
    try:
        bucket = server.new_bucket()  # 1
        iam = server.client("iam")
        iam.create_user(UserName="writer")  # 2
        policy = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}'
        iam.put_user_policy(UserName="writer", PolicyName="s3", PolicyDocument=policy)  # 3
        key = iam.create_access_key(UserName="writer")["AccessKey"]  # 4
        for name, value in aws_environment(dict(os.environ), server.url, tmp_path, credentials=False).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["AccessKeyId"])
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"])
        at = Fixture(server, bucket, "p q/ü+é=x~y;z(1).jsonl")
        uploader = at.uploader()
        append(at.stage, lines(MIN_PART_BYTES // len(LINE) + 1))
        uploader.upload_if_changed()
        append(at.stage, lines(2))
        uploader.upload_if_changed()
        import boto3

        reader = boto3.session.Session().client("s3")  # the writer's key, from the environment
        got = reader.get_object(Bucket=bucket, Key=at.key)
        body = got["Body"].read()
    finally:
        server.stop()
    assert body == at.stage.read_bytes()
    assert multipart(got["ETag"])


class FakeResponse:
    def __init__(self, status: int, headers: dict[str, str], content: bytes = b"") -> None:
        self.status_code, self.headers, self.content = status, headers, content


def test_a_bucket_in_another_aws_region_is_asked_again_there(monkeypatch: pytest.MonkeyPatch) -> None:
    # AWS answers a request signed for the wrong region with the bucket's region (x-amz-bucket-region); the
    # request is made again at that region's endpoint, signed for it, as boto3's client does.
    from botocore.credentials import Credentials

    sent: list[tuple[str, str]] = []
    answers = [
        FakeResponse(301, {"x-amz-bucket-region": "eu-west-1"}, b"<Error><Code>PermanentRedirect</Code></Error>"),
        FakeResponse(200, {"ETag": '"abc"', "Content-Length": "7"}),
    ]

    def send(self: S3Client, request: Any) -> FakeResponse:
        sent.append((request.url, str(request.headers["Authorization"])))
        return answers.pop(0)

    monkeypatch.setattr(S3Client, "_send", send)
    client = S3Client(Credentials("AKID", "SECRET"), None, "us-east-1", True)
    assert client.head("logs", "p/7.jsonl") == ('"abc"', 7)
    assert [url for url, _ in sent] == [
        "https://logs.s3.us-east-1.amazonaws.com/p/7.jsonl",
        "https://logs.s3.eu-west-1.amazonaws.com/p/7.jsonl",
    ]
    assert "/us-east-1/s3/aws4_request" in sent[0][1] and "/eu-west-1/s3/aws4_request" in sent[1][1]


def test_a_configured_endpoint_is_never_redirected(monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.credentials import Credentials

    def send(self: S3Client, request: Any) -> FakeResponse:
        return FakeResponse(301, {"x-amz-bucket-region": "eu-west-1"}, b"<Error><Code>PermanentRedirect</Code></Error>")

    monkeypatch.setattr(S3Client, "_send", send)
    client = S3Client(Credentials("AKID", "SECRET"), "http://127.0.0.1:9", "us-east-1", True)
    with pytest.raises(s3.S3Error, match="PermanentRedirect"):
        client.head("logs", "k")
