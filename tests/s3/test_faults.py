"""What the S3 output does when the store or the network misbehaves (docs/s3.md): a store that cannot
copy, credentials that may write but not read, errors worth a retry, connections that drop, answers that are lost,
a copy that takes its time, objects past the largest part, and the multipart uploads all of these could leave open.

Against moto's server, through the fault-injecting proxy of proxy.py on loopback; the uploader's rounds are called
one by one, with no thread and no timing. After every scenario the open multipart uploads for the key are listed:
none may be left."""

from __future__ import annotations

from typing import Any

import pytest

from orca.sample.shell.out import s3_store
from orca.sample.shell.out.s3 import S3Sink
from orca.sample.shell.out.s3_parts import PartLimits
from tests.moto_server import MotoServer
from tests.s3.proxy import FaultProxy, Seen
from tests.s3.staged import MIB, Location, append, lines, lines_over, messages_about, multipart, recovers


@pytest.fixture
def at(proxied_env: dict[str, str], s3_server: MotoServer, bucket: str) -> Location:
    return Location(s3_server, bucket)


def operation(name: str) -> Any:
    return lambda seen: seen.operation == name


def seen(proxy: FaultProxy, name: str) -> list[Seen]:
    return [request for request in proxy.seen if request.operation == name]


def at_5_mib(at: Location) -> Any:
    """An uploader whose first round has put a staging file just over 5 MiB, so that its next rounds append."""
    uploader = at.uploader()
    append(at.stage, lines_over(5 * MIB))
    uploader.upload_if_changed()
    assert at.level()
    return uploader


# --- a store without UploadPartCopy, credentials without GetObject ---------------------------------------------------


def test_a_store_that_cannot_copy_gets_whole_uploads_and_never_freezes(
    at: Location, proxy: FaultProxy, capfd: pytest.CaptureFixture[str]
) -> None:
    uploader = at_5_mib(at)
    proxy.answer(operation("UploadPartCopy"), 501, "NotImplemented", times=None)
    for round_ in range(4):
        append(at.stage, lines(3))
        uploader.upload_if_changed()
        assert at.level(), round_
    # Refused once, then remembered: no copy is asked for again in this process.
    assert len(seen(proxy, "UploadPartCopy")) == 1
    assert not multipart(at.etag())
    assert at.open_uploads() == []
    messages = messages_about(capfd.readouterr().err, at.location)
    assert len(messages) == 1, messages
    assert "NotImplemented" in messages[0] and "whole" in messages[0]


@pytest.mark.parametrize(
    ("status", "code"), [(403, "AccessDenied"), (400, "InvalidRequest"), (405, "MethodNotAllowed")]
)
def test_any_refusal_of_the_copy_falls_back_to_whole_uploads(
    at: Location, proxy: FaultProxy, capfd: pytest.CaptureFixture[str], status: int, code: str
) -> None:
    uploader = at_5_mib(at)
    proxy.answer(operation("UploadPartCopy"), status, code, times=None)
    for _ in range(2):
        append(at.stage, lines(2))
        uploader.upload_if_changed()
        assert at.level()
    assert len(seen(proxy, "UploadPartCopy")) == 1
    assert at.open_uploads() == []
    assert len(messages_about(capfd.readouterr().err, at.location)) == 1


def test_an_object_changed_under_the_copy_is_not_a_store_that_cannot_copy(at: Location, proxy: FaultProxy) -> None:
    # The copy's precondition failing means another writer, not a store without the copy: whole once, then appends.
    uploader = at_5_mib(at)
    proxy.answer(operation("UploadPartCopy"), 412, "PreconditionFailed")
    append(at.stage, lines(2))
    uploader.upload_if_changed()
    assert at.level() and not multipart(at.etag())
    append(at.stage, lines(2))
    uploader.upload_if_changed()
    assert at.level() and multipart(at.etag())
    assert at.open_uploads() == []


# What S3 answers credentials that may write but not read (no s3:GetObject): a HEAD refused with 403 and no body, as
# HEAD answers carry none (S3's HeadObject reference, "Permissions"). The answers are the proxy's rather than an IAM
# policy's evaluated by moto: which IAM action moto checks for HeadObject and ListMultipartUploads has changed between
# its releases, while what the store says to such credentials has not.
REFUSED_HEAD = [(403, ""), (405, "MethodNotAllowed"), (501, "NotImplemented")]


@pytest.mark.parametrize(("status", "code"), REFUSED_HEAD, ids=["403-no-body", "405", "501"])
def test_write_only_credentials_get_whole_uploads_and_never_freeze(
    at: Location, proxy: FaultProxy, capfd: pytest.CaptureFixture[str], status: int, code: str
) -> None:
    uploader = at_5_mib(at)
    proxy.answer(operation("HeadObject"), status, code, times=None)
    for round_ in range(3):
        append(at.stage, lines(2))
        uploader.upload_if_changed()
        assert at.level(), round_
    # Refused once, then remembered: neither the HEAD nor a copy is asked for again in this process.
    assert len(seen(proxy, "HeadObject")) == 1
    assert seen(proxy, "UploadPartCopy") == []
    assert not multipart(at.etag())
    assert at.open_uploads() == []
    messages = messages_about(capfd.readouterr().err, at.location)
    assert len(messages) == 1, messages
    assert "HeadObject" in messages[0] and str(status) in messages[0] and "whole" in messages[0]


# Credentials without s3:ListBucketMultipartUploads get 403 AccessDenied for the listing; a store without the listing
# answers 501 NotImplemented.
REFUSED_LISTING = [(403, "AccessDenied"), (501, "NotImplemented")]


@pytest.mark.parametrize(("status", "code"), REFUSED_LISTING, ids=["403", "501"])
def test_credentials_that_may_not_list_uploads_get_one_message_and_appends(
    at: Location, proxy: FaultProxy, capfd: pytest.CaptureFixture[str], status: int, code: str
) -> None:
    # Without the listing the clean-up cannot find what is left open: it says so once and leaves it to the bucket's
    # lifecycle rule; the appends themselves go on.
    proxy.answer(operation("ListMultipartUploads"), status, code, times=None)
    uploader = at_5_mib(at)
    for round_ in range(3):
        append(at.stage, lines(2))
        uploader.upload_if_changed()
        assert at.level() and multipart(at.etag()), round_
    assert len(seen(proxy, "ListMultipartUploads")) == 1
    assert at.open_uploads() == []
    messages = messages_about(capfd.readouterr().err, at.location)
    assert len(messages) == 1, messages
    assert "ListMultipartUploads" in messages[0] and code in messages[0]
    assert "AbortIncompleteMultipartUpload" in messages[0]


# --- retries ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "status", "code"),
    [("answer", 503, "SlowDown"), ("answer", 500, "InternalError"), ("drop", 0, "")],
    ids=["503", "500", "dropped"],
)
def test_the_final_upload_survives_one_error_worth_a_retry(
    proxied_env: dict[str, str],
    proxy: FaultProxy,
    s3_server: MotoServer,
    bucket: str,
    capfd: pytest.CaptureFixture[str],
    action: str,
    status: int,
    code: str,
) -> None:
    # The upload interval is the default 30 s: the final upload at close is the only one.
    at = Location(s3_server, bucket)
    if action == "drop":
        proxy.drop(operation("PutObject"))
    else:
        proxy.answer(operation("PutObject"), status, code)
    sink = S3Sink(at.location, None)
    for n in range(18):
        sink.write(b'{"n":%d}' % n)
    sink.close()
    assert at.level()
    assert len(seen(proxy, "PutObject")) == 2
    assert messages_about(capfd.readouterr().err, at.location) == []


# --- nothing left behind -------------------------------------------------------------------------------------------


def test_the_network_failing_from_the_second_part_on_leaves_no_upload_open(
    at: Location, proxy: FaultProxy, capfd: pytest.CaptureFixture[str]
) -> None:
    uploader = at_5_mib(at)
    before = at.object()
    proxy.fail_from(lambda request: request.part == 2)
    append(at.stage, lines(3))
    uploader.upload_if_changed()
    assert at.object() == before
    append(at.stage, lines(3))
    uploader.upload_if_changed()  # still down: the abort cannot reach the store either
    assert at.object() == before
    recovers(at, proxy, uploader)
    assert len(messages_about(capfd.readouterr().err, at.location)) == 1


def test_a_lost_answer_to_create_leaves_no_upload_open(at: Location, proxy: FaultProxy) -> None:
    # The store made the upload, the answer never came back: the client asks again and gets a second one.
    uploader = at_5_mib(at)
    proxy.lose(operation("CreateMultipartUpload"))
    append(at.stage, lines(3))
    uploader.upload_if_changed()
    assert len(seen(proxy, "CreateMultipartUpload")) == 2
    assert at.level()
    assert at.open_uploads() == []


@pytest.mark.parametrize("lost", ["UploadPart", "CompleteMultipartUpload", "AbortMultipartUpload"])
def test_a_lost_answer_anywhere_leaves_the_object_a_prefix_and_no_upload_open(
    at: Location, proxy: FaultProxy, lost: str
) -> None:
    uploader = at_5_mib(at)
    if lost == "AbortMultipartUpload":
        # An abort that is lost too: the copy fails, and the abort's answer never comes.
        proxy.answer(operation("UploadPart"), 400, "InvalidArgument", times=None)
    proxy.lose(operation(lost), times=None)
    append(at.stage, lines(3))
    uploader.upload_if_changed()
    assert at.prefix()
    recovers(at, proxy, uploader)


def test_at_start_the_uploads_a_cut_off_end_left_are_aborted(at: Location, s3_server: MotoServer) -> None:
    # A sampler cut off at its 5 s end (or killed) leaves its upload open: the next one for the key aborts it.
    client = s3_server.client()
    left = [client.create_multipart_upload(Bucket=at.bucket, Key=at.key)["UploadId"] for _ in range(2)]
    other = client.create_multipart_upload(Bucket=at.bucket, Key=at.key + ".other")["UploadId"]
    assert sorted(at.open_uploads()) == sorted(left)
    append(at.stage, lines(2))
    at.uploader().upload_if_changed()
    assert at.level()
    assert at.open_uploads() == []
    still = client.list_multipart_uploads(Bucket=at.bucket).get("Uploads", [])
    assert [upload["UploadId"] for upload in still] == [other]  # another key's are not ours
    client.abort_multipart_upload(Bucket=at.bucket, Key=at.key + ".other", UploadId=other)


# --- a slow copy, and objects past the largest part ------------------------------------------------------------------


def test_a_copy_slower_than_the_read_timeout_still_appends(
    at: Location, proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/s3.md: a request fails after READ_SECONDS of silence, the copy inside the store only after its own
    # COPY_READ_SECONDS. The first scaled down here, so that a copy slower than it costs a test seconds, not 11.
    monkeypatch.setattr(s3_store, "READ_SECONDS", 1.0)
    uploader = at_5_mib(at)
    proxy.delay(operation("UploadPartCopy"), 2.0, times=None)
    append(at.stage, lines(3))
    uploader.upload_if_changed()
    assert at.level()
    assert multipart(at.etag())
    assert len(seen(proxy, "UploadPartCopy")) == 1
    assert at.open_uploads() == []


def copy_bytes(request: Seen) -> int:
    first, _, last = request.headers["x-amz-copy-source-range"].removeprefix("bytes=").partition("-")
    return int(last) - int(first) + 1


def test_an_object_past_the_largest_part_is_copied_and_put_in_parts(at: Location, proxy: FaultProxy) -> None:
    # S3's largest part (and PUT) is 5 GiB; here the limit is 6 MiB, and the proxy refuses anything larger, as S3
    # refuses anything past 5 GiB.
    largest = 6 * MIB
    proxy.answer(lambda request: request.operation == "PutObject" and request.body_bytes > largest, 400,
                 "EntityTooLarge", times=None)
    proxy.answer(lambda request: request.operation == "UploadPartCopy" and copy_bytes(request) > largest, 400,
                 "InvalidRequest", times=None)
    proxy.answer(lambda request: request.operation == "UploadPart" and request.body_bytes > largest, 400,
                 "EntityTooLarge", times=None)
    uploader = at.uploader(limits=PartLimits(smallest=5 * MIB, largest=largest))
    append(at.stage, lines_over(11 * MIB))
    uploader.upload_if_changed()
    assert at.level()
    assert multipart(at.etag())
    for round_ in range(2):
        append(at.stage, lines(3))
        proxy.forget()
        uploader.upload_if_changed()
        assert at.level(), round_
        copies = seen(proxy, "UploadPartCopy")
        assert len(copies) == 2, round_
        assert all(5 * MIB <= copy_bytes(copy) <= largest for copy in copies)
    assert at.open_uploads() == []
