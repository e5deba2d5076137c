"""`--out s3://BUCKET/KEY` (docs/behaviour.md §4.3, §4.4, §4.5, §2.4): lines go to a local staging file, and a
background thread brings the object level with it every `ORCA_SAMPLE_UPLOAD_SECONDS` and once more at the end: the
whole file while the object is under 5 MiB, then only the new lines (docs/s3.md).

boto3 is imported by the uploader thread at its first upload (docs/behaviour.md §4.3): importing this module, or
sampling to a file, never pays its start-up time or memory, and a sampler's first lines are not delayed by it.
"""

from __future__ import annotations

import math
import os
import stat
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from orca.sample.shared.aws import reason
from orca.sample.shared.backwards import line_start_before
from orca.sample.shared.s3_location import parse_location
from orca.sample.shell.out.files import LineFile
from orca.sample.shell.out.s3_parts import PartLimits
from orca.sample.shell.out.s3_store import READ_BYTES, AppendRefused, ObjectStore
from orca.sample.shell.out.staging import StagingFile, open_private_for_reading, stage_root
from orca.sample.shell.report import FailureReport, say

DEFAULT_UPLOAD_SECONDS = 30.0
# close() waits at most this long for the final upload (docs/behaviour.md §2.4).
FINAL_UPLOAD_SECONDS = 5.0
EXIT_ALLOWANCE_SECONDS = 0.5
"""Of those 5 s, what is left for the process to exit after close() stops waiting: the runner waiting for the
sampler's exit waits 5 s at most, connection set-up, the upload and the exit all included."""


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
    """What `lstat` says of the staging file: a different value means it may hold different lines."""

    inode: int
    size: int
    mtime_ns: int


def _version_of(path: str) -> FileVersion | None:
    """None for no file, or for anything but a regular file of this user's: that is never uploaded (the line
    writer says why, once)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        return None
    return FileVersion(st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class Uploaded:
    """What the object holds after our last upload: the first `size` bytes of the staging file the uploader holds
    open, with the `etag` the store gave it."""

    size: int
    etag: str


def whole_lines_end(fd: int, size: int) -> int:
    """The offset just past the file's last newline (0 without one), found by reading back from `size`: a line being
    appended while we upload is left for the next upload."""
    return line_start_before(lambda offset, length: os.pread(fd, length, offset), size, READ_BYTES)


class Uploader(threading.Thread):
    """Brings the object level with the staging file when the file changed since the last successful upload; one
    message per run of failures (docs/behaviour.md §4.5).

    Below `limits.smallest` the file's whole lines are uploaded in one request. From there on, when the file is the
    one last uploaded and the object is still what that upload left (its ETag and size), only the new lines are
    sent: a multipart upload whose first parts are the object itself, copied inside the store, and whose last is
    the new tail, so each upload costs what was appended since the last one, not the whole file. Anything else (a
    restart, another writer, `--keep` rewriting the file, an upload that failed halfway) uploads the whole file
    again, and so does every upload once the store has refused to copy (or to say what the object is): a store
    without the copy, or credentials that may write but not read.

    "The file last uploaded" is the file itself, not its inode number: the uploader keeps it open until the next
    upload. A number can be handed out again once its file is gone (ext4 gives the number of a file `--keep`'s
    rename replaced to the next file made, so two rewrites between uploads can bring it back), but never while the
    file is open, so a staging file with the same device and inode number as the one held is that file."""

    def __init__(
        self,
        location: str,
        bucket: str,
        key: str,
        stage: str,
        every_seconds: float,
        *,
        limits: PartLimits = PartLimits(),  # noqa: B008 - frozen, so one shared default is safe
        root: str | None = None,
    ) -> None:
        super().__init__(name="orca-sample-s3-upload", daemon=True)
        self._location, self._bucket, self._key, self._stage = location, bucket, key, stage
        self._root = stage_root() if root is None else root
        self._every_seconds = every_seconds
        self._limits = limits
        self._stop_requested = threading.Event()
        self._final_done = threading.Event()
        self._store: ObjectStore | None = None
        self._version: FileVersion | None = None
        self._uploaded: Uploaded | None = None
        self._uploaded_from = -1
        """A descriptor of the staging file `_uploaded` is of, kept open so that no other file can get its number."""
        self._copying = True
        """Until the store refuses an append's HEAD or copy: then every upload of this process is whole."""
        self._report = FailureReport()

    def stop(self) -> None:
        self._stop_requested.set()

    def wait_final(self, seconds: float) -> bool:
        """Waits at most `seconds` for the final upload (after `stop`); whether it is done."""
        return self._final_done.wait(seconds)

    def run(self) -> None:
        while not self._stop_requested.wait(self._every_seconds):
            self.upload_if_changed()
        try:
            self.upload_if_changed(tidy=False)
        finally:
            self._final_done.set()
        self.tidy()  # in what is left of the end's time, if any
        self._hold(-1)

    def upload_if_changed(self, tidy: bool = True) -> None:
        """One round: an upload when the staging file changed, then (`tidy`) the uploads left open aborted when
        that is due."""
        version = _version_of(self._stage)
        if version is None or version == self._version:
            return
        store = self._connect()
        if store is None:
            return
        try:
            fd = open_private_for_reading(self._root, self._stage)
        except Exception as error:
            self._failed(error)
            return
        try:
            self._uploaded = self._upload(store, fd)
        except Exception as error:
            os.close(fd)
            self._failed(error)
            return
        self._hold(fd)
        # The version read before the upload: a line appended meanwhile makes the next round upload again.
        self._version = version
        self._report.worked()
        if tidy:
            self.tidy()

    def tidy(self) -> None:
        """Aborts the multipart uploads open for the key, after the first upload that worked and after an abort that
        failed (where nothing has worked yet, the one message is the upload's)."""
        store = self._store
        if store is not None and store.sweep_due and self._uploaded is not None:
            self._sweep(store)

    def _sweep(self, store: ObjectStore) -> None:
        refused = store.sweep()
        if refused is not None:
            say(
                f"{self._location}: the store will not list its unfinished uploads ({refused}): one cut off at an "
                "end stays until the bucket's AbortIncompleteMultipartUpload rule removes it"
            )

    def _connect(self) -> ObjectStore | None:
        """The store's clients, made at the first upload."""
        if self._store is None:
            try:
                self._store = ObjectStore(self._bucket, self._key, self._limits)
            except Exception as error:
                self._failed(error)
        return self._store

    def _upload(self, store: ObjectStore, fd: int) -> Uploaded:
        status = os.fstat(fd)
        end = whole_lines_end(fd, status.st_size)
        last = self._uploaded
        if last is not None and self._uploaded_from >= 0 and os.path.samestat(os.fstat(self._uploaded_from), status):
            if last.size == end:
                return last  # the file changed, but holds no new whole line
            if self._copying and self._limits.smallest <= last.size < end:
                etag = self._append(store, fd, last, end)
                if etag is not None:
                    return Uploaded(end, etag)
        return Uploaded(end, store.put(fd, end))

    def _hold(self, fd: int) -> None:
        """Keep `fd` (the file just uploaded; -1 for none) open in place of the one held before."""
        if self._uploaded_from >= 0:
            os.close(self._uploaded_from)
        self._uploaded_from = fd

    def _append(self, store: ObjectStore, fd: int, last: Uploaded, end: int) -> str | None:
        """The new lines appended to the object: its new ETag, or None when the whole file must go instead."""
        self._sweep(store)  # uploads left open by an earlier round or process: each holds a copy of the object
        try:
            if store.head() != (last.etag, last.size):
                return None
            return store.append(fd, last.size, last.etag, end)
        except AppendRefused as refused:
            self._copying = False
            say(f"{self._location}: the store refused the append ({refused}): every upload sends the whole file "
                "from now on")
            return None

    def _failed(self, error: BaseException | str) -> None:
        why = error if isinstance(error, str) else reason(error)
        self._report.failed(f"cannot upload {self._stage} to {self._location}: {why}")

    def gave_up(self) -> None:
        """close() stopped waiting: the last lines may not be in the object, which is a failure to tell (once)."""
        self._failed(f"the final upload did not finish within {FINAL_UPLOAD_SECONDS:g} s")


class S3Sink:
    """The `LineSink` of an `s3://BUCKET/KEY` location (docs/behaviour.md §4.3): lines are appended to
    `stage_of(location)` through `LineFile` (which applies `--keep`, §4.4, and the one-message rule for writes,
    §4.5), opened as a private staging file; a daemon thread uploads it. A sampler restarted with the same location
    appends to the staging file it finds, so the object keeps every line."""

    def __init__(self, location: str, keep: int | None, release: Callable[[], object] | None = None) -> None:
        parsed = parse_location(location)
        if parsed is None:
            raise ValueError(f"not an s3://BUCKET/KEY location: {location!r}")
        bucket, key = parsed
        root = stage_root()
        self._stage = stage_of(location)
        self._file = LineFile(self._stage, keep, StagingFile(root, self._stage), release)
        self._uploader = Uploader(location, bucket, key, self._stage, upload_seconds(), root=root)
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
        exit is never held up. What is left of the time once it is done goes to aborting uploads left open."""
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + FINAL_UPLOAD_SECONDS - EXIT_ALLOWANCE_SECONDS
        try:
            self._file.close()
        finally:
            self._uploader.stop()
            if self._uploader.wait_final(max(0.0, deadline - time.monotonic())):
                self._uploader.join(max(0.0, deadline - time.monotonic()))
            else:
                self._uploader.gave_up()
