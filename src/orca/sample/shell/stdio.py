"""The standard descriptors: never handed out again when closed, and written without ever blocking.

Standard output and standard error are shared with the run the sampler watches (a pod's log, a terminal, a log
collector's pipe). Whoever reads them may stall; the sampler must not stall with them, and must not change how the
run's own writes behave. The flags of an open file description (`O_NONBLOCK` among them) are shared by every
process holding it, so they are never touched. The sampler writes through a way of its own instead:
- a pipe, FIFO or terminal: the same pipe or terminal opened again through `/proc/self/fd/N` with `O_NONBLOCK`, a
  description only the sampler holds;
- a socket (systemd's journal): `send` with `MSG_DONTWAIT`, which asks for non-blocking per call;
- a regular file: written as it is (a write to a disk does not wait for a reader);
- anything else, or when that open fails: a write only when `poll` says there is room, at most `PIPE_BUF` bytes at
  a time (what a pipe takes whole once it has room).

This module imports nothing of the sampler, and only modules the interpreter's start has loaded or that are built in
(the type checker's `Protocol` is seen by it alone), so the command can use it before it loads the rest.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class _Way(Protocol):
        def write(self, data: bytes) -> int:
            """The bytes written, 0 when there is no room; raises OSError for anything else."""

        def close(self) -> None: ...

STANDARD_FDS = (0, 1, 2)
PIPE_BUF = getattr(select, "PIPE_BUF", 4096)


def occupy_closed_standard_fds() -> None:
    """Open the null device onto each of descriptors 0, 1 and 2 that is closed.

    A closed standard descriptor is the number the next `open` gets: a pidfd or the output file would become
    "standard output", and a line meant for it would land in that file. Python has already noticed the closed ones
    (`sys.stdout` is None then), which is how the outputs know to report them."""
    for fd in STANDARD_FDS:
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            null = os.open(os.devnull, os.O_RDWR)
        except OSError:
            return
        if null != fd:
            # A lower descriptor was free: this one is closed too and is filled on its own turn.
            try:  # noqa: SIM105 (contextlib is not loaded yet at the start)
                os.dup2(null, fd)
            except OSError:
                pass
            os.close(null)


class NonBlockingWriter:
    """Writes to a descriptor others share, never waiting and never changing the descriptor's flags.

    A line is written whole, or not at all, or (a pipe taking only part of a line longer than `PIPE_BUF`) in part
    with the rest kept in `pending`: that rest is written before anything else, so a reader never sees a cut line
    followed by another."""

    __slots__ = ("_way", "fd", "pending")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._way: _Way | None = None
        self.pending = b""

    def write(self, data: bytes) -> None:
        """Write `data` now. Raises BlockingIOError when there is no room for it (the reader is not keeping up, or
        the previous line's rest is still waiting), OSError when the descriptor cannot be written at all."""
        if self.pending:
            self.flush()
            if self.pending:
                raise _no_room()
        written = self._some(data)
        if written == 0:
            raise _no_room()
        self.pending = data[written:]

    def flush(self) -> None:
        """Write as much of the pending rest as there is room for."""
        if self.pending:
            self.pending = self.pending[self._some(self.pending) :]

    def finish(self, seconds: float) -> None:
        """Wait up to `seconds` for room for the pending rest (the end of sampling); never raises."""
        deadline = time.monotonic() + seconds
        try:
            self.flush()
            while self.pending and (left := deadline - time.monotonic()) > 0:
                poller = select.poll()
                poller.register(self.fd, select.POLLOUT)
                poller.poll(left * 1000)
                self.flush()
        except (OSError, ValueError):
            return

    def close(self) -> None:
        """Close the sampler's own description, if it opened one (the shared descriptor stays open)."""
        if self._way is not None:
            self._way.close()
            self._way = None

    def _some(self, data: bytes) -> int:
        if self._way is None:
            self._way = _way_for(self.fd)
        return self._way.write(data)


def _way_for(fd: int) -> _Way:
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return _Direct(fd)
    if stat.S_ISSOCK(mode):
        try:
            return _Socket(fd)
        except OSError:
            return _Polled(fd)
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        try:
            own = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
        except OSError:
            pass  # no /proc, or a pipe whose reader is gone: polling says so at the write
        else:
            return _Own(own)
    return _Polled(fd)


class _Direct:
    """A regular file: a write does not wait for anyone."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> int:
        return os.write(self._fd, data)

    def close(self) -> None:
        """The descriptor is shared: it stays open."""


class _Own:
    """A non-blocking description of the same pipe or terminal, held by the sampler alone."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> int:
        try:
            return os.write(self._fd, data)
        except BlockingIOError:
            return 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class _Socket:
    """A socket: `send` with MSG_DONTWAIT, on a duplicate so closing it leaves the shared descriptor open."""

    __slots__ = ("_connection", "_flags")

    def __init__(self, fd: int) -> None:
        import socket

        self._flags = socket.MSG_DONTWAIT
        duplicate = os.dup(fd)
        try:
            self._connection = socket.socket(fileno=duplicate)
        except OSError:
            os.close(duplicate)
            raise

    def write(self, data: bytes) -> int:
        try:
            return self._connection.send(data, self._flags)
        except BlockingIOError:
            return 0

    def close(self) -> None:
        self._connection.close()


class _Polled:
    """Writes only what `poll` says there is room for, a `PIPE_BUF` at a time."""

    __slots__ = ("_fd", "_poller")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._poller = select.poll()
        self._poller.register(fd, select.POLLOUT)

    def write(self, data: bytes) -> int:
        written = 0
        try:
            while written < len(data) and self._poller.poll(0):
                # Room, or an error (a pipe whose reader is gone): the write then raises it.
                written += os.write(self._fd, data[written : written + PIPE_BUF])
        except BlockingIOError:
            pass
        return written

    def close(self) -> None:
        """The descriptor is shared: it stays open."""


def _no_room() -> BlockingIOError:
    # Loaded here, not when this module is: the command writes nothing before its baseline readings.
    from orca.sample.parse.errors import NO_ROOM

    return BlockingIOError(errno.EAGAIN, NO_ROOM)
