"""The one failure of every reading, `ParseError` (what was read, and why it could not be), and one function
(`reason_of`) that says what an exception means.

A file's parser returns a `returns` `Result` of its record and a `ParseError`, so that reading the file, parsing it
and taking a figure from the record chain (`bind` in `shell/machine/containers.py`), and the failure travels to
where it is decided: said once for a line's kernel files (`compute/snapshot.py` gathers them), a part left out for a
container's. A parser of a process's `stat` or `statm`, which nothing chains and which a line runs for thousands of
processes, returns its record or None."""

from __future__ import annotations

from dataclasses import dataclass

NO_ROOM = "no room: the reader is not keeping up"
"""Why a write that would have had to wait was dropped instead (a pipe or FIFO whose reader has stalled)."""


@dataclass(frozen=True, slots=True)
class ParseError:
    """Why a source could not be read as a snapshot."""

    source: str
    """The file (as it was read: a fixture root's own path), or the source's name: `/proc/stat`, `--dirs`, ..."""
    reason: str

    @classmethod
    def of(cls, source: str, error: BaseException) -> ParseError:
        """The failure of reading `source`, from the error the read gave (a file missing, not permitted, ...)."""
        return cls(source, reason_of(error))

    @classmethod
    def raised(cls, source: str, error: BaseException) -> ParseError:
        """The failure of a reader or parser of `source` that raised, which none should: told with the exception's
        type, so that a bug shows as one (`ZeroDivisionError: division by zero`).

        >>> ParseError.raised("/proc/net/dev", ZeroDivisionError("division by zero")).reason
        'ZeroDivisionError: division by zero'
        """
        text = " ".join(str(error).split())
        return cls(source, f"{type(error).__name__}: {text}" if text else type(error).__name__)


def reason_of(error: BaseException) -> str:
    """What went wrong, in a few words: the system's message for an OSError, else the exception's type and text.

    >>> reason_of(FileNotFoundError(2, "No such file or directory")), reason_of(ValueError("bad  value"))
    ('No such file or directory', 'ValueError: bad value')
    >>> reason_of(BlockingIOError(11, "Resource temporarily unavailable"))
    'no room: the reader is not keeping up'
    """
    if isinstance(error, BlockingIOError):
        return NO_ROOM
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
