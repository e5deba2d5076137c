"""The one failure convention of every reading: a `returns` `Result` whose failure is a `ParseError`, so results from
different files compose with `bind`, and one function (`reason_of`) that says what an exception means."""

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
