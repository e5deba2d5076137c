"""`orca sample`'s flags (docs/behaviour.md §5): parsed with argparse, a malformed line told as one reason and the
usage. Loaded after the baseline readings (docs/behaviour.md §2.2): argparse is one of the heavier imports of a
start."""

from __future__ import annotations

import argparse

from orca.sample.shared.parser import Malformed, Parser
from orca.sample.shell.cli.env import SECONDS_RANGE, parse_seconds
from orca.sample.shell.out.sink import S3_SCHEME

USAGE = (
    "orca sample --out <location> [--pid PID] [--until FILE] [--match ARGV0]\n"
    "            [--dirs D,...] [--seconds S] [--count N] [--keep N]\n"
    "            [--cgroup DIR] [--names DIR] [-- COMMAND [ARGS...]]"
)


SAMPLE_EXAMPLE = """\
examples:
  {orca} sample --out run.jsonl --seconds 1 -- make -j4    sample a command, every second, until it ends
  {orca} metrics run.jsonl                                  then look at it"""
"""`{orca}` is `orca` as this person can type it (`Parser.format_help`)."""


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


def _parser() -> Parser:
    parser = Parser(
        prog="orca sample",
        usage=USAGE,
        description="The machine's metrics, one JSON line every few seconds.",
        epilog=SAMPLE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        from orca.sample.shared.s3_location import parse_location

        if parse_location(location) is None:
            return f"--out: not s3://BUCKET/KEY (a key of segments that are not empty, . or ..): {location!r}"
    return None


def parse(args: list[str]) -> argparse.Namespace:
    """The flags of `args` (the words before any `--`). Raises `Help` once `--help` is printed, `Malformed` with
    the reason for a line that cannot be run."""
    namespace = _parser().parsed(args)
    from orca.sample.shell.machine.choice import reader_problem

    problem = _check_location(namespace.out) or reader_problem()
    if problem is not None:
        raise Malformed(problem)
    return namespace


def check_command(options: argparse.Namespace, command: list[str]) -> None:
    """`-- COMMAND`: raises `Malformed` when there is no COMMAND, or a `--pid` beside it."""
    if not command:
        raise Malformed("-- must be followed by a COMMAND to run")
    if options.pid is not None:
        raise Malformed("--pid and a COMMAND: the COMMAND is the process sampled")
