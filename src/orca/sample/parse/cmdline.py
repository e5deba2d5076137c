"""/proc/<pid>/cmdline: NUL-separated arguments."""

from __future__ import annotations


def argv0(data: bytes) -> str:
    """The first argument (up to the first NUL), decoded with replacement; "" for a kernel thread's empty file.

    A process that rewrote its arguments (setproctitle) may leave no NUL at all: then the whole file is argv[0].

    >>> argv0(b"sleep\\x0060\\x00")
    'sleep'
    >>> argv0(b"")
    ''
    >>> argv0(b"caf\\xe9\\x00x\\x00")
    'caf\\ufffd'
    """
    return data.split(b"\0", 1)[0].decode("utf-8", "replace")


def arguments(data: bytes) -> list[str]:
    """Every argument, decoded with replacement; none for a kernel thread's empty file. A process that rewrote its
    arguments (setproctitle) may have joined them with spaces into one.

    >>> arguments(b"python3\\x00-m\\x00pytest\\x00"), arguments(b"")
    (['python3', '-m', 'pytest'], [])
    """
    if not data:
        return []
    return [arg.decode("utf-8", "replace") for arg in data.removesuffix(b"\0").split(b"\0")]
