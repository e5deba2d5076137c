"""A command's output on standard output, a piece at a time: once its reader has gone (a closed pipe: `| head`) the
rest is dropped quietly; when standard output cannot take it (a full disk, an I/O error, none open) `Unprinted` is
raised for the command to say once. Either way what is left goes to /dev/null, so that the interpreter's last flush,
as it exits, has nothing to fail on."""

from __future__ import annotations

import contextlib
import os
import sys


class Unprinted(Exception):
    """Standard output could not take what was printed; its text is why, in the system's words."""


def printed(text: str = "", flush: bool = False) -> None:
    """`text` written to standard output, and with `flush` handed on to it."""
    try:
        if sys.stdout is None:  # started with it closed (`>&-`)
            raise Unprinted("it is closed")
        if text:
            sys.stdout.write(text)
        if flush:
            sys.stdout.flush()
    except BrokenPipeError:
        _nowhere()
    except (OSError, ValueError) as error:  # ValueError: closed by the process
        _nowhere()
        raise Unprinted(error.strerror or str(error) if isinstance(error, OSError) else str(error)) from None


def _nowhere() -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
