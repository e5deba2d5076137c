"""`--out`: standard output (SPEC 4.1), object storage (4.3) or a file (4.2). Every kind is a `LineSink`."""

from __future__ import annotations

import contextlib
import os
import sys

from orca.sample.compute.names import PREFIX
from orca.sample.shell.files import LineFile
from orca.sample.shell.sink import LineSink

STDOUT = "-"
S3_SCHEME = "s3://"


class StdoutSink:
    """Each line prefixed `PREFIX`, written with one `os.write` so nothing waits in a buffer (flushed per line).

    A closed pipe drops the line with one message (SPEC 4.5); nothing is left in a buffer for the interpreter to
    fail on at exit."""

    def __init__(self) -> None:
        self._failing = False

    def write(self, line: str) -> None:
        data = (PREFIX + line + "\n").encode()
        try:
            fd = sys.stdout.fileno()
        except (AttributeError, OSError, ValueError):
            fd = -1
        try:
            if fd < 0:
                # An embedding program's stand-in stdout, without a descriptor.
                sys.stdout.write(data.decode())
                sys.stdout.flush()
            else:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
        except (OSError, ValueError) as error:
            if not self._failing:
                self._failing = True
                reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
                with contextlib.suppress(OSError, ValueError):
                    print(f"orca sample: cannot write to standard output: {reason}", file=sys.stderr, flush=True)
            return
        self._failing = False

    def close(self) -> None:
        """Every line went out whole with its write."""


class FileSink:
    """A file `--out` names: a `LineFile` (which reports its own failures) as a `LineSink`."""

    def __init__(self, path: str, keep: int | None) -> None:
        self.file = LineFile(path, keep)

    def write(self, line: str) -> None:
        self.file.write(line)

    def close(self) -> None:
        self.file.close()


def open_output(location: str, keep: int | None) -> LineSink:
    """The sink for `--out LOCATION`. Opening never fails: a location that cannot be written fails per line."""
    if location == STDOUT:
        return StdoutSink()
    if location.startswith(S3_SCHEME):
        # boto3 is loaded only for object storage (SPEC 4.3): a file or stdout sampler never pays for it.
        from orca.sample.shell.s3 import S3Sink

        return S3Sink(location, keep)
    return FileSink(location, keep)
