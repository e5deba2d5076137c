"""Lines appended to a file (SPEC 4.2), kept to their last N (4.4), failures reported once in a row (4.5)."""

from __future__ import annotations

import contextlib
import os
import sys

_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
_CHUNK = 1 << 16


def append_line(path: str, line: str) -> None:
    """Append `line` and a newline with one `write` on an O_APPEND descriptor, so a reader never sees half a line.

    Missing parent directories are created. Raises OSError when the line could not be written whole."""
    data = (line + "\n").encode()
    try:
        fd = os.open(path, _APPEND_FLAGS, 0o644)
    except FileNotFoundError:
        # Only now create the parents: the usual line costs one open, and a path under a regular file keeps its
        # own reason (ENOTDIR) rather than makedirs' "File exists".
        parent = os.path.dirname(path)
        if not parent:
            raise
        os.makedirs(parent, exist_ok=True)
        fd = os.open(path, _APPEND_FLAGS, 0o644)
    try:
        written = os.write(fd, data)
    finally:
        os.close(fd)
    if written != len(data):
        # A short write to a regular file means the disk filled up mid-line.
        raise OSError(28, f"short write ({written} of {len(data)} bytes)")


def count_lines(path: str) -> int:
    """The newlines in the file at `path` (0 when it does not exist)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return 0
    count = 0
    try:
        while chunk := os.read(fd, _CHUNK):
            count += chunk.count(b"\n")
    finally:
        os.close(fd)
    return count


def _keep_last(path: str, keep: int) -> int:
    """Rewrite the file with its last `keep` lines through a temporary file and os.replace (SPEC 4.4).

    Returns the lines the file holds afterwards."""
    with open(path, "rb") as old:
        lines = old.read().splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines.pop()  # only whole lines survive a rewrite
    if len(lines) < 2 * keep:
        return len(lines)  # someone else shortened the file: nothing to do yet
    directory, name = os.path.split(path)
    temporary = os.path.join(directory, f".{name}.{os.getpid()}.keep")
    try:
        with open(temporary, "wb") as new:
            new.write(b"".join(lines[-keep:]))
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return keep


class LineFile:
    """A file `--out` names, or the staging file of an object-storage location. `write` never raises."""

    def __init__(self, path: str, keep: int | None) -> None:
        self.path = path
        self.keep = keep if keep is not None and keep > 0 else None
        self._lines: int | None = None
        """Lines in the file, counted once and then kept up to date, so --keep never rereads it every line."""
        self._failing = False
        self._keep_failing = False

    def write(self, line: str) -> bool:
        """Append one line; True when it was written. A failure is reported once until a write succeeds again."""
        try:
            if self.keep is not None and self._lines is None:
                self._lines = count_lines(self.path)
            append_line(self.path, line)
        except OSError as error:
            self._report(error)
            return False
        self._failing = False
        if self.keep is not None and self._lines is not None:
            self._lines += 1
            if self._lines >= 2 * self.keep:
                try:
                    self._lines = _keep_last(self.path, self.keep)
                    self._keep_failing = False
                except OSError as error:
                    # The line is in the file; the next line tries the rewrite again, silently until it works.
                    if not self._keep_failing:
                        self._keep_failing = True
                        self._tell(f"cannot keep {self.path} to its last {self.keep} lines: {_reason(error)}")
        return True

    def close(self) -> None:
        """Nothing stays open between lines; here for the LineSink shape."""

    def _report(self, error: OSError) -> None:
        if not self._failing:
            self._failing = True
            self._tell(f"cannot write to {self.path}: {_reason(error)}")

    @staticmethod
    def _tell(message: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            print(f"orca sample: {message}", file=sys.stderr, flush=True)


def _reason(error: OSError) -> str:
    return error.strerror or str(error)
