"""How an upload brings the object level with the staging file (docs/s3.md): the whole file below 5 MiB,
then only the new lines (a multipart upload whose first part is the object copied inside the store), and the whole
file again whenever the object is not what the last upload left. Against the real moto server of conftest.py; the
uploader's rounds are called one by one here, with no thread and no timing."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from orca.sample.shell.out.files import LineFile
from orca.sample.shell.out.s3 import whole_lines_end
from orca.sample.shell.out.s3_parts import PartLimits
from orca.sample.shell.out.s3_store import READ_BYTES, Span
from orca.sample.shell.out.staging import StagingFile, stage_root
from tests.moto_server import MotoServer, aws_environment
from tests.s3.proxy import FaultProxy, Seen
from tests.s3.staged import LINE, Location, append, lines, multipart, recovers

MIN_PART_BYTES = PartLimits().smallest
Fixture = Location


@pytest.fixture
def at(proxied_env: dict[str, str], s3_server: MotoServer, bucket: str) -> Location:
    return Location(s3_server, bucket)


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
    for round_ in range(7):
        append(at.stage, lines(1 + round_))
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
def test_nothing_new_sends_nothing(at: Fixture, proxy: FaultProxy, count: int) -> None:
    uploader = at.uploader()
    append(at.stage, lines(count))
    uploader.upload_if_changed()
    proxy.forget()
    append(at.stage, LINE[:50])  # the file changed, but holds no new whole line
    uploader.upload_if_changed()
    assert proxy.seen == []


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


def is_tail(request: Seen) -> bool:
    return request.operation == "UploadPart"


def is_complete(request: Seen) -> bool:
    return request.operation == "CompleteMultipartUpload"


def test_appending_sends_the_new_lines_only(at: Fixture, proxy: FaultProxy) -> None:
    uploader = at.uploader()
    append(at.stage, lines(MIN_PART_BYTES // len(LINE) + 1))
    uploader.upload_if_changed()
    proxy.forget()
    append(at.stage, lines(6))
    uploader.upload_if_changed()
    assert at.level()
    # Of the bodies sent, only the tail's carries the object's bytes: the six lines, and no more.
    assert [(request.operation, request.body_bytes) for request in proxy.seen if request.body_bytes] == [
        ("UploadPart", len(lines(6))),
        ("CompleteMultipartUpload", next(r.body_bytes for r in proxy.seen if r.operation == "CompleteMultipartUpload")),
    ]


@pytest.mark.parametrize(("where", "how"), [(is_tail, "drop"), (is_complete, "drop"), (is_complete, "lose")])
def test_a_failed_append_leaves_no_upload_open_and_the_next_upload_is_right(
    at: Fixture,
    proxy: FaultProxy,
    capfd: pytest.CaptureFixture[str],
    where: Callable[[Seen], bool],
    how: str,
) -> None:
    uploader = at.uploader()
    append(at.stage, lines(MIN_PART_BYTES // len(LINE) + 1))
    uploader.upload_if_changed()
    before = at.object()
    # Every try of the request fails (the client tries each request three times).
    (proxy.drop if how == "drop" else proxy.lose)(where, times=None)
    append(at.stage, lines(3))
    uploader.upload_if_changed()
    assert [request.operation for request in proxy.seen][-1] == "AbortMultipartUpload"
    assert at.open_uploads() == []
    messages = [line for line in capfd.readouterr().err.splitlines() if at.location in line]
    assert len(messages) == 1 and "Connection was closed" in messages[0], messages
    if how == "drop":
        assert at.object() == before
    assert at.prefix()
    recovers(at, proxy, uploader)


@pytest.mark.parametrize("last_newline", [0, 1, 100, READ_BYTES - 1, READ_BYTES, 2 * READ_BYTES + 5])
@pytest.mark.parametrize("after", [0, 1, READ_BYTES + 3])
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
        assert max(map(len, pieces)) <= READ_BYTES
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


def _reuses_inode_numbers(directory: Path) -> bool:
    """Whether a file made in `directory` right after one there was replaced by a rename gets the replaced file's
    inode number (ext4 does: it hands the lowest free number in the group out first)."""
    directory.mkdir(parents=True, exist_ok=True)
    first, second, third = (directory / name for name in (".first", ".second", ".third"))
    first.write_bytes(b"1")
    freed = first.stat().st_ino
    second.write_bytes(b"2")
    os.replace(second, first)
    third.write_bytes(b"3")
    reused = third.stat().st_ino == freed
    for path in (first, third):
        path.unlink()
    return reused


def test_a_staging_file_rewritten_onto_the_uploaded_files_inode_number_is_uploaded_whole(at: Fixture) -> None:
    # --keep replaces the staging file by a rename, twice between two uploads here (a store unreachable for a
    # while, a high line rate). ext4 gives the replaced file's inode number to the next file made, so the file of
    # the second rewrite can carry the number of the one last uploaded: it is a different file all the same, and
    # its tail appended to the object would make an object that is neither file.
    if not _reuses_inode_numbers(at.stage.parent):
        pytest.skip("this file system does not hand a freed inode number out again: the case cannot arise here")
    numbered = [b'{"n":%d,"x":"%s"}' % (n, b"m" * 1000) for n in range(40_000)]
    keep = MIN_PART_BYTES // len(numbered[0]) + 100  # the kept lines alone take the upload past 5 MiB
    writer = LineFile(str(at.stage), keep, StagingFile(stage_root(), str(at.stage)))
    uploader = at.uploader()
    written = 0

    def write(count: int) -> None:
        nonlocal written
        for line in numbered[written : written + count]:
            assert writer.write(line)
        written += count

    write(keep)
    uploader.upload_if_changed()
    uploaded = at.stage.stat().st_ino
    for _ in range(4):  # each pass doubles the file, which --keep cuts back to `keep` lines: one rewrite
        write(keep)
        if at.stage.stat().st_ino == uploaded:
            break  # the number came back (without the fix, at the second rewrite)
    write(100)
    uploader.upload_if_changed()
    assert at.object() == at.stage.read_bytes()
    write(100)
    uploader.upload_if_changed()
    assert at.object() == at.stage.read_bytes()
    assert multipart(at.etag())  # the appends go on from the file now uploaded
