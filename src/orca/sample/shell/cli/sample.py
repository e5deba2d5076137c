"""`orca sample ARGS` (docs/behaviour.md §1.2, §5): the baseline readings, the flags, then the loop. Whatever
happens, the run it watches goes on.

Light to import: the baseline readings come first (docs/behaviour.md §2.2), so the flags' parser, the readers and the
outputs are loaded after them, while the first line is waited for."""

from __future__ import annotations

import os
import sys

from orca.sample.shell.cli import caught as caught_signals
from orca.sample.shell.machine.early import KernelTexts, read_early
from orca.sample.shell.report import say
from orca.sample.shell.stdio import occupy_closed_standard_fds

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import NoReturn

    from orca.sample.shell.cli.caught import Caught
    from orca.sample.shell.cli.wrap import Command


def _sample(
    options: argparse.Namespace,
    seconds: float,
    ends_process: bool,
    baseline: KernelTexts | None = None,
    signals_forwarded: bool = False,
    command: Command | None = None,
    caught: Caught | None = None,
) -> int:
    """Sample until an end condition or a stop signal: the lines written."""
    import contextlib

    # The handlers first (docs/behaviour.md §2.4): a SIGTERM while the readers load still ends the sampler with
    # status 0, as does one `caught` recorded before.
    from orca.sample.shell.cli.signals import Stop, stopping_on_signals, watching_exit

    # Sampling a COMMAND, the signals go on to it (its handlers are in place) and its end ends sampling.
    signals = (
        contextlib.nullcontext(Stop())
        if signals_forwarded
        else stopping_on_signals(Stop(), then_ignore=ends_process, caught=caught)
    )
    # The open-files limit raised before the readers size their kept descriptors from it (docs/behaviour.md §4.6);
    # a COMMAND, started already, keeps the limit it was given.
    from orca.sample.shared.sysconf import open_files_raised

    with signals as stop, watching_exit(options.pid) as exit_fd, open_files_raised():
        # Imported here: `--help`, a malformed line and --seconds 0 need none of the readers; a start loads them
        # after its baseline readings, during the wait for the first line.
        from orca.sample.shell.cli.env import default_dirs
        from orca.sample.shell.cli.loop import EndConditions, run
        from orca.sample.shell.out.open import open_output
        from orca.sample.shell.sampler import Sampler

        # A COMMAND that could not be started has ended already: its one line is the first. COMMAND's end is
        # written at once, even before the first line is due: its lines cover it from its start.
        over = command is not None and command.pid == 0
        ends = EndConditions(pid=options.pid, until=options.until, count=options.count, exit_fd=exit_fd, over=over,
                             at_once=command is not None)
        sampler = Sampler(
            options.pid or 0,
            options.match,
            options.dirs if options.dirs is not None else default_dirs(),
            options.cgroup,
            options.names,
            baseline=baseline,
            command=command,
        )
        sink = open_output(options.out, options.keep, release=sampler.close)
        try:
            return run(sampler, sink, seconds, ends, sampler.started_ns / 1e9, stop)
        finally:
            sink.close()
            sampler.close()


def _sample_command(
    options: argparse.Namespace, seconds: float, command: list[str], ends_process: bool, caught: Caught
) -> tuple[int, int]:
    """COMMAND run as a child and sampled as `--pid` of it: its exit status and the lines written. The signals
    `caught` recorded before it starts are passed on to it then."""
    from orca.sample.shell.cli.wrap import run_command

    written = 0

    def sample(child: Command) -> None:
        nonlocal written
        options.pid = child.pid or None
        written = _sample(options, seconds, ends_process, child.before, signals_forwarded=True, command=child)

    # The baseline readings just before COMMAND starts: its lines cover it from its first moment (§9.1).
    sampled = seconds > 0
    status = run_command(command, sample if sampled else None, reaps_orphans=ends_process,
                         read_before=read_early if sampled else None, caught=caught)
    return status, written


def _unsampled(command: list[str], ends_process: bool, caught: Caught) -> int:
    """COMMAND run without sampling: what sampling that broke before COMMAND started still owes it (docs/behaviour.md
    §9.2). Its status, never 0 for a COMMAND that did not run."""
    try:
        from orca.sample.shell.cli.wrap import run_command

        return run_command(command, None, reaps_orphans=ends_process, caught=caught)
    except (Exception, KeyboardInterrupt) as error:
        say(f"cannot run {command[0]!r}: {type(error).__name__}: {' '.join(str(error).split())}")
        return 126


def tell_where(out: str, written: int) -> None:
    """At the end, when standard error is a terminal (a person is looking), one line saying where the lines went and
    how to look at them; nothing for a pipeline's logs, nor when no line was written or they went to standard
    output."""
    if written == 0 or out == "-":
        return
    try:
        if not os.isatty(2):
            return
    except OSError:
        return
    import shlex

    from orca.sample.shared.hints import metrics_command

    lines = "1 line" if written == 1 else f"{written} lines"
    say(f"{lines} in {out}; to look at them: {metrics_command()} {shlex.quote(out)}")


def sample_main(argv: list[str], *, ends_process: bool = False) -> int:
    """`<binary> sample ARGS`, ARGS being `argv[2:]`: the exit status. Never raises (docs/behaviour.md §1.2). With
    `-- COMMAND` the status is COMMAND's.

    `ends_process`: the caller exits with the returned status at once (as the `orca` command does). Stop signals
    that arrive after sampling has ended are then ignored, where otherwise the caller's own handlers come back."""
    # The signals first (docs/behaviour.md §2.4, §9.3): caught since the process started when it is `orca sample`,
    # else from now on, and handed to what handles them once it is in place.
    at_start = caught_signals.AT_START
    caught = at_start if at_start.installed else caught_signals.Caught().install(caught_signals.caught_for(argv))
    try:
        return _sample_main(argv, ends_process, caught)
    finally:
        if caught is not at_start and not ends_process:
            caught.restore()  # the caller's handlers (those from the process's start stay: it exits with its status)


def _sample_main(argv: list[str], ends_process: bool, caught: Caught) -> int:
    # Before anything is opened: a closed standard descriptor must not become the number of a file it opens.
    occupy_closed_standard_fds()
    args = list(argv[2:])
    command = None
    if "--" in args:  # `orca sample [FLAGS] -- COMMAND [ARGS...]`
        command = args[args.index("--") + 1 :]
        args = args[: args.index("--")]
    status = None
    try:
        # The baseline before anything else loads (docs/behaviour.md §2.2); a COMMAND's just before it starts.
        baseline = read_early() if command is None else None
        from orca.sample.shared.parser import Help, Malformed
        from orca.sample.shell.cli import flags
        from orca.sample.shell.cli.env import sample_seconds

        try:
            options = flags.parse(args)
            if command is not None:
                flags.check_command(options, command)
        except Help:
            return 0  # argparse's help action has printed it
        except Malformed as malformed:
            reason = " ".join(str(malformed).split()) or "malformed command line"
            say(f"{reason}\nusage: {flags.USAGE}")
            return 2
        seconds = options.seconds if options.seconds is not None else sample_seconds()
        if command is not None:
            status, written = _sample_command(options, seconds, command, ends_process, caught)
            tell_where(options.out, written)
            return status
        if seconds == 0:
            return 0  # sampling is off (docs/behaviour.md §2.1)
        tell_where(options.out, _sample(options, seconds, ends_process, baseline, caught=caught))
    except (Exception, KeyboardInterrupt) as error:
        # A sampler never fails its run: one line about what went wrong, and the run's status stays clean.
        say(f"stopped: {type(error).__name__}: {' '.join(str(error).split())}")
        if command is not None and status is None:
            return _unsampled(command, ends_process, caught)  # it has not run: it still does
    return status if status is not None else 0


def exit_now(status: int) -> NoReturn:
    """End the process with `status` at once: what Python buffered is flushed, the interpreter's teardown is
    skipped. Sampling is over and every line is written; the teardown would only add time to the runner's wait (an
    uploader thread still inside a final upload that ran out of its time is ended with the process)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass  # closed or broken: nothing more can reach it
    os._exit(status)


def process_main(argv: list[str]) -> NoReturn:
    """`sample_main` as a process of its own: `orca sample ...` and `python -m orca.sample ...`."""
    exit_now(sample_main(argv, ends_process=True))
