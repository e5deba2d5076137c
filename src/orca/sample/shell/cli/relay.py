"""While COMMAND runs (docs/behaviour.md §9.3, §9.5): each signal passed on (`caught.FORWARDED`) that reaches
`orca sample` reaches COMMAND once, and, when `orca sample` is pid 1 or a child subreaper, the orphans given to it
are reaped.

Where a signal came from decides whether to pass it on, and Python's handlers are not told. At a terminal the kernel
sends Ctrl-C's SIGINT to the whole foreground process group, COMMAND included: passed on as well, it would reach
COMMAND twice (a program that cleans up on the first and gives up on the second would lose its clean-up). A signal a
process sends to `orca sample` (`kill -INT PID`, a runner's SIGTERM) reaches COMMAND only if passed on. `sigwaitinfo`
tells them apart (its `si_code`), so while COMMAND runs the signals are blocked in the main thread, and so in every
thread started from then on, and one thread of this module's takes them; COMMAND starts with the mask `orca sample`
was started with. A thread the embedding program started earlier does not block them: a signal the kernel gives it
runs the handler `wrap` installs, which passes every one on, as where there is no `sigwaitinfo` (macOS).

SIGCHLD is taken by the same thread, which notes the moment COMMAND ends (its `wall` is its own, however long the
sampler takes to read its last line). Orphans are given to the nearest child subreaper or to the pid namespace's init;
when that is `orca sample` (a container's entrypoint), an orphan that ends is reaped as it ends, as tini and
`docker run --init` do, so that no zombie piles up. COMMAND is never reaped here: its status and resource usage are
`Command`'s to take.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

SI_KERNEL = 0x80
"""`si_code` of a signal the kernel sent (Linux's include/uapi/asm-generic/siginfo.h): a terminal's, to its
foreground process group; a process's `kill` is `SI_USER` (0), `tkill` `SI_TKILL`, `sigqueue` `SI_QUEUE`."""
PR_GET_CHILD_SUBREAPER = 37
WAKE = signal.SIGCHLD
"""What the thread waits for besides the signals passed on: a child's end, and the main thread's word to stop."""


def reached_command_too(signum: int, code: int, command_pid: int) -> bool:
    """Whether the kernel sent the signal `orca sample` was given to COMMAND as well, in the same stroke: it sends
    its own (`SI_KERNEL`) to a process group (a terminal's Ctrl-C, its hangup once the session's leader is gone), and
    COMMAND is in `orca sample`'s unless it left it. The exception is the SIGHUP a terminal's hangup sends to the
    session's leader alone."""
    if code != SI_KERNEL:
        return False
    if signum == signal.SIGHUP and os.getsid(0) == os.getpid():
        return False
    try:
        return os.getpgid(command_pid) == os.getpgrp()
    except OSError:
        return False  # gone: passing it on changes nothing


def adopts_orphans() -> bool:
    """Whether orphans are given to this process: it is its pid namespace's init, or a child subreaper (prctl(2))."""
    if os.getpid() == 1:
        return True
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    flag = ctypes.c_int(0)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value != 0
    except (OSError, AttributeError):
        return False


def reap_orphans(command_pid: int) -> None:
    """Reap every child that has ended, COMMAND (`command_pid`; 0 or -1 for none) aside. Each is looked at without
    being reaped first (`WNOWAIT`): while COMMAND has ended and is not reaped yet, it is the one found, and the others
    wait for the next round."""
    while True:
        try:
            ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if ended is None or ended.si_pid == command_pid:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(ended.si_pid, os.WNOHANG)


class Forwarder:
    """Passes signals on to COMMAND: one that arrives before COMMAND exists is passed on once it starts, and none
    once it has been reaped (its pid could be another process's by then). Called from the relay's thread and, as a
    handler, from the main thread."""

    def __init__(self) -> None:
        self.pid = 0
        """COMMAND's pid once started; -1 once reaped."""
        self._pending: list[int] = []
        self._lock = threading.RLock()  # reentrant: the handler can run in the main thread inside `started`

    def pass_on(self, signum: int) -> None:
        with self._lock:
            if self.pid > 0:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signum)
            elif self.pid == 0:
                self._pending.append(signum)

    def handler(self, signum: int, frame: FrameType | None) -> None:
        self.pass_on(signum)

    def started(self, pid: int) -> None:
        with self._lock:
            self.pid = pid
            for signum in self._pending:
                self.pass_on(signum)
            self._pending.clear()

    def reaped(self) -> None:
        with self._lock:
            self.pid = -1


class Relay:
    """The thread that takes the signals passed on (`signums`) and SIGCHLD while COMMAND runs, passing the signals on
    through `forwarder` unless COMMAND had them already, calling `on_child` on each SIGCHLD (COMMAND's end is noted
    as it happens), and reaping orphans when it `reaps`."""

    def __init__(
        self, signums: tuple[int, ...], forwarder: Forwarder, reaps: bool, on_child: Callable[[], None]
    ) -> None:
        self._waited = {*signums, WAKE}
        self._forwarder = forwarder
        self._reaps = reaps
        self._on_child = on_child
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="orca-sample-signals", daemon=True)

    def _run(self) -> None:
        while True:
            info = signal.sigwaitinfo(self._waited)
            command = self._forwarder.pid
            if info.si_signo == WAKE:
                self._on_child()
                if self._reaps:
                    reap_orphans(command)
                if self._stopping:
                    return
            elif not (command > 0 and reached_command_too(info.si_signo, info.si_code, command)):
                self._forwarder.pass_on(info.si_signo)

    @contextlib.contextmanager
    def running(self) -> Iterator[set[int]]:
        """The thread, running inside; the signal mask from before, for COMMAND to start with. The signals are
        blocked first, so that none slips past the thread."""
        before = signal.pthread_sigmask(signal.SIG_BLOCK, self._waited)
        try:
            self._thread.start()
            try:
                yield set(before)
            finally:
                self._stopping = True
                signal.pthread_kill(self._thread.ident or 0, WAKE)
                self._thread.join()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
