"""`orca sample [FLAGS] -- COMMAND [ARGS...]`: run COMMAND as a child, sample it as `--pid` of it, and exit with its
status (docs/sampling.md). The first line says what ran, the last how it ended (`wait4`'s status and
resource usage of it and what it waited for).

COMMAND keeps the sampler's standard input, output and error. Every signal a process can catch that reaches the
sampler reaches COMMAND once (`relay.py`; but those of `caught.NOT_FORWARDED`), instead of ending sampling, so the
line written when COMMAND ends is still written; one ignored when the sampler started stays ignored, and COMMAND
inherits it ignored (`nohup orca sample -- job`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from orca.sample.parse.errors import reason_of
from orca.sample.shell.cli.caught import FORWARDED, Caught, not_ignored
from orca.sample.shell.cli.relay import Forwarder, Relay, adopts_orphans
from orca.sample.shell.cli.spawn import spawn
from orca.sample.shell.report import say

TYPE_CHECKING = False
if TYPE_CHECKING:
    # Loaded once COMMAND runs: the line's records (msgspec, returns) are no reason for COMMAND to start later.
    from orca.sample.compute.run import CommandEnd
    from orca.sample.shell.machine.early import KernelTexts

RESTORED = tuple(getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name))
"""Ignored by Python, the default again for COMMAND."""
NOT_FOUND = 127
NOT_EXECUTABLE = 126
"""The statuses a shell gives a command it cannot find or cannot run."""
MAX_RSS_UNIT = 1 if sys.platform == "darwin" else 1024
"""`ru_maxrss` is in bytes on macOS, in KiB on Linux and the BSDs."""


def exit_status(returncode: int) -> int:
    """A child's status as a shell reports it: 128 + the signal number when a signal ended it.

    >>> exit_status(3), exit_status(-9)
    (3, 137)
    """
    return 128 - returncode if returncode < 0 else returncode


@contextlib.contextmanager
def _forwarding(
    forwarder: Forwarder, reaps_orphans: bool, on_child: Callable[[], None], caught: Caught | None
) -> Iterator[Iterable[int]]:
    """The signals of `FORWARDED` passed on to COMMAND (those not ignored), with those `caught` recorded before,
    `on_child` called on each SIGCHLD, and orphans reaped (`reaps_orphans`, when this process adopts them) while
    inside (`relay.py`); gives the signal mask COMMAND is to start with."""
    saved = {}
    try:
        # An ignored one stays so: no handler here, so the exec leaves it ignored for COMMAND too (a caught one is
        # reset to the default there).
        for signum in not_ignored(FORWARDED):
            saved[signum] = signal.signal(signum, forwarder.handler)
    except ValueError:
        pass  # not the main thread: signals stay the embedding program's
    for signum in caught.take() if caught is not None else ():
        forwarder.pass_on(signum)  # before COMMAND exists: held until it starts
    try:
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "sigwaitinfo"):
            with Relay(tuple(saved), forwarder, reaps_orphans and adopts_orphans(), on_child).running() as mask:
                yield mask
        else:
            yield signal.pthread_sigmask(signal.SIG_BLOCK, ())
    finally:
        for signum, previous in saved.items():
            signal.signal(signum, previous)


def _inherited_closed() -> list[int]:
    """The descriptors to close for COMMAND, those it would inherit above standard error (descriptors `orca sample`
    was given: it makes none inheritable), so that COMMAND gets the three standard streams only, as `subprocess` runs
    a command."""
    try:
        names = os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd")
    except OSError:
        return []
    actions = []
    for fd in sorted(int(name) for name in names if name.isdigit() and int(name) > 2):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            if os.get_inheritable(fd):
                actions.append(fd)
    return actions


class Command:
    """COMMAND as the sampler's child (`Sampler`'s `RunCommand`): started, then reaped with `wait4`, whose
    resource usage covers it and every descendant it waited for (docs/behaviour.md §9.4)."""

    def __init__(self, argv: list[str], read_before: Callable[[], KernelTexts] | None = None) -> None:
        """`read_before`: the sampler's first readings, taken just before COMMAND is started."""
        self.argv = tuple(argv)
        self.pid = 0
        """Its pid once started; 0 before, or when it could not be."""
        self.end: CommandEnd | None = None
        self.before: KernelTexts | None = None
        """What `read_before` read, once started."""
        self._read_before = read_before
        self._started_ns = 0
        self._ended_ns = 0
        """When it was seen to have ended (`note_end`); 0 before."""

    def start(self, signal_mask: Iterable[int]) -> OSError | None:
        """Start it with `signal_mask` blocked, the first readings taken just before; the error when it cannot be
        started, which then is its end (127 or 126). SIGPIPE and SIGXFSZ, which Python ignores, are the default again
        for it, as `subprocess` leaves them, and so are the C library's own signals (`spawn.py`)."""
        if self._read_before is not None:
            self.before = self._read_before()
        self._started_ns = time.monotonic_ns()
        try:
            self.pid = spawn(list(self.argv), dict(os.environ), _inherited_closed(), signal_mask, RESTORED)
        except OSError as error:
            from orca.sample.compute.run import CommandEnd

            status = NOT_FOUND if error.errno == errno.ENOENT else NOT_EXECUTABLE
            self.end = CommandEnd(returncode=status, error=reason_of(error))
            return error
        return None

    def note_end(self) -> None:
        """Note the moment it ended, if it has, without reaping it (`waitid` with `WNOWAIT`): called on each SIGCHLD
        (`relay.py`), so that its `wall` ends with it however long the sampler takes to reach the reaping."""
        if self._ended_ns or self.end is not None or self.pid <= 0 or not hasattr(os, "waitid"):
            return
        try:
            ended = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped meanwhile
            return
        if ended is not None:
            self._ended_ns = time.monotonic_ns()

    def ended(self) -> CommandEnd | None:
        """How it ended, reaping it if it has (without waiting); None while it runs."""
        return self._reaped(os.WNOHANG)

    def wait(self) -> CommandEnd:
        """How it ended, waiting for its end."""
        end = self._reaped(0)
        assert end is not None  # a blocking wait4 returns once it has ended
        return end

    def _reaped(self, options: int) -> CommandEnd | None:
        if self.end is not None or self.pid <= 0:
            return self.end
        from orca.sample.compute.run import CommandEnd

        try:
            pid, status, usage = os.wait4(self.pid, options)
        except ChildProcessError:  # reaped by someone else (SIGCHLD ignored): its status is lost, as for `Popen`
            self.end = CommandEnd(returncode=0, wall_seconds=self._wall())
            return self.end
        if pid == 0:
            return None
        self.end = CommandEnd(
            returncode=os.waitstatus_to_exitcode(status),
            wall_seconds=self._wall(),
            user_seconds=usage.ru_utime,
            system_seconds=usage.ru_stime,
            max_rss_bytes=usage.ru_maxrss * MAX_RSS_UNIT,
        )
        return self.end

    def _wall(self) -> float:
        """Seconds from its start to its end: when it was seen to end, else now (where SIGCHLD is not watched)."""
        return ((self._ended_ns or time.monotonic_ns()) - self._started_ns) / 1e9


def run_command(
    command: list[str],
    sample: Callable[[Command], None] | None,
    *,
    reaps_orphans: bool = False,
    read_before: Callable[[], KernelTexts] | None = None,
    caught: Caught | None = None,
) -> int:
    """Start `command`, call `sample(it)` (which returns once it has ended and its last line is written, or at once
    after one line when it could not be started; None when sampling is off), wait for it, and return its exit
    status. Never raises. `reaps_orphans`: reap the orphans given to this process meanwhile, when it is pid 1 or a
    child subreaper (a process of its own: an embedding program's other children are its own to reap).
    `read_before`: the sampler's first readings, taken just before `command` starts (`Command.before`). `caught`:
    the signals that arrived before, passed on once it starts."""
    forwarder = Forwarder()
    run = Command(command, read_before)
    with _forwarding(forwarder, reaps_orphans, run.note_end, caught) as signal_mask:
        error = run.start(signal_mask)
        if error is not None:
            say(f"cannot run {command[0]!r}: {reason_of(error)}")
        else:
            forwarder.started(run.pid)
            run.note_end()  # one that ended before its pid was known here: its SIGCHLD was taken already
        if sample is not None:
            try:
                sample(run)
            except (Exception, KeyboardInterrupt) as broken:
                # Sampling broke: the command goes on, and its status is still the one returned.
                say(f"stopped: {type(broken).__name__}: {' '.join(str(broken).split())}")
        end = run.end if error is not None else run.wait()
        forwarder.reaped()
        assert end is not None
        return exit_status(end.returncode)
