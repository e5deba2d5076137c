"""`--out`: standard output (docs/behaviour.md §4.1), object storage (§4.3) or a file (§4.2). Every kind is a
`LineSink`."""

from __future__ import annotations

import errno
import sys

from orca.sample.line_format import PREFIX
from orca.sample.parse.errors import reason_of
from orca.sample.shell.out.sink import S3_SCHEME, STDOUT, LineSink
from orca.sample.shell.report import FailureReport
from orca.sample.shell.stdio import NonBlockingWriter

_PREFIX = PREFIX.encode()
FINISH_SECONDS = 0.2
"""At the end, how long the rest of a line standard output took only part of may wait for room: well inside the
half second in which a signal ends the sampler."""


class StdoutSink:
    """Each line prefixed `PREFIX`, written at once with nothing left in a buffer, and never waiting on the reader:
    a line there is no room for is dropped with one message (docs/behaviour.md §4.5), as is every line while
    standard output is closed or broken. The run's own standard output is left exactly as it was."""

    def __init__(self) -> None:
        self._writer: NonBlockingWriter | None = None
        self._report = FailureReport()

    def write(self, line: bytes) -> None:
        data = _PREFIX + line + b"\n"
        try:
            self._write(data)
        except Exception as error:  # an embedding program's stand-in may raise anything
            self._report.failed(f"cannot write to standard output: {reason_of(error)}")
            return
        self._report.worked()

    def _write(self, data: bytes) -> None:
        stream = sys.stdout
        if stream is None:
            raise OSError(errno.EBADF, "it is closed")  # closed when the sampler started
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            # An embedding program's stand-in, without a descriptor.
            stream.write(data.decode())
            stream.flush()
            return
        writer = self._writer
        if writer is None or writer.fd != fd:
            if writer is not None:
                writer.close()
            writer = self._writer = NonBlockingWriter(fd)
        writer.write(data)

    def close(self) -> None:
        """Finish a line standard output took only part of, waiting briefly for room."""
        if self._writer is not None:
            self._writer.finish(FINISH_SECONDS)
            self._writer.close()
            self._writer = None


class FileSink:
    """A file `--out` names: a `LineFile` (which reports its own failures) as a `LineSink`."""

    def __init__(self, path: str, keep: int | None) -> None:
        from orca.sample.shell.out.files import LineFile  # only a file output needs it

        self.file = LineFile(path, keep)

    def write(self, line: bytes) -> None:
        self.file.write(line)

    def close(self) -> None:
        self.file.close()


def open_output(location: str, keep: int | None) -> LineSink:
    """The sink for `--out LOCATION`. Opening never fails: a location that cannot be written fails per line."""
    if location == STDOUT:
        return StdoutSink()
    if location.startswith(S3_SCHEME):
        # boto3 is loaded only for object storage (docs/behaviour.md §4.3): a file or stdout sampler never pays
        # for it.
        from orca.sample.shell.out.s3 import S3Sink

        return S3Sink(location, keep)
    return FileSink(location, keep)
