"""`--out s3://BUCKET/KEY` (docs/behaviour.md §4.3, §4.4, §4.5, §2.4): lines go to a local staging file, and a
background thread uploads the whole file to the location every `ORCA_SAMPLE_UPLOAD_SECONDS` and once more at the
end.

boto3 is imported only inside the uploader thread (docs/behaviour.md §4.3): importing this module, or sampling to a
file, never pays boto3's start-up time or memory, and even the first line of an `s3://` sampler is not delayed by it.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orca.sample.shell.files import LineFile
from orca.sample.shell.report import FailureReport, reason_of
from orca.sample.shell.sink import S3_SCHEME

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


def _whole_lines(path: str) -> bytes:
    """The staging file up to its last newline: a line being appended while we read is left for the next upload."""
    with open(path, "rb") as staged:
        data = staged.read()
    return data[: data.rfind(b"\n") + 1]


def _service_reason(error: BaseException) -> str:
    # botocore's ClientError carries the service's code (NoSuchBucket, AccessDenied): the most useful reason.
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        details = response.get("Error", {})
        code, message = details.get("Code", ""), details.get("Message", "")
        if code:
            return f"{code}: {message}" if message else str(code)
    return reason_of(error)


class _Uploader(threading.Thread):
    """Uploads the staging file whole when it changed since the last successful upload; one message per run of
    failures (docs/behaviour.md §4.5)."""

    def __init__(self, location: str, bucket: str, key: str, stage: str, every_seconds: float) -> None:
        super().__init__(name="orca-sample-s3-upload", daemon=True)
        self._location, self._bucket, self._key, self._stage = location, bucket, key, stage
        self._every_seconds = every_seconds
        self._stop_requested = threading.Event()
        self._client: Any = None
        self._uploaded: FileVersion | None = None
        self._report = FailureReport()

    def stop(self) -> None:
        self._stop_requested.set()

    def run(self) -> None:
        # Import boto3 and build the client now, beside the sampling, so the final upload at close has only the
        # upload itself to do within its 5 s.
        self._connect()
        while not self._stop_requested.wait(self._every_seconds):
            self._upload_if_changed()
        self._upload_if_changed()

    def _connect(self) -> Any:
        if self._client is None:
            try:
                self._client = _make_client()
            except Exception as error:
                self._failed(error)
        return self._client

    def _upload_if_changed(self) -> None:
        version = _version_of(self._stage)
        if version is None or version == self._uploaded:
            return
        client = self._connect()
        if client is None:
            return
        try:
            body = _whole_lines(self._stage)
            client.put_object(Bucket=self._bucket, Key=self._key, Body=body, ContentType="application/x-ndjson")
        except Exception as error:
            self._failed(error)
            return
        # The version read before the upload: a line appended meanwhile makes the next round upload again.
        self._uploaded = version
        self._report.worked()

    def _failed(self, error: BaseException | str) -> None:
        reason = error if isinstance(error, str) else _service_reason(error)
        self._report.failed(f"cannot upload {self._stage} to {self._location}: {reason}")

    def gave_up(self) -> None:
        """close() stopped waiting: the last lines may not be in the object, which is a failure to tell (once)."""
        self._failed(f"the final upload did not finish within {FINAL_UPLOAD_SECONDS:g} s")


def _make_client() -> Any:
    """An S3 client with boto3's own credential chain and endpoint settings (`AWS_ENDPOINT_URL`,
    `AWS_ENDPOINT_URL_S3`), with timeouts and retries short enough that a dead endpoint cannot stall the end."""
    import logging

    # Without a handler, Python prints library warnings (urllib3's, botocore's) to stderr: our one message per
    # failure is the only thing the sampler should say there. Records still propagate to an embedder's handlers.
    for name in ("boto3", "botocore", "s3transfer", "urllib3"):
        logging.getLogger(name).addHandler(logging.NullHandler())

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
        self._uploader = _Uploader(location, bucket, key, self._stage, upload_seconds())
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
