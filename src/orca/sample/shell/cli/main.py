"""`orca COMMAND ...`: the `orca` console script, and its commands, one line each for `orca --help`.

Light to import: `orca sample` goes through here before its baseline readings (docs/behaviour.md §2.2)."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

COMMANDS = {
    "sample": "write the machine's metrics, one JSON line every few seconds (or sample a command: -- COMMAND)",
    "metrics": "what a run did, from those lines: a summary per instance, --json, --plot FILE",
    "schema": "the line's JSON Schema, or a DuckDB, Athena or Spark table's columns for lines",
}
USAGE = "orca COMMAND [ARGS...]   (orca COMMAND --help for one command's flags; orca --version)"
DISTRIBUTION = "orca-sample"


def _help() -> str:
    width = max(map(len, COMMANDS))
    rows = [f"usage: {USAGE}", "", "commands:"]
    rows += [f"  {name.ljust(width)}  {line}" for name, line in COMMANDS.items()]
    return "\n".join(rows) + "\n"


def version() -> str:
    """The installed distribution's version, as pip knows it (`pyproject.toml`'s)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:  # run from a checkout's src/ that was never installed
        return "unknown (not installed)"


def _runner(command: str) -> Callable[[list[str]], int]:
    # Each command's module is imported only when it runs: `orca sample` never loads the reader.
    if command == "sample":
        from orca.sample.shell.cli.sample import sample_main

        return sample_main
    if command == "schema":
        from orca.sample.shell.cli.schema import schema_main

        return lambda argv: schema_main(argv[2:])
    from orca.sample.readback.shell.cli.metrics import metrics_main

    return lambda argv: metrics_main(argv[2:])


def dispatch(argv: list[str]) -> int:
    """`argv` as the console script gets it (`argv[0]` the program, `argv[1]` the command): the exit status."""
    import contextlib

    command = argv[1] if len(argv) >= 2 else ""
    if command in COMMANDS:
        return _runner(command)(argv)
    if command in ("-h", "--help", "help"):
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(_help())
        return 0
    if command in ("-V", "--version"):
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(f"{DISTRIBUTION} {version()}\n")
        return 0
    reason = f"unknown command {command!r}" if command else "no command"
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"orca: {reason}\n{_help()}")
    return 2


def console_main() -> None:
    """The `orca` console script: `orca sample ARGS`, `orca metrics ARGS`, `orca schema ARGS`, `orca --help`,
    `orca --version`."""
    if sys.argv[1:2] == ["sample"]:
        from orca.sample.shell.cli.sample import process_main

        process_main(sys.argv)  # a process of its own: exits at once, late stop signals ignored
    sys.exit(dispatch(sys.argv))
