"""The parser of `orca`'s commands (`orca sample`, `orca metrics`, `orca schema`): argparse's, but a malformed line
is told as one reason and the usage (docs/behaviour.md §5.1), never an exit of the interpreter."""

from __future__ import annotations

import argparse
from typing import NoReturn


class Malformed(Exception):
    """A command line that cannot be run (docs/behaviour.md §5.1)."""


class Help(Exception):
    """`--help`: print it and exit 0."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, but a malformed line raises `Malformed` rather than exiting, and an unknown flag is named
    before a missing required one (argparse checks the required ones first)."""

    def format_help(self) -> str:
        """The help, its examples naming `orca` as this person can run it (the path it was started by, when `orca` is
        not on PATH)."""
        from orca.sample.shared.hints import orca_command  # here: only a help asked for names the command

        return super().format_help().replace("{orca}", orca_command())

    def parsed(self, args: list[str]) -> argparse.Namespace:
        """The flags of `args`. Raises `Help` once `--help` is printed, `Malformed` with the reason otherwise."""
        try:
            return self.parse_args(args)
        except Malformed:
            unknown = self._unknown_flags(args)
            if unknown:
                raise Malformed(f"unrecognized arguments: {' '.join(unknown)}") from None
            raise

    def _unknown_flags(self, args: list[str]) -> list[str]:
        """The words of `args` that look like flags and are none of this parser's, found as argparse finds them
        with nothing required."""
        required = [action for action in self._actions if action.required]
        for action in required:
            action.required = False
        try:
            _, extras = self.parse_known_args(args)
        except Malformed:  # another fault (a flag's value), told as argparse tells it
            return []
        finally:
            for action in required:
                action.required = True
        return [word for word in extras if word.startswith("-") and word != "-"]

    # argparse exits the interpreter on its own errors; an embedding pipeline binary must get a status instead.
    def error(self, message: str) -> NoReturn:
        raise Malformed(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status == 0:
            raise Help
        raise Malformed(message or "malformed command line")
