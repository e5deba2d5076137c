"""`orca sample ARGS` (docs/behaviour.md §1.2, §5): flags, then the loop. Whatever happens, the run it watches goes
on."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import NoReturn

from orca.sample.shell.env import SECONDS_RANGE, default_dirs, parse_seconds, sample_seconds
from orca.sample.shell.report import say
from orca.sample.shell.sink import S3_SCHEME
from orca.sample.shell.stdio import occupy_closed_standard_fds

USAGE = (
    "orca sample --out <location> [--pid PID] [--until FILE] [--match ARGV0]\n"
    "            [--dirs D,...] [--seconds S] [--count N] [--keep N]\n"
    "            [--cgroup DIR] [--names DIR] [-- COMMAND [ARGS...]]"
)


class _Malformed(Exception):
    """A command line that cannot be run (docs/behaviour.md §5.1)."""


class _Help(Exception):
    """`--help`: print it and exit 0."""


class _Parser(argparse.ArgumentParser):
    # argparse exits the interpreter on its own errors; an embedding pipeline binary must get a status instead.
    def error(self, message: str) -> NoReturn:
        raise _Malformed(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status == 0:
            raise _Help
        raise _Malformed(message or "malformed command line")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _seconds(text: str) -> float:
    value = parse_seconds(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"not {SECONDS_RANGE} seconds: {text!r}")
    return value


def _dirs(text: str) -> list[str]:
    return [part for part in text.split(",") if part]


def _parser() -> _Parser:
    parser = _Parser(
        prog="orca sample",
        usage=USAGE,
        description="The machine's metrics, one JSON line every few seconds.",
        allow_abbrev=False,
    )
    parser.add_argument("--out", required=True, help="a file, s3://BUCKET/KEY, or - for standard output")
    parser.add_argument("--pid", type=_positive_int, help="end after a last line once this process has ended")
    parser.add_argument("--until", help="end after a last line once this file exists")
    parser.add_argument("--match", default="", help="also count the memory of processes whose argv[0] is this")
    parser.add_argument("--dirs", type=_dirs, help="comma-separated directories whose file systems are reported")
    parser.add_argument("--seconds", type=_seconds, help="the interval (default ORCA_SAMPLE_SECONDS, else 5)")
    parser.add_argument("--count", type=_positive_int, help="end after this many lines")
    parser.add_argument("--keep", type=_positive_int, help="keep the file to about its last N lines")
    parser.add_argument("--cgroup", default="", help="the host's /sys/fs/cgroup: adds the containers' memory")
    parser.add_argument("--names", default="", help="the host's /var/lib/docker/containers: the containers' names")
    return parser


def _check_location(location: str) -> str | None:
    """Why `--out` cannot be used, or None."""
    if not location:
        return "--out: empty location"
    if location.startswith(S3_SCHEME):
        from orca.sample.shell.s3 import parse_location

        if parse_location(location) is None:
            return f"--out: not s3://BUCKET/KEY: {location!r}"
    return None


def _parse(args: list[str]) -> argparse.Namespace:
    namespace = _parser().parse_args(args)
    from orca.sample.shell.reader_choice import reader_problem

    problem = _check_location(namespace.out) or reader_problem()
    if problem is not None:
        raise _Malformed(problem)
    return namespace


def _sample(options: argparse.Namespace, seconds: float, ends_process: bool, signals_forwarded: bool = False) -> None:
    # The handlers first (docs/behaviour.md §2.4): a SIGTERM while the readers load still ends the sampler with
    # status 0.
    from orca.sample.shell.signals import Stop, stopping_on_signals, watching_exit

    # Sampling a COMMAND, the signals go on to it (its handlers are in place) and its end ends sampling.
    signals = (
        contextlib.nullcontext(Stop()) if signals_forwarded else stopping_on_signals(Stop(), then_ignore=ends_process)
    )
    with signals as stop, watching_exit(options.pid) as exit_fd:
        # Imported here: `--help`, a malformed line and --seconds 0 need none of the readers.
        from orca.sample.shell.loop import EndConditions, run
        from orca.sample.shell.outputs import open_output
        from orca.sample.shell.sampler import Sampler

        ends = EndConditions(pid=options.pid, until=options.until, count=options.count, exit_fd=exit_fd)
        sampler = Sampler(
            options.pid or 0,
            options.match,
            options.dirs if options.dirs is not None else default_dirs(),
            options.cgroup,
            options.names,
        )
        sink = open_output(options.out, options.keep)
        try:
            run(sampler, sink, seconds, ends, sampler.started_ns / 1e9, stop)
        finally:
            sink.close()
            sampler.close()


def _check_command(options: argparse.Namespace, command: list[str]) -> None:
    if not command:
        raise _Malformed("-- must be followed by a COMMAND to run")
    if options.pid is not None:
        raise _Malformed("--pid and a COMMAND: the COMMAND is the process sampled")


def _sample_command(options: argparse.Namespace, seconds: float, command: list[str], ends_process: bool) -> int:
    """COMMAND run as a child and sampled as `--pid` of it: its exit status."""
    from orca.sample.shell.wrap import run_command

    def sample(pid: int) -> None:
        options.pid = pid
        _sample(options, seconds, ends_process, signals_forwarded=True)

    return run_command(command, sample if seconds > 0 else None)


def sample_main(argv: list[str], *, ends_process: bool = False) -> int:
    """`<binary> sample ARGS`, ARGS being `argv[2:]`: the exit status. Never raises (docs/behaviour.md §1.2). With
    `-- COMMAND` the status is COMMAND's.

    `ends_process`: the caller exits with the returned status at once (as the `orca` command does). Stop signals
    that arrive after sampling has ended are then ignored, where otherwise the caller's own handlers come back."""
    # Before anything is opened: a closed standard descriptor must not become the number of a file it opens.
    occupy_closed_standard_fds()
    try:
        args = list(argv[2:])
        command = None
        if "--" in args:  # `orca sample [FLAGS] -- COMMAND [ARGS...]`
            command = args[args.index("--") + 1 :]
            args = args[: args.index("--")]
        try:
            options = _parse(args)
            if command is not None:
                _check_command(options, command)
        except _Help:
            return 0  # argparse's help action has printed it
        except _Malformed as malformed:
            reason = " ".join(str(malformed).split()) or "malformed command line"
            say(f"{reason}\nusage: {USAGE}")
            return 2
        seconds = options.seconds if options.seconds is not None else sample_seconds()
        if command is not None:
            return _sample_command(options, seconds, command, ends_process)
        if seconds == 0:
            return 0  # sampling is off (docs/behaviour.md §2.1)
        _sample(options, seconds, ends_process)
    except (Exception, KeyboardInterrupt) as error:
        # A sampler never fails its run: one line about what went wrong, and the run's status stays clean.
        say(f"stopped: {type(error).__name__}: {' '.join(str(error).split())}")
    return 0


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


def console_main() -> None:
    """The `orca` console script: `orca sample ARGS`, `orca metrics ARGS`, `orca --help`."""
    if sys.argv[1:2] == ["sample"]:
        process_main(sys.argv)  # a process of its own: exits at once, late stop signals ignored
    from orca.sample.shell.commands import dispatch

    sys.exit(dispatch(sys.argv))
