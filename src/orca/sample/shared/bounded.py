"""The one way the shell reads a file's content: whole, bounded in size, and never blocking.

Every file the sampler reads (kernel files, a process's files, cgroup files, a container's config) is small. A path
can still lead anywhere: a fixture tree or a hostile mount may put a FIFO there (an open or a read of it would wait
for good), a device (`/dev/zero` streams forever), or a huge file. So a file is read only when it is a regular file,
and never past a bound; anything else is an `OSError` saying why, which the caller turns into a missing reading.

The kernel's own procfs is the one exception: a process's files there (`/proc/<pid>/stat`, `statm`, `comm`,
`cmdline`, `children`) are regular files by construction, and the per-process reads are the sampler's hot loop,
so under a root known to be the kernel's procfs (`is_kernel_procfs`) they are opened without the check.
"""

from __future__ import annotations

import errno
import os
import stat

LIMIT = 16 << 20
"""No file read here comes near this; a bound so a fixture or a strange mount cannot exhaust memory."""
_CHUNK = 1 << 16
_SHORTER_MEANS_THE_END = 2048
# O_NONBLOCK: even a FIFO or device swapped in after the check can neither block the open nor the read.
_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE})
"""An open that failed for want of a descriptor (the process's limit, or the system's) says nothing about the file:
the reading could not be made, which is not the file being gone."""


class NotRegularFile(OSError):
    def __init__(self) -> None:
        super().__init__(errno.EINVAL, "not a regular file")


class TooLarge(OSError):
    def __init__(self, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit} bytes")


def open_regular(path: str) -> tuple[int, int]:
    """A descriptor of the regular file at `path` (the caller closes it) and its size; `OSError` otherwise.

    The path is checked before it is opened, so no device or FIFO is ever opened; the descriptor is checked again,
    for a file swapped in between."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise NotRegularFile()
        descriptor = os.open(path, _FLAGS)
    except ValueError as error:  # a NUL in the path
        raise OSError(errno.EINVAL, str(error)) from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularFile()
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, status.st_size


def read_from(descriptor: int, limit: int = LIMIT, *, up_to: bytes = b"") -> bytes:
    """The content of `descriptor` from offset 0 (`pread`, so a kept descriptor needs no seek).

    Past `limit` bytes: `TooLarge`; or, when `up_to` is given, the first `limit` bytes (only what comes before
    `up_to` is wanted, and the read stops at the first chunk holding it).

    /proc files report size 0, so the file is read until its end rather than trusting fstat. A seq_file read
    returns at most its buffer (a page or more), stopping short of it only at the end or when the next record
    would not fit. The files read here have records under 2 KiB (a diskstats or net/dev line, a child's pid; a
    single_open file's whole text is one record, copied out in full chunks), so a read under 2 KiB is the end, and
    the read that would return nothing is saved. kernfs/sysfs attributes, a process's `cmdline` and regular files
    read short only at the end."""
    chunk = os.pread(descriptor, _CHUNK, 0)
    if len(chunk) < _SHORTER_MEANS_THE_END and len(chunk) <= limit:
        return chunk  # nearly every file read here: one read, nothing to join
    return _after_first(descriptor, chunk, limit, up_to)


def _after_first(descriptor: int, first: bytes, limit: int, up_to: bytes) -> bytes:
    """`read_from` once its first read, `first`, did not reach the end under the limit: the rest read and joined."""
    chunk = first
    chunks = [chunk]
    total = len(chunk)
    while total <= limit and len(chunk) >= _SHORTER_MEANS_THE_END and not (up_to and up_to in chunk):
        chunk = os.pread(descriptor, _CHUNK, total)
        chunks.append(chunk)
        total += len(chunk)
    data = b"".join(chunks)
    if total > limit:
        if not up_to:
            raise TooLarge(limit)
        return data[:limit]
    return data


def read_file(path: str, limit: int = LIMIT, *, up_to: bytes = b"") -> bytes:
    """The content of the regular file at `path` (see `read_from`); `OSError` when it cannot be read."""
    descriptor, _ = open_regular(path)
    try:
        return read_from(descriptor, limit, up_to=up_to)
    finally:
        os.close(descriptor)


def read_or_none(path: str, limit: int = LIMIT, up_to: bytes = b"", trusted: bool = False) -> bytes | None:
    """`read_file`, or None when the file cannot be read: for files whose absence is ordinary (a process that
    exited between two reads). Written out rather than calling `read_file`: it runs for every process a line
    reads. `trusted`: the path is a process's file in the kernel's procfs, a regular file by construction, opened
    without the check (`is_kernel_procfs`).

    Raises the `OSError` when no descriptor was left to open it with (`OUT_OF_DESCRIPTORS`): then nothing is known
    about the file, and a caller must not take it for gone."""
    try:
        descriptor = os.open(path, _FLAGS) if trusted else open_regular(path)[0]
    except OSError as error:
        if error.errno in OUT_OF_DESCRIPTORS:
            raise
        return None
    try:
        first = os.pread(descriptor, _CHUNK, 0)
        if len(first) < _SHORTER_MEANS_THE_END and len(first) <= limit:
            return first  # `read_from`'s first step, inline: nearly every process file is this short
        return _after_first(descriptor, first, limit, up_to)
    except OSError:  # ESRCH: the process exited between the open and the read
        return None
    finally:
        os.close(descriptor)


def is_kernel_procfs(proc: str) -> bool:
    """Whether `proc` is the kernel's procfs as this process sees it: its `self` names this process.

    A fixture tree has no such link (or not to this process's pid); a procfs of another pid namespace does not
    name this pid either: both are read with every file checked."""
    try:
        return os.readlink(os.path.join(proc, "self")) == str(os.getpid())
    except (OSError, ValueError):
        return False


class KeptFiles:
    """Files read every line (kernel files, cgroup files), kept open between lines and read again with `pread`.

    A /proc or cgroup file is generated anew by each read from offset 0, so a kept descriptor reads fresh values
    while the path lookup, open and close are paid once: most of what reading such a file costs. Only regular
    files whose size is 0 (generated by the kernel) are kept, checked when opened; a file on disk (a test's
    fixture) is read through its path every time. A kept descriptor that fails (its cgroup was removed: ENODEV) or
    reads empty is closed and the path opened again. `close()` closes them all."""

    def __init__(self, keep_at_most: int) -> None:
        self._fds: dict[str, int] = {}
        self._keep_at_most = keep_at_most

    def read(self, path: str, limit: int = LIMIT) -> bytes:
        """The whole content of the file at `path`; `OSError` when it is not a regular file or cannot be read."""
        fd = self._fds.get(path)
        if fd is not None:
            try:
                data = os.pread(fd, _CHUNK, 0)  # `read_from`'s first step, inline: it runs for each file every line
                if len(data) >= _SHORTER_MEANS_THE_END or len(data) > limit:
                    data = _after_first(fd, data, limit, b"")
            except OSError:
                data = b""
            if data:
                return data
            self.forget(path)
        fd, size = open_regular(path)
        keep = False
        try:
            data = read_from(fd, limit)
            keep = size == 0 and len(self._fds) < self._keep_at_most
            # Another thread may have kept one for this path meanwhile: then this one is closed.
            keep = keep and self._fds.setdefault(path, fd) == fd
            return data
        finally:
            if not keep:
                os.close(fd)

    def read_each(self, paths: tuple[str, ...], limit: int = LIMIT) -> dict[str, bytes | OSError]:
        """Each of `paths` -> what `read` gives it (to `limit` bytes), or the `OSError` it raises: the kept
        descriptors read in one call, for the files read together every line."""
        texts: dict[str, bytes | OSError] = {}
        fds = self._fds
        for path in paths:
            fd = fds.get(path)
            if fd is not None:
                try:
                    data = os.pread(fd, _CHUNK, 0)
                    if 0 < len(data) < _SHORTER_MEANS_THE_END:
                        texts[path] = data
                        continue
                except OSError:
                    pass
            # Anything but a short read through a kept descriptor: `read` itself, which opens a descriptor that
            # failed or read empty again, and reads on past a first read that may not be the whole file.
            try:
                texts[path] = self.read(path, limit)
            except OSError as error:
                texts[path] = error
        return texts

    def __len__(self) -> int:
        """How many descriptors are kept."""
        return len(self._fds)

    def keep_only(self, prefixes: tuple[str, ...]) -> None:
        """Close every descriptor whose path starts with none of `prefixes` (a container that is gone)."""
        for path in [path for path in self._fds if not path.startswith(prefixes)]:
            self.forget(path)

    def forget(self, path: str) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        for path in list(self._fds):
            self.forget(path)
