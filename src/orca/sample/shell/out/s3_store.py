"""The requests of an `s3://` output's uploads (docs/s3.md), on boto3 clients made by `shell.aws`.

An upload leaves the object equal to the staging file's first bytes up to a line's end; one that fails leaves it
what it was, or (a complete whose answer was lost) already the new bytes: a prefix of the staging file, never
anything else. A multipart upload that fails is aborted; the uploads still open for the key (one whose abort failed
too, one whose id a lost answer never brought back, one a process cut off) are found by listing and aborted.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from orca.sample.shared.aws import aws_client, aws_session, error_answer
from orca.sample.shared.s3_location import error_text
from orca.sample.shell.out.s3_parts import PartLimits, append_verdict, part_ranges

NDJSON = "application/x-ndjson"
CONNECT_SECONDS = 2.0
"""Short enough that an unreachable endpoint fails a round quickly and the final upload keeps its 5 s."""
READ_SECONDS = 10.0
ATTEMPTS = 3
"""Each request's tries in all, in botocore's standard retry mode: a 503 or a dropped connection is tried again
after a jittered backoff of a fraction of a second (a second or two for throttling), within the final upload's 5 s."""
COPY_READ_SECONDS = 120.0
"""The copy of a large object inside the store may take a while to answer (S3 copies tens of MB a second, and a
part may be 5 GiB). A periodic upload waits that long; the final one is bounded by the 5 s of the end."""
COPY_ATTEMPTS = 2
READ_BYTES = 64 * 1024


class Span:
    """Bytes `start` to `end` of an open file, read in bounded pieces with `pread`: a request's body that never
    holds the file in memory. `seek` and `tell` let botocore checksum it and send it again on a retry."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        self._fd, self._start, self._end, self._at = fd, start, end, start

    def __len__(self) -> int:
        return self._end - self._start

    def read(self, size: int | None = -1) -> bytes:
        left = self._end - self._at
        wanted = left if size is None or size < 0 else min(size, left)
        if wanted <= 0:
            return b""
        data = os.pread(self._fd, min(wanted, READ_BYTES), self._at)
        if not data:
            # Sending fewer bytes than announced would leave the store waiting for the rest.
            raise OSError(f"the staging file shrank to {self._at} bytes while it was uploaded")
        self._at += len(data)
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: self._start, os.SEEK_CUR: self._at, os.SEEK_END: self._end}[whence]
        self._at = min(max(base + offset, self._start), self._end)
        return self._at - self._start

    def tell(self) -> int:
        return self._at - self._start


class AppendRefused(Exception):
    """The store will not let an append check or copy the object (docs/s3.md, "Permissions"): uploads
    must send the whole file. The message says which request and the store's answer."""


class _ObjectChanged(Exception):
    """The copy's object is no longer what the last upload left: this once, the whole file."""


Part = tuple[Literal["copy", "send"], int, int]
"""A part of a multipart upload: bytes `start` to `end` of the object, copied inside the store, or sent."""


class ObjectStore:
    """One location's object, and the multipart uploads open for it."""

    def __init__(self, bucket: str, key: str, limits: PartLimits) -> None:
        session = aws_session()
        self._client: Any = aws_client(
            "s3", connect_seconds=CONNECT_SECONDS, read_seconds=READ_SECONDS, attempts=ATTEMPTS, session=session
        )
        self._copier: Any = aws_client(
            "s3", connect_seconds=CONNECT_SECONDS, read_seconds=COPY_READ_SECONDS, attempts=COPY_ATTEMPTS,
            session=session,
        )
        self._where = {"Bucket": bucket, "Key": key}
        self._limits = limits
        self._listing = True
        self.sweep_due = True
        """The open uploads should be listed and aborted: at the first upload, and after an abort that failed."""

    def head(self) -> tuple[str, int] | None:
        """The object's ETag and size, None when there is none; `AppendRefused` when the store will not say."""
        try:
            answer = self._client.head_object(**self._where)
        except Exception as error:
            found = error_answer(error)
            if found is not None and found[0] == 404:
                return None
            if found is not None and append_verdict(found[0], found[1]) == "refused":
                raise AppendRefused(f"HeadObject answered {error_text(found[1], found[2])}") from None
            raise
        return str(answer.get("ETag", "")), int(answer.get("ContentLength", -1))

    def put(self, fd: int, end: int) -> str:
        """Makes the object the file's first `end` bytes, in one request up to the largest part, else in parts
        sent from the file; its ETag."""
        largest = self._limits.largest
        if end <= largest:
            body = Span(fd, 0, end)
            return str(self._client.put_object(**self._where, Body=body, ContentLength=end, ContentType=NDJSON)["ETag"])
        return self._multipart(fd, [("send", start, stop) for start, stop in part_ranges(0, end, largest)])

    def append(self, fd: int, size: int, etag: str, end: int) -> str | None:
        """Makes the object its first `size` bytes, copied inside the store (they must still have `etag`), followed
        by the file's bytes `size` to `end`, sent: the new ETag, or None when the object is no longer what it was.
        `AppendRefused` when the store will not copy."""
        largest = self._limits.largest
        copied: list[Part] = [("copy", start, stop) for start, stop in part_ranges(0, size, largest)]
        sent: list[Part] = [("send", start, stop) for start, stop in part_ranges(size, end, largest)]
        try:
            return self._multipart(fd, copied + sent, etag)
        except _ObjectChanged:
            return None

    def _multipart(self, fd: int, parts: list[Part], etag: str = "") -> str:
        created = self._client.create_multipart_upload(**self._where, ContentType=NDJSON)
        upload = str(created["UploadId"])
        # A create tried again may have made an upload whose answer was lost: its id is known only by listing.
        asked_again = int(created.get("ResponseMetadata", {}).get("RetryAttempts", 0)) > 0
        try:
            tags = [self._part(fd, upload, number, part, etag) for number, part in enumerate(parts, 1)]
            done = self._client.complete_multipart_upload(
                **self._where,
                UploadId=upload,
                MultipartUpload={"Parts": [{"PartNumber": n, "ETag": tag} for n, tag in enumerate(tags, 1)]},
            )
            return str(done["ETag"])
        except BaseException:
            self._abort(upload)
            raise
        finally:
            if asked_again:
                self.sweep()

    def _part(self, fd: int, upload: str, number: int, part: Part, etag: str) -> str:
        kind, start, end = part
        if kind == "send":
            answer = self._client.upload_part(
                **self._where, UploadId=upload, PartNumber=number, Body=Span(fd, start, end), ContentLength=end - start
            )
            return str(answer["ETag"])
        try:
            answer = self._copier.upload_part_copy(
                **self._where,
                UploadId=upload,
                PartNumber=number,
                CopySource=dict(self._where),
                CopySourceRange=f"bytes={start}-{end - 1}",
                CopySourceIfMatch=etag,
            )
        except Exception as error:
            found = error_answer(error)
            verdict = "failed" if found is None else append_verdict(found[0], found[1])
            if verdict == "changed":
                raise _ObjectChanged from None
            if verdict == "refused" and found is not None:
                raise AppendRefused(f"UploadPartCopy answered {error_text(found[1], found[2])}") from None
            raise
        return str(answer["CopyPartResult"]["ETag"])

    def _abort(self, upload: str) -> bool:
        """Aborts one upload (its request tried again as any is); whether it is gone. One that stays open is left to
        the next listing."""
        try:
            self._client.abort_multipart_upload(**self._where, UploadId=upload)
        except Exception as error:
            found = error_answer(error)
            if found is None or found[1] != "NoSuchUpload":
                self.sweep_due = True
                return False
        return True

    def sweep(self) -> str | None:
        """Aborts every multipart upload open for the key. None, or once, the store's answer when it will not list
        them (no ListBucketMultipartUploads): they are then left to the bucket's lifecycle rule. A listing that
        fails otherwise is tried again at the next upload."""
        if not self._listing:
            return None
        try:
            pages = self._client.get_paginator("list_multipart_uploads").paginate(
                Bucket=self._where["Bucket"], Prefix=self._where["Key"]
            )
            uploads = [
                str(upload["UploadId"])
                for page in pages
                for upload in page.get("Uploads", [])
                if upload.get("Key") == self._where["Key"]
            ]
        except Exception as error:
            found = error_answer(error)
            if found is not None and append_verdict(found[0], found[1]) == "refused":
                self._listing = self.sweep_due = False
                return f"ListMultipartUploads answered {error_text(found[1], found[2])}"
            self.sweep_due = True
            return None
        self.sweep_due = False
        for upload in uploads:
            self._abort(upload)
        return None
