"""Signals caught from the first moment the sampler's code runs (docs/behaviour.md §2.4, §9.3): each one that
arrives before the sampler's own handling is in place is recorded, then handed to it (a stop for plain sampling, a
signal passed on once COMMAND starts).

`orca sample` and `python -m orca.sample` hold every signal from the first statement of `orca.sample` until
`catch_at_start` has its handlers in place; `sample_main` catches them as it is called, for a program that embeds
it. Only the C-level `_signal` is imported here: `signal` would load `enum` first, time in which a signal kills.
"""

from __future__ import annotations

import _signal
import os
import sys
from types import FrameType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

STOP_SIGNALS = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)
"""What ends plain sampling at once: a runner's stop, Ctrl-C, and the terminal or session that started it going
away."""

NOT_FORWARDED = frozenset(
    getattr(_signal, name)
    for name in (
        # Cannot be caught.
        "SIGKILL", "SIGSTOP",
        # The sampler's own: COMMAND's end and the orphans it reaps.
        "SIGCHLD",
        # The sampler's own faults, as tini keeps them: a fault in the sampler is not COMMAND's.
        "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP", "SIGSYS", "SIGABRT",
        # Raised by the sampler's own writes (a closed pipe, a file over its size limit); Python ignores them.
        "SIGPIPE", "SIGXFSZ",
        # Job control stops the sampler as it stops any process; at a terminal they reach COMMAND through its
        # process group. Caught, a background sampler's Ctrl-Z would leave the shell waiting for it.
        "SIGTSTP", "SIGTTIN", "SIGTTOU",
    )
    if hasattr(_signal, name)
)
"""The signals that `orca sample -- COMMAND` does not pass on (docs/behaviour.md §9.3)."""


def _valid() -> tuple[int, ...]:
    valid = getattr(_signal, "valid_signals", None)
    numbers = valid() if valid is not None else range(1, getattr(_signal, "NSIG", 32))
    return tuple(sorted(int(signum) for signum in numbers))


FORWARDED = tuple(signum for signum in _valid() if signum not in NOT_FORWARDED)
"""Every other signal a process can catch, the real-time ones included (glibc keeps 32 and 33 for itself)."""


def not_ignored(signums: tuple[int, ...]) -> tuple[int, ...]:
    """Those of `signums` not ignored now. One ignored when the sampler started (`nohup`, `trap '' HUP`, the SIGINT
    of a shell's background job) is left ignored, as shells and `/usr/bin/time` leave it: neither caught nor passed
    on, and still ignored in a COMMAND it starts (docs/behaviour.md §2.4, §9.3)."""
    return tuple(signum for signum in signums if _signal.getsignal(signum) != _signal.SIG_IGN)


def caught_for(argv: list[str]) -> tuple[int, ...]:
    """The signals `<binary> sample ARGS` (`argv`) catches: every one it passes on with `-- COMMAND`, else the stop
    signals."""
    return FORWARDED if "--" in argv[2:] else STOP_SIGNALS


class Caught:
    """The signals that arrived while only this handler was in place, in order."""

    def __init__(self) -> None:
        self.arrived: list[int] = []
        self.previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}
        self.installed = False

    def handler(self, signum: int, frame: FrameType | None) -> None:
        self.arrived.append(signum)

    def install(self, signums: tuple[int, ...]) -> Caught:
        """Catch `signums` (those not ignored now); in a thread other than the main one, nothing is caught."""
        self.installed = True
        try:
            for signum in not_ignored(signums):
                self.previous[signum] = _signal.signal(signum, self.handler)
        except ValueError:
            pass  # not the main thread: signals stay the program's
        return self

    def take(self) -> list[int]:
        """What arrived so far, once: called by the handling that took over, after its handlers are in place."""
        arrived, self.arrived = self.arrived, []
        return arrived

    def restore(self) -> None:
        """The handlers from before `install`."""
        for signum, previous in self.previous.items():
            _signal.signal(signum, previous)
        self.previous.clear()


AT_START = Caught()
"""What `catch_at_start` catches, once installed: the process is `orca sample`, and this stays in place until it
exits. The one process-wide record, as a process's signal handlers are."""


def starting_as_sampler(argv: list[str], orig_argv: list[str]) -> bool:
    """Whether this process is `orca sample ARGS` (the console script) or `python -m orca.sample ARGS` being
    started, from `sys.argv` and `sys.orig_argv` as they are while `orca.sample` is first imported.

    >>> starting_as_sampler(["/venv/bin/orca", "sample", "--out", "x"], [])
    True
    >>> starting_as_sampler(["-m", "--out", "x"], ["python3", "-I", "-m", "orca.sample", "--out", "x"])
    True
    >>> starting_as_sampler(["-m", "x"], ["python3", "-morca.sample", "x"])
    True
    >>> starting_as_sampler(["-m", "metrics", "x"], ["python3", "-m", "orca.sample", "metrics", "x"])
    False
    >>> starting_as_sampler(["-m"], ["python3", "-m", "orca.control"])
    False
    >>> starting_as_sampler(["pipeline", "sample"], ["pipeline", "sample"])
    False
    """
    if argv[:1] != ["-m"]:  # while `python -m` looks for the module, its argv[0] is "-m"
        return len(argv) >= 2 and argv[1] == "sample" and os.path.basename(argv[0]) in ("orca", "orca.exe")
    if argv[1:2] in (["metrics"], ["schema"]):
        return False
    head = orig_argv[: len(orig_argv) - (len(argv) - 1)]
    if len(head) >= 2 and head[-2].startswith("-") and not head[-2].startswith("--") and head[-2].endswith("m"):
        return head[-1] == "orca.sample"  # `-m orca.sample`, `-Im orca.sample`
    last = head[-1] if head else ""
    return last.startswith("-") and "m" in last and last[last.index("m") + 1 :] == "orca.sample"


def catch_at_start(mask: set[int] | None) -> None:
    """In a process started as the sampler, catch its signals now, for good (the process exits with its status);
    then the signal mask `mask` again (`orca.sample` held every signal until now: one that came meanwhile is taken by
    the handler, or does what it would have done). None: the platform has no signal mask, nothing was held."""
    try:
        if not AT_START.installed and starting_as_sampler(getattr(sys, "argv", []), getattr(sys, "orig_argv", [])):
            sampler_argv = ["orca", "sample", *sys.argv[1:]] if sys.argv[:1] == ["-m"] else sys.argv
            AT_START.install(caught_for(sampler_argv))
    finally:
        if mask is not None:
            _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)
