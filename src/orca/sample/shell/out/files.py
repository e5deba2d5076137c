"""Lines appended to a file (docs/behaviour.md §4.2), kept to their last N (§4.4), failures reported once in a row
(§4.5).

A line reaches the file whole or not at all: a write the disk cut short is taken back (the file truncated to its
length before it), so a reader never sees a broken line with more lines after it. The file is opened without
waiting (`O_NONBLOCK`): a FIFO nobody reads, or whose reader has stalled, drops the line instead of holding up the
sampler. Trimming to the last N lines streams the file, so it takes the same memory whatever the file's size.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from orca.sample.parse.errors import NO_ROOM, reason_of
from orca.sample.shell.report import FailureReport

if TYPE_CHECKING:
    from orca.sample.shell.out.staging import StagingFile

_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)
T = TypeVar("T")
_CHUNK = 1 << 16


def _open_for_append(path: str) -> int:
    try:
        return os.open(path, _APPEND_FLAGS, 0o644)
    except FileNotFoundError:
        # Only now create the parents: the usual line costs one open, and a path under a regular file keeps its
        # own reason (ENOTDIR) rather than makedirs' "File exists".
        parent = os.path.dirname(path)
        if not parent:
            raise
        os.makedirs(parent, exist_ok=True)
        return os.open(path, _APPEND_FLAGS, 0o644)


def _write_line(fd: int, data: bytes) -> bytes:
    """Write `data` with one `write`; what a FIFO or device did not take (the rest of a line longer than a pipe
    holds), or b"". A short write to a regular file is taken back and raises OSError."""
    written = os.write(fd, data)
    if written == len(data):
        return b""
    if stat.S_ISREG(os.fstat(fd).st_mode):
        # O_APPEND wrote at the end: the offset is now that end plus what was written.
        os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_CUR) - written)
        raise OSError(errno.ENOSPC, f"short write ({written} of {len(data)} bytes), taken back")
    return data[written:]


def append_line(path: str, line: str) -> None:
    """Append `line` and a newline with one `write` on an O_APPEND descriptor, so a reader never sees half a line.

    Missing parent directories are created. Raises OSError when the line could not be written whole."""
    fd = _open_for_append(path)
    try:
        rest = _write_line(fd, (line + "\n").encode())
    finally:
        os.close(fd)
    if rest:
        raise BlockingIOError(errno.EAGAIN, f"only part of the line was taken ({len(rest)} bytes left)")


def count_lines(path: str) -> int:
    """The newlines in the file at `path` (0 when it does not exist)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return 0
    count = 0
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return 0  # a FIFO or device holds no lines to count (and reading one could take them from its reader)
        while chunk := os.read(fd, _CHUNK):
            count += chunk.count(b"\n")
    finally:
        os.close(fd)
    return count


def _last_lines(fd: int, size: int, keep: int) -> tuple[int, int, int]:
    """`(start, end, lines)`: the file's last `keep` whole lines are its bytes `start:end` (fewer lines when it holds
    fewer). Read backwards a chunk at a time from the end; a last line without its newline is not one of them."""
    end = -1
    newlines = 0
    position = size
    while position > 0:
        low = max(0, position - _CHUNK)
        chunk = os.pread(fd, position - low, low)
        at = len(chunk)
        while (at := chunk.rfind(b"\n", 0, at)) >= 0:
            if end < 0:
                end = low + at + 1
            newlines += 1
            if newlines > keep:
                return low + at + 1, end, keep
        position = low
    return 0, max(end, 0), newlines


def _copy(source: int, start: int, end: int, target: int) -> None:
    while start < end:
        chunk = os.pread(source, min(_CHUNK, end - start), start)
        if not chunk:
            break  # the file got shorter meanwhile: what was there is copied
        view = memoryview(chunk)
        while view:
            view = view[os.write(target, view) :]
        start += len(chunk)


def _keep_last(path: str, keep: int, follow: bool = True) -> int:
    """Make the file its last `keep` lines through a temporary file and a rename (docs/behaviour.md §4.4); the lines
    it holds afterwards.

    A `path` that is a symbolic link stays one: the file it points to is the one rewritten, in its own directory
    (`follow`); a staging file is never reached through a link, and stays its user's alone. The new file has the
    old one's permission bits (and owner, where this process may set it). The temporary file is a new one, never
    a file or link found at its name."""
    target = os.path.realpath(path) if follow else path
    source = os.open(target, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW))
    try:
        old = os.fstat(source)
        if not stat.S_ISREG(old.st_mode):
            return 0  # a FIFO or device is never rewritten
        start, end, lines = _last_lines(source, old.st_size, keep)
        if start == 0:
            return lines  # no more than `keep` whole lines: nothing to drop
        temporary, copy = _new_beside(target)
        try:
            try:
                os.fchmod(copy, stat.S_IMODE(old.st_mode))
                with contextlib.suppress(OSError):
                    os.fchown(copy, old.st_uid, old.st_gid)
                _copy(source, start, end, copy)
            finally:
                os.close(copy)
            os.replace(temporary, target)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return lines
    finally:
        os.close(source)


def _new_beside(target: str) -> tuple[str, int]:
    """A file made for this rewrite beside `target`, 0600, and its descriptor: `O_EXCL` with `O_NOFOLLOW`, so
    whatever another user may have put at a name it tries is neither followed nor written."""
    directory, name = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        temporary = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.keep")
        try:
            return temporary, os.open(temporary, flags, 0o600)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free name for the temporary file", directory)


class LineFile:
    """A file `--out` names, or the staging file of an object-storage location (`staging`, opened privately: see
    `staging.py`). `write` never raises.

    `release`: lets go of the descriptors the sampler keeps between lines. When a line finds every descriptor taken
    (EMFILE, ENFILE), it is called and the file opened again, so no line is lost to them (docs/behaviour.md §4.6)."""

    def __init__(
        self,
        path: str,
        keep: int | None,
        staging: StagingFile | None = None,
        release: Callable[[], object] | None = None,
    ) -> None:
        self.path = path
        self._staging = staging
        self.release = release
        self.keep = keep if keep is not None and keep > 0 else None
        self._lines: int | None = None
        """Lines in the file, counted once and then kept up to date, so --keep never rereads it every line."""
        self._pending = b""
        """The rest of a line a FIFO took only part of: written before the next line."""
        self._writing = FailureReport()
        self._keeping = FailureReport()

    def write(self, line: bytes) -> bool:
        """Append one line (without its newline); True when it was written. A failure is reported once until a
        write succeeds again."""
        try:
            if self.keep is not None and self._lines is None:
                self._lines = self._opening(count_lines)
            fd = self._opening(self._open_at)
            try:
                if self._pending:
                    self._pending = _write_line(fd, self._pending)
                    if self._pending:
                        raise BlockingIOError(errno.EAGAIN, NO_ROOM)
                self._pending = _write_line(fd, line + b"\n")
            finally:
                os.close(fd)
        except OSError as error:
            self._writing.failed(f"cannot write to {self.path}: {_why(error)}")
            return False
        self._writing.worked()
        if self.keep is not None and self._lines is not None:
            self._lines += 1
            if self._lines >= 2 * self.keep:
                try:
                    self._lines = _keep_last(self.path, self.keep, follow=self._staging is None)
                    self._keeping.worked()
                except OSError as error:
                    # The line is in the file; the next line tries the rewrite again, silently until it works.
                    self._keeping.failed(f"cannot keep {self.path} to its last {self.keep} lines: {_why(error)}")
        return True

    def _open_at(self, path: str) -> int:
        return _open_for_append(path) if self._staging is None else self._staging.open()

    def _opening(self, use: Callable[[str], T]) -> T:
        """`use(self.path)`, again after `release` when it found no descriptor free."""
        try:
            return use(self.path)
        except OSError as error:
            if error.errno not in _OUT_OF_DESCRIPTORS or self.release is None:
                raise
        self.release()
        return use(self.path)

    def close(self) -> None:
        """One last try at the rest of a line a FIFO took only part of; nothing else stays open between lines."""
        if self._pending:
            with contextlib.suppress(OSError):
                fd = self._open_at(self.path)
                try:
                    _write_line(fd, self._pending)
                finally:
                    os.close(fd)
            self._pending = b""


def _why(error: OSError) -> str:
    if error.errno == errno.ENXIO:
        return "nothing is reading it"  # a FIFO without a reader, opened without waiting for one
    return reason_of(error)
