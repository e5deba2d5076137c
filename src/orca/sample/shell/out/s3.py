"""`--out s3://BUCKET/KEY` (docs/behaviour.md §4.3, §4.4, §4.5, §2.4): lines go to a local staging file, and a
background thread brings the object level with it every `ORCA_SAMPLE_UPLOAD_SECONDS` and once more at the end: the
whole file while the object is under 5 MiB, then only the new lines (README, "Writing to S3").

botocore is imported only inside the uploader thread (docs/behaviour.md §4.3): importing this module, or sampling to
a file, never pays its start-up time or memory, and even the first line of an `s3://` sampler is not delayed by it.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orca.sample.parse.errors import reason_of
from orca.sample.shell.out.files import LineFile
from orca.sample.shell.out.sink import S3_SCHEME
from orca.sample.shell.readback.backwards import line_start_before
from orca.sample.shell.report import FailureReport

DEFAULT_UPLOAD_SECONDS = 30.0
# close() waits at most this long for the final upload (docs/behaviour.md §2.4).
FINAL_UPLOAD_SECONDS = 5.0
EXIT_ALLOWANCE_SECONDS = 0.5
"""Of those 5 s, what is left for the process to exit after close() stops waiting: the runner waiting for the
sampler's exit waits 5 s at most, connection set-up, the upload and the exit all included."""
# Short enough that an unreachable endpoint costs one upload round, not minutes; a connection that cannot be set up
# gives up within the final upload's time. close() also bounds the whole wait by the clock.
CONNECT_TIMEOUT_SECONDS = 2.0
READ_TIMEOUT_SECONDS = 10.0
MAX_ATTEMPTS = 2


def parse_location(location: str) -> tuple[str, str] | None:
    """`s3://BUCKET/KEY` as `(bucket, key)`, or None when it is not one this output accepts.

    The key also names the staging file under the staging root, so a key that would leave the bucket's directory
    (a `.` or `..` segment) or name a directory (a trailing `/`) is refused, as is a NUL byte.

    >>> parse_location("s3://logs/p/7/metrics/i-1.jsonl")
    ('logs', 'p/7/metrics/i-1.jsonl')
    >>> parse_location("s3://logs/") is None, parse_location("s3:///key") is None, parse_location("/tmp/x") is None
    (True, True, True)
    """
    if not location.startswith(S3_SCHEME) or "\0" in location:
        return None
    bucket, _, key = location[len(S3_SCHEME) :].partition("/")
    if bucket in ("", ".", "..") or key == "" or key.endswith("/"):
        return None
    if any(segment in (".", "..") for segment in key.split("/")):
        return None
    return bucket, key


def stage_root(environ: Mapping[str, str] = os.environ) -> str:
    """`$ORCA_LOG_STAGE`, else `$TMPDIR/orca-logs`, else `/tmp/orca-logs` (docs/behaviour.md §4.3); an empty variable
    is unset."""
    stage = environ.get("ORCA_LOG_STAGE", "")
    if stage:
        return stage
    return os.path.join(environ.get("TMPDIR", "") or "/tmp", "orca-logs")


def stage_of(location: str) -> str:
    """The staging file of an object-storage location: `<root>/BUCKET/KEY` (docs/behaviour.md §4.3).

    Raises ValueError for a location `parse_location` refuses: the command line rejects those before any sink is
    made (docs/behaviour.md §5.1).
    """
    parsed = parse_location(location)
    if parsed is None:
        raise ValueError(f"not an s3://BUCKET/KEY location: {location!r}")
    bucket, key = parsed
    return os.path.join(stage_root(), bucket, *key.split("/"))


def upload_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """`ORCA_SAMPLE_UPLOAD_SECONDS`; anything but a positive finite number is the default, 30 (docs/behaviour.md
    §4.3)."""
    try:
        seconds = float(environ.get("ORCA_SAMPLE_UPLOAD_SECONDS", ""))
    except ValueError:
        return DEFAULT_UPLOAD_SECONDS
    return seconds if math.isfinite(seconds) and seconds > 0 else DEFAULT_UPLOAD_SECONDS


@dataclass(frozen=True, slots=True)
class FileVersion:
    """What `stat` says of the staging file: a different value means it may hold different lines."""

    inode: int
    size: int
    mtime_ns: int


def _version_of(path: str) -> FileVersion | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return FileVersion(st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class Uploaded:
    """What the object holds after our last upload: the first `size` bytes of the staging file `inode`, with the
    `etag` the store gave it."""

    inode: int
    size: int
    etag: str


class Span:
    """Bytes `start` to `end` of an open file, read in bounded pieces with `pread`: an upload's body that never
    holds the file in memory. `seek` and `tell` let the signer hash it and the HTTP client resend it."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        self._fd, self._start, self._end, self._at = fd, start, end, start

    def __len__(self) -> int:
        return self._end - self._start

    def read(self, size: int = -1) -> bytes:
        wanted = self._end - self._at if size < 0 else min(size, self._end - self._at)
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


READ_BYTES = 64 * 1024


def whole_lines_end(fd: int, size: int) -> int:
    """The offset just past the file's last newline (0 without one), found by reading back from `size`: a line being
    appended while we upload is left for the next upload."""
    return line_start_before(lambda offset, length: os.pread(fd, length, offset), size, READ_BYTES)


class Uploader(threading.Thread):
    """Brings the object level with the staging file when the file changed since the last successful upload; one
    message per run of failures (docs/behaviour.md §4.5).

    Below `MIN_PART_BYTES` the file's whole lines are uploaded in one request. From there on, when the file is the
    one last uploaded and the object is still what that upload left (its ETag and size), only the new lines are
    sent: a multipart upload whose first part is the object itself, copied inside the store, and whose last part is
    the new tail, so each upload costs what was appended since the last one, not the whole file. Anything else (a
    restart, another writer, `--keep` rewriting the file, an upload that failed halfway) uploads the whole file
    again."""

    def __init__(self, location: str, bucket: str, key: str, stage: str, every_seconds: float) -> None:
        super().__init__(name="orca-sample-s3-upload", daemon=True)
        self._location, self._bucket, self._key, self._stage = location, bucket, key, stage
        self._every_seconds = every_seconds
        self._stop_requested = threading.Event()
        self._client: S3Client | None = None
        self._version: FileVersion | None = None
        self._uploaded: Uploaded | None = None
        self._report = FailureReport()

    def stop(self) -> None:
        self._stop_requested.set()

    def run(self) -> None:
        # Import the AWS library and find credentials now, beside the sampling, so the final upload at close has
        # only the upload itself to do within its 5 s.
        self._connect()
        while not self._stop_requested.wait(self._every_seconds):
            self.upload_if_changed()
        self.upload_if_changed()

    def _connect(self) -> S3Client | None:
        if self._client is None:
            try:
                self._client = S3Client.from_environment()
            except Exception as error:
                self._failed(error)
        return self._client

    def upload_if_changed(self) -> None:
        version = _version_of(self._stage)
        if version is None or version == self._version:
            return
        client = self._connect()
        if client is None:
            return
        try:
            with open(self._stage, "rb") as staged:
                self._uploaded = self._upload(client, staged.fileno())
        except Exception as error:
            self._failed(error)
            return
        # The version read before the upload: a line appended meanwhile makes the next round upload again.
        self._version = version
        self._report.worked()

    def _upload(self, client: S3Client, fd: int) -> Uploaded:
        inode = os.fstat(fd).st_ino
        end = whole_lines_end(fd, os.fstat(fd).st_size)
        last = self._uploaded
        if last is not None and last.inode == inode:
            if last.size == end:
                return last  # the file changed, but holds no new whole line
            if MIN_PART_BYTES <= last.size < end and client.head(self._bucket, self._key) == (last.etag, last.size):
                etag = client.append(self._bucket, self._key, last.etag, last.size, Span(fd, last.size, end))
                if etag is not None:
                    return Uploaded(inode, end, etag)
        return Uploaded(inode, end, client.put(self._bucket, self._key, Span(fd, 0, end)))

    def _failed(self, error: BaseException | str) -> None:
        reason = str(error) if isinstance(error, str | S3Error) else reason_of(error)
        self._report.failed(f"cannot upload {self._stage} to {self._location}: {reason}")

    def gave_up(self) -> None:
        """close() stopped waiting: the last lines may not be in the object, which is a failure to tell (once)."""
        self._failed(f"the final upload did not finish within {FINAL_UPLOAD_SECONDS:g} s")


# S3's smallest part but the last: the copied object must be at least this big to be a part of its own.
MIN_PART_BYTES = 5 * 1024 * 1024
NDJSON = "application/x-ndjson"


class S3Error(Exception):
    """The store refused a request: its error code (NoSuchBucket, AccessDenied, ...) and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.status, self.code = status, code


# The store says the object is no longer what the copy expected: upload the whole file instead.
_OBJECT_CHANGED = frozenset({"PreconditionFailed", "InvalidRange", "NoSuchKey", "InvalidRequest"})


def object_url(endpoint: str | None, region: str, bucket: str, key: str) -> str:
    """Where an object is. A configured endpoint (an S3-compatible store) is addressed by path, which they all
    accept; AWS by the bucket's own host name, or by path for a bucket name a host name cannot carry (a dot would
    not match the TLS certificate).

    >>> object_url("http://127.0.0.1:9000/", "us-east-1", "logs", "a b/c.jsonl")
    'http://127.0.0.1:9000/logs/a%20b/c.jsonl'
    >>> object_url(None, "eu-west-1", "logs", "p/7.jsonl")
    'https://logs.s3.eu-west-1.amazonaws.com/p/7.jsonl'
    >>> object_url(None, "cn-north-1", "my.logs", "k")
    'https://s3.cn-north-1.amazonaws.com.cn/my.logs/k'
    """
    from urllib.parse import quote

    path = quote(key, safe="/~")
    if endpoint:
        return f"{endpoint.rstrip('/')}/{quote(bucket, safe='')}/{path}"
    domain = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    if bucket.replace("-", "").isalnum() and bucket.islower() and "--" not in bucket:
        return f"https://{bucket}.s3.{region}.{domain}/{path}"
    return f"https://s3.{region}.{domain}/{bucket}/{path}"


def _error_of(status: int, body: bytes) -> S3Error:
    code, message = f"HTTP {status}", ""
    if body:
        from xml.etree import ElementTree

        try:
            for element in ElementTree.fromstring(body).iter():
                tag = element.tag.rpartition("}")[2]
                if tag == "Code" and element.text:
                    code = element.text
                elif tag == "Message" and element.text:
                    message = element.text
        except ElementTree.ParseError:
            pass
    return S3Error(status, code, message)


def _xml_text(body: bytes, name: str) -> str:
    from xml.etree import ElementTree

    root = ElementTree.fromstring(body)
    if root.tag.rpartition("}")[2] == "Error":
        raise _error_of(200, body)
    for element in root.iter():
        if element.tag.rpartition("}")[2] == name and element.text:
            return element.text
    raise S3Error(0, "MalformedResponse", f"no {name} in the store's answer")


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: Mapping[str, str]
    body: bytes


class S3Client:
    """The few S3 requests the uploader makes, through botocore's own pieces: its credential chain, its SigV4
    signer and its HTTP session (certificate bundle, proxies from the environment, timeouts), as a boto3 client
    would make them.

    A full client also loads the description of every S3 operation and every AWS endpoint, about as much memory as
    the rest of the sampler; this needs none of it. The endpoint settings are botocore's too (`AWS_ENDPOINT_URL_S3`,
    `AWS_ENDPOINT_URL`, the profile's `endpoint_url`)."""

    def __init__(self, credentials: Any, endpoint: str | None, region: str, verify: str | bool) -> None:
        self._credentials, self._endpoint, self._region, self._verify = credentials, endpoint, region, verify
        self._http: Any = None

    @classmethod
    def from_environment(cls) -> S3Client:
        _quiet("botocore", "urllib3")
        import botocore.session
        from botocore.configprovider import ConfiguredEndpointProvider

        session = botocore.session.Session()
        credentials = session.get_credentials()
        if credentials is None:
            raise S3Error(0, "NoCredentials", "no AWS credentials found (environment, profile or instance role)")
        endpoint: str | None = None
        if str(session.get_config_variable("ignore_configured_endpoint_urls")).lower() != "true":
            endpoint = ConfiguredEndpointProvider(
                full_config=session.full_config, scoped_config=session.get_scoped_config(), client_name="s3"
            ).provide()
        region = session.get_config_variable("region") or "us-east-1"
        return cls(credentials, endpoint, region, session.get_config_variable("ca_bundle") or True)

    def _send(self, request: Any) -> Any:
        from botocore.exceptions import ConnectionError as NoConnection
        from botocore.exceptions import HTTPClientError
        from botocore.httpsession import URLLib3Session
        from botocore.utils import get_environ_proxies

        if self._http is None:
            self._http = URLLib3Session(
                verify=self._verify,
                proxies=get_environ_proxies(request.url),
                timeout=(CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS),
                max_pool_connections=1,
            )
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                return self._http.send(request.prepare())
            except (NoConnection, HTTPClientError):
                # A kept-alive connection the store closed meanwhile, a timeout, a blip: once more, from the start.
                if attempt == MAX_ATTEMPTS:
                    raise
                if isinstance(request.data, Span):
                    request.data.seek(0)
        raise AssertionError("unreachable")

    def _request(
        self,
        method: str,
        bucket: str,
        key: str,
        query: str = "",
        headers: Mapping[str, str] | None = None,
        body: Span | bytes = b"",
    ) -> Answer:
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest

        for _ in range(2):
            url = object_url(self._endpoint, self._region, bucket, key) + (f"?{query}" if query else "")
            request = AWSRequest(method=method, url=url, headers=dict(headers or {}), data=body)
            if isinstance(body, Span):
                body.seek(0)
            S3SigV4Auth(self._credentials.get_frozen_credentials(), "s3", self._region).add_auth(request)
            if isinstance(body, Span):
                body.seek(0)
            response = self._send(request)
            answer = Answer(response.status_code, response.headers, response.content)
            # AWS answers a request to the wrong region with the bucket's region: ask there (once).
            moved = answer.headers.get("x-amz-bucket-region")
            if answer.status not in (301, 307, 400) or not moved or moved == self._region or self._endpoint:
                break
            self._region = moved
        if answer.status >= 300:
            raise _error_of(answer.status, answer.body)
        return answer

    def head(self, bucket: str, key: str) -> tuple[str, int] | None:
        """The object's ETag and size, or None when there is none."""
        try:
            answer = self._request("HEAD", bucket, key)
        except S3Error as error:
            if error.status == 404:
                return None
            raise
        return answer.headers.get("ETag", ""), int(answer.headers.get("Content-Length", "-1"))

    def put(self, bucket: str, key: str, body: Span) -> str:
        """Uploads the object in one request; its ETag."""
        return self._request("PUT", bucket, key, headers={"Content-Type": NDJSON}, body=body).headers.get("ETag", "")

    def append(self, bucket: str, key: str, etag: str, size: int, tail: Span) -> str | None:
        """Makes the object its first `size` bytes (which must still have `etag`) followed by `tail`, without sending
        those bytes again: the new ETag, or None when the object is no longer that (upload it whole then). A
        multipart upload that does not complete is aborted, so none is left behind to be billed."""
        from urllib.parse import quote
        from xml.sax.saxutils import escape

        created = self._request("POST", bucket, key, "uploads", headers={"Content-Type": NDJSON}).body
        upload = quote(_xml_text(created, "UploadId"), safe="")
        try:
            copied = self._request("PUT", bucket, key, f"partNumber=1&uploadId={upload}", headers={
                "x-amz-copy-source": quote(f"{bucket}/{key}", safe="/~"),
                "x-amz-copy-source-range": f"bytes=0-{size - 1}",
                "x-amz-copy-source-if-match": etag,
            }).body
            parts = [_xml_text(copied, "ETag")]
            tail_part = self._request("PUT", bucket, key, f"partNumber=2&uploadId={upload}", body=tail)
            parts.append(tail_part.headers.get("ETag", ""))
            listing = "".join(
                f"<Part><PartNumber>{number}</PartNumber><ETag>{escape(part)}</ETag></Part>"
                for number, part in enumerate(parts, 1)
            )
            done = self._request(
                "POST", bucket, key, f"uploadId={upload}",
                body=f"<CompleteMultipartUpload>{listing}</CompleteMultipartUpload>".encode(),
            ).body
            # S3 may answer 200 and still have failed: the body then is an error.
            return _xml_text(done, "ETag")
        except S3Error as error:
            self._abort(bucket, key, upload)
            if error.code in _OBJECT_CHANGED:
                return None
            raise
        except BaseException:
            self._abort(bucket, key, upload)
            raise

    def _abort(self, bucket: str, key: str, upload: str) -> None:
        with contextlib.suppress(Exception):
            self._request("DELETE", bucket, key, f"uploadId={upload}")
def _quiet(*libraries: str) -> None:
    """Without a handler, Python prints library warnings (urllib3's, botocore's) to stderr: our one message per
    failure is the only thing the sampler should say there. Records still propagate to an embedder's handlers."""
    import logging

    for name in libraries:
        logging.getLogger(name).addHandler(logging.NullHandler())


def make_client() -> Any:
    """A boto3 S3 client with boto3's own credential chain and endpoint settings (`AWS_ENDPOINT_URL`,
    `AWS_ENDPOINT_URL_S3`), with timeouts and retries short enough that a dead endpoint cannot stall the end. For
    reading objects back (the uploader has `S3Client`, which costs far less memory)."""
    _quiet("boto3", "botocore", "s3transfer", "urllib3")
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=READ_TIMEOUT_SECONDS,
        retries={"total_max_attempts": MAX_ATTEMPTS, "mode": "standard"},
    )
    return boto3.session.Session().client("s3", config=config)


class S3Sink:
    """The `LineSink` of an `s3://BUCKET/KEY` location (docs/behaviour.md §4.3): lines are appended to
    `stage_of(location)` through `LineFile` (which applies `--keep`, §4.4, and the one-message rule for writes,
    §4.5); a daemon thread uploads it. A sampler restarted with the same location appends to the staging file it
    finds, so the object keeps every line."""

    def __init__(self, location: str, keep: int | None) -> None:
        parsed = parse_location(location)
        if parsed is None:
            raise ValueError(f"not an s3://BUCKET/KEY location: {location!r}")
        bucket, key = parsed
        self._stage = stage_of(location)
        self._file = LineFile(self._stage, keep)
        self._uploader = Uploader(location, bucket, key, self._stage, upload_seconds())
        self._uploader.start()
        self._closed = False

    @property
    def stage(self) -> str:
        return self._stage

    def write(self, line: bytes) -> None:
        self._file.write(line)

    def close(self) -> None:
        """Stop appending, then one final upload, waited for at most 5 s in all (docs/behaviour.md §2.4), the
        process's exit included. If it takes longer the daemon thread is left to finish or die with the process: the
        exit is never held up."""
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + FINAL_UPLOAD_SECONDS - EXIT_ALLOWANCE_SECONDS
        try:
            self._file.close()
        finally:
            self._uploader.stop()
            self._uploader.join(max(0.0, deadline - time.monotonic()))
            if self._uploader.is_alive():
                self._uploader.gave_up()
