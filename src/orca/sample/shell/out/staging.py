"""Staging files: an `s3://` output's lines before they are uploaded (docs/behaviour.md §4.3), and a control-placed
run's output before it is masked (docs/control.md). Both live under one root, by default in the shared `/tmp`,
where another local user may have been first: a directory made there in advance, or a symbolic link planted where a
staging file will be, would otherwise receive the lines (and, for an `s3://` output, have its whole content
uploaded).

So every directory under the root that is made here is made 0700; one found there already must belong to this
user and be writable by nobody else, the root included; and a staging file is opened without following a symbolic
link, must be a regular file of this user's, and is made readable by this user alone. It is read back (to be
uploaded) only under the same conditions. Anything else is refused with an `OSError` naming the path and why, which
the caller reports as it reports any failure to write.

A `--out FILE` the user names is not a staging file: it may be a symbolic link, as docs/sampling.md says.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Mapping

# O_NONBLOCK: a FIFO planted where a staging file goes can neither hold the open (it is then refused: not a regular
# file); a regular file's reads and writes never wait anyway.
_FILE_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NOCTTY | os.O_NONBLOCK


class NotPrivate(OSError):
    """A path under the staging root that another user owns, could write, or has made a symbolic link."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(errno.EPERM, why, path)


def stage_root(environ: Mapping[str, str] = os.environ) -> str:
    """`$ORCA_LOG_STAGE`, else `$TMPDIR/orca-logs`, else `/tmp/orca-logs` (docs/behaviour.md §4.3); an empty variable
    is unset."""
    stage = environ.get("ORCA_LOG_STAGE", "")
    if stage:
        return stage
    return os.path.join(environ.get("TMPDIR", "") or "/tmp", "orca-logs")


def private_directories(root: str, directory: str) -> None:
    """Make `directory` and every directory between it and `root` (`root` itself included) that is missing, each
    0700; refuse (`NotPrivate`) one of them that exists but is a symbolic link, is another user's, or can be written
    by its group or others. What is above `root` (`/tmp` itself) is not this code's to judge."""
    chain = _chain(root, directory)
    os.makedirs(os.path.dirname(chain[0]), exist_ok=True)  # above the root: the user's to arrange
    for current in chain:
        with contextlib.suppress(FileExistsError):
            os.mkdir(current, 0o700)
        _check_directory(current)


def _chain(root: str, directory: str) -> list[str]:
    """`root`, then each directory below it down to `directory`."""
    root = os.path.abspath(root)
    directory = os.path.abspath(directory)
    if directory != root and not directory.startswith(root.rstrip(os.sep) + os.sep):
        raise NotPrivate(directory, "not under the staging root")
    chain = [root]
    for part in [] if directory == root else os.path.relpath(directory, root).split(os.sep):
        chain.append(os.path.join(chain[-1], part))
    return chain


def _check_directory(path: str) -> None:
    status = os.lstat(path)
    if stat.S_ISLNK(status.st_mode):
        raise NotPrivate(path, "a symbolic link where a staging directory should be")
    if not stat.S_ISDIR(status.st_mode):
        raise NotPrivate(path, "not a directory")
    if status.st_uid != os.geteuid():
        raise NotPrivate(path, f"a staging directory owned by another user (uid {status.st_uid})")
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise NotPrivate(path, "a staging directory that other users can write")


def open_private(root: str, path: str) -> int:
    """A descriptor appending to the staging file `path` under `root` (the caller closes it), its directories made as
    `private_directories` makes them: never through a symbolic link, only a regular file of this user's, and no
    longer readable by anyone else (a file left 0644 by an older version is made 0600 before anything is written)."""
    private_directories(root, os.path.dirname(os.path.abspath(path)))
    return _open_checked(path, _FILE_FLAGS)


def open_private_for_reading(root: str, path: str) -> int:
    """A descriptor reading the staging file `path` under `root`, only when every directory from `root` down to it
    and the file itself are as `open_private` leaves them (none is made): what is uploaded is never a file another
    user put or pointed there."""
    for directory in _chain(root, os.path.dirname(os.path.abspath(path))):
        _check_directory(directory)
    return _open_checked(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NOCTTY | os.O_NONBLOCK)


def _open_checked(path: str, flags: int) -> int:
    try:
        descriptor = os.open(path, flags, 0o600)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotPrivate(path, "a symbolic link where a staging file should be") from None
        raise
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotPrivate(path, "not a regular file")
        if status.st_uid != os.geteuid():
            raise NotPrivate(path, f"a staging file owned by another user (uid {status.st_uid})")
        if status.st_mode & 0o077:
            os.fchmod(descriptor, 0o600)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


class StagingFile:
    """One staging file, opened for each line as `open_private` opens it. Its directories are made and checked at
    the first open and again only when the file is found missing: once they are this user's alone, no other user
    can change what is in them."""

    def __init__(self, root: str, path: str) -> None:
        self.root, self.path = root, path
        self._checked = False

    def open(self) -> int:
        if self._checked:
            try:
                return _open_checked(self.path, _FILE_FLAGS & ~os.O_CREAT)
            except FileNotFoundError:
                pass  # removed meanwhile, perhaps with its directories: made and checked again
        descriptor = open_private(self.root, self.path)
        self._checked = True
        return descriptor
