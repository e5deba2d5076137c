"""Work done in a forked process, its result sent back pickled through a pipe: how a large file's parts
(`parts.py`) and a fleet's files (`many.py`) are read on several cores at once. A worker that cannot be started, or
that fails, costs only time: its caller does the work itself."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
from collections.abc import Callable


class Worker:
    """A forked process doing one piece of work; its result comes back pickled through a pipe."""

    def __init__(self, pid: int, pipe: int) -> None:
        self.pid = pid
        self.pipe: int | None = pipe
        self.reaped = False

    @classmethod
    def started(cls, work: Callable[[], object]) -> Worker | None:
        """The worker doing `work`; None when no process can be made (the caller does the work itself)."""
        try:
            reader, writer = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(reader)
            os.close(writer)
            return None
        if pid == 0:  # the worker: whatever happens, it leaves by `_exit`, never by the caller's code
            status = 1
            try:
                os.close(reader)
                data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                with open(writer, "wb") as pipe:
                    pipe.write(data)
                status = 0
            finally:
                os._exit(status)
        os.close(writer)
        return cls(pid, reader)

    def result(self) -> object | None:
        """The worker's result, once it has ended; None when it failed. The caller checks its shape."""
        if self.pipe is None:
            return None
        with open(self.pipe, "rb") as pipe:
            self.pipe = None
            data = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        self.reaped = True
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        try:
            result: object = pickle.loads(data)  # written by our own fork, above
        except Exception:  # cut short
            return None
        return result

    def stop(self) -> None:
        """Ended and reaped, if it still runs (the caller is leaving early)."""
        if self.pipe is not None:
            os.close(self.pipe)
            self.pipe = None
        if not self.reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.reaped = True
