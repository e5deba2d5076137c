"""What the S3 tests share: lines of a sampler's size, a staging file written by hand, and one location's object,
staging file and open multipart uploads as the moto server holds them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orca.sample.shell.out.s3 import Uploader, stage_of
from tests.moto_server import MotoServer
from tests.s3.proxy import FaultProxy

# A sampler's line is about 450 bytes.
LINE = b'{"v":1,"t":1796016198.738,"dt":5.0,' + b'"x":"' + b"m" * 400 + b'"}\n'
MIB = 1024 * 1024


def lines(count: int) -> bytes:
    return LINE * count


def lines_over(size: int) -> bytes:
    """Whole lines just over `size` bytes."""
    return lines(size // len(LINE) + 1)


def append(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as staged:
        staged.write(data)


def multipart(etag: str) -> bool:
    # S3 (and moto) give a multipart upload's object the ETag "<md5 of the parts' md5s>-<number of parts>".
    return "-" in etag.strip('"')


class Location:
    """One `s3://` location: its staging file, and its object and open uploads as the server holds them (read
    directly, not through any proxy the sampler is given)."""

    def __init__(
        self,
        server: MotoServer,
        bucket: str,
        key: str = "p/7/metrics/i-1.jsonl",
        stage_root: str | None = None,
    ) -> None:
        self.server, self.bucket, self.key = server, bucket, key
        self.client: Any = server.client()
        """A boto3 client straight to the server: the store as it is, whatever the sampler is given."""
        self.location = f"s3://{bucket}/{key}"
        self.stage = Path(stage_of(self.location)) if stage_root is None else Path(stage_root, bucket, key)
        """The staging file: this process's (its ORCA_LOG_STAGE), or a sampler's given `stage_root`."""

    def uploader(self, **options: Any) -> Uploader:
        return Uploader(self.location, self.bucket, self.key, str(self.stage), 30.0, **options)

    def object(self) -> bytes | None:
        """The object's bytes, or None while it does not exist."""
        from botocore.exceptions import ClientError

        try:
            body: bytes = self.client.get_object(Bucket=self.bucket, Key=self.key)["Body"].read()
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        return body

    def etag(self) -> str:
        etag: str = self.client.head_object(Bucket=self.bucket, Key=self.key)["ETag"]
        return etag

    def open_uploads(self) -> list[str]:
        """The upload ids of the multipart uploads open for this key."""
        listed = self.client.list_multipart_uploads(Bucket=self.bucket, Prefix=self.key)
        return [upload["UploadId"] for upload in listed.get("Uploads", []) if upload["Key"] == self.key]

    def level(self) -> bool:
        """The object equals the staging file."""
        return self.object() == self.stage.read_bytes()

    def prefix(self) -> bool:
        """The object is a prefix of the staging file (or there is none yet)."""
        got = self.object()
        return got is None or self.stage.read_bytes().startswith(got)


def recovers(at: Location, proxy: FaultProxy, uploader: Uploader) -> None:
    """With the faults gone, the next upload brings the object level, and leaves no multipart upload open."""
    proxy.heal()
    append(at.stage, lines(2))
    uploader.upload_if_changed()
    assert at.level()
    assert at.open_uploads() == []


def messages_about(text: str, location: str) -> list[str]:
    # Other tests' uploader threads may still be talking on stderr: count only this location's messages.
    return [line for line in text.splitlines() if location in line]
