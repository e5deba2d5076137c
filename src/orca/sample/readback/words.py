"""The read side's words, each said one way (docs/metrics.md, "Words"): every function here takes a figure, a name
or a record's few fields and returns the text a person reads for it, the same in the summary, the fleet's table and
lists, `--json`'s sentences and the chart's titles, legends and notes. `-` stands for a figure the lines do not
give. The fleet's table says sizes, shares and how a command ended in shorter cells (`size_cell`, `exit_cell`; its
columns a whole column at a time in `cells.py`): they share a terminal's width."""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime

from orca.sample.line_format import CommandExit
from orca.sample.readback.gather.records import ExitSummary

SIGNAL_NAMES = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 8: "SIGFPE",
                9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}
"""The signals whose numbers are the same on Linux, macOS and the BSDs: a line does not say where it was written, so
another number is said as a number alone."""
UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
"""Bytes' units, each 1024 of the one before."""
MISSING = "-"


Ended = ExitSummary | CommandExit
"""How a COMMAND ended, as a summary and a line hold it."""


def printable(text: str) -> str:
    r"""`text` as it may be printed to a terminal: each character that is not printable (a control character such as
    ESC or a newline, a format character such as a right-to-left override, a separator other than the space) written
    as its escape, so that no name in a line can move the cursor, colour the screen or start a row of its own.

    >>> printable("db"), printable("/x\x1b[2J\n  cpu"), printable("h\u202e\u00a0é")
    ('db', '/x\\x1b[2J\\n  cpu', 'h\\u202e\\xa0é')
    """
    if text.isprintable():
        return text
    return "".join(character if character.isprintable() else character.encode("unicode_escape").decode("ascii")
                   for character in text)


def cut(text: str, width: int) -> str:
    """`text` at most `width` characters, its end cut to `…` (with no space before it).

    >>> cut("worker-001", 20), cut("worker-001", 7), cut("make all", 6)
    ('worker-001', 'worker…', 'make…')
    """
    return text if len(text) <= width else text[: max(0, width - 1)].rstrip() + "…"


def cut_start(text: str, width: int) -> str:
    """`text` at most `width` characters, its start cut to `…` (a path's end tells it apart).

    >>> cut_start("/var/log/orca/a.jsonl", 9)
    '…/a.jsonl'
    """
    return text if len(text) <= width else "…" + text[len(text) - width + 1:]


def count(number: int, noun: str) -> str:
    """A count of things, its noun plural but for one.

    >>> count(1, "gap"), count(2, "run"), count(12345, "line"), count(0, "OOM kill")
    ('1 gap', '2 runs', '12,345 lines', '0 OOM kills')
    """
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def number(value: float) -> str:
    """A figure worked out from others (hours, GiB-hours) at three significant figures or more.

    >>> [number(value) for value in (0.031234, 4.1666, 9600.0, 0.0)]
    ['0.0312', '4.17', '9,600', '0']
    """
    if value == 0 or not math.isfinite(value):
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{max(1, 2 - math.floor(math.log10(abs(value))))}f}"


def cores(cpus: float) -> str:
    """A number of CPUs at the decimals the line gives it (up to 3), at least one.

    >>> cores(1.0), cores(0.5), cores(0.25), cores(2.125)
    ('1.0', '0.5', '0.25', '2.125')
    """
    text = f"{cpus:.3f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def size(count: float) -> str:
    """Bytes in binary units, three significant figures or more.

    >>> [size(n) for n in (0, 1023, 1500, 5 * 2**20, 3.25 * 2**30, 2**50)]
    ['0 B', '1023 B', '1.46 KiB', '5.00 MiB', '3.25 GiB', '1024 TiB']
    """
    for unit in UNITS[:-1]:
        if abs(count) < 1024:
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.2f} {unit}"
        count /= 1024
    return f"{count:.0f} {UNITS[-1]}" if abs(count) >= 100 else f"{count:.2f} {UNITS[-1]}"


def rate(per_second: float) -> str:
    """Bytes a second.

    >>> rate(0), rate(2048)
    ('0 B/s', '2.00 KiB/s')
    """
    return size(per_second) + "/s"


def size_cell(count: float | None) -> str:
    """Bytes in a table's cell: the unit's initial, two significant figures or more.

    >>> [size_cell(n) for n in (0, 512, 1536, 136 * 2**20, 12.4 * 2**30, None)]
    ['0B', '512B', '1.5K', '136M', '12G', '-']
    """
    if count is None:
        return MISSING
    for unit in ("B", "K", "M", "G", "T", "P"):
        if count < 1024 or unit == "P":
            if unit == "B":
                return f"{count:.0f}B"
            return f"{count:.1f}{unit}" if count < 10 else f"{count:.0f}{unit}"
        count /= 1024
    return MISSING  # not reached


def percent(share: float | None) -> str:
    """A percentage, to a tenth; what it is of is said beside it (`of one core`, `of all 2 cores`, `of its limit`).

    >>> percent(74.84), percent(199.0), percent(None)
    ('74.8%', '199.0%', '-')
    """
    return MISSING if share is None else f"{share:.1f}%"




def duration(seconds: float | None) -> str:
    """A length of time: tenths of a second under a minute, else whole seconds in hours, minutes and seconds.

    >>> [duration(s) for s in (0.2, 12.46, 200, 252, 3725, 90061, None, math.inf)]
    ['0.2 s', '12.5 s', '3m 20s', '4m 12s', '1h 02m 05s', '25h 01m 01s', '-', '-']
    """
    if seconds is None or not math.isfinite(seconds):
        return MISSING
    if seconds < 60:
        return f"{seconds:.1f} s"
    hours, rest = divmod(round(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def utc(t: float) -> str:
    """A moment: Unix seconds as UTC ISO 8601, to the second.

    >>> utc(1796016198.738), utc(0), utc(951782400), utc(59.9999996)
    ('2026-11-30T05:23:18Z', '1970-01-01T00:00:00Z', '2000-02-29T00:00:00Z', '1970-01-01T00:01:00Z')
    """
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def day_and_minute(t: float) -> str:
    """A moment's day of the year and time, UTC, to the minute: for runs that began on several days.

    >>> day_and_minute(1796016198.738)
    '11-30 05:23'
    """
    moment = utc(t)
    return f"{moment[5:10]} {moment[11:16]}"


def signal_name(number: int) -> str:
    """A signal by its name where every system numbers it alike, else by its number.

    >>> signal_name(9), signal_name(15), signal_name(64)
    ('SIGKILL', 'SIGTERM', 'signal 64')
    """
    return SIGNAL_NAMES.get(number, f"signal {number}")


def exit_status(ended: Ended) -> str:
    """How a COMMAND ended: its exit status, the signal that killed it, or why it could not start.

    >>> exit_status(CommandExit(code=0)), exit_status(CommandExit(signal=9)), exit_status(CommandExit(signal=64))
    ('exit 0', 'killed by SIGKILL', 'killed by signal 64')
    >>> exit_status(CommandExit(code=127, error="No such file or directory")), exit_status(CommandExit())
    ('could not start: No such file or directory (exit 127)', 'ended')
    """
    if ended.error is not None:
        return f"could not start: {printable(ended.error)}" + ("" if ended.code is None else f" (exit {ended.code})")
    if ended.signal is not None:
        return f"killed by {signal_name(ended.signal)}"
    return "ended" if ended.code is None else f"exit {ended.code}"


def exit_after(ended: Ended) -> str:
    """How a COMMAND ended, and after how long where the line says.

    >>> exit_after(CommandExit(code=0, wall=31.25)), exit_after(CommandExit(signal=9, wall=200.0))
    ('exit 0 after 31.2 s', 'killed by SIGKILL after 3m 20s')
    """
    return exit_status(ended) + ("" if ended.wall is None else f" after {duration(ended.wall)}")


def exit_cell(ended: Ended | None) -> str:
    """How a COMMAND ended, in a table's cell: the exit status, the signal's name, or `no start`.

    >>> [exit_cell(CommandExit(code=0)), exit_cell(CommandExit(signal=9)), exit_cell(CommandExit(signal=64))]
    ['exit 0', 'SIGKILL', 'signal 64']
    >>> exit_cell(CommandExit(code=127, error="No such file")), exit_cell(None), exit_cell(CommandExit())
    ('no start', '-', '-')
    """
    if ended is None:
        return MISSING
    if ended.error is not None:
        return "no start"
    if ended.signal is not None:
        return signal_name(ended.signal)
    return MISSING if ended.code is None else f"exit {ended.code}"


def command(argv: Sequence[str], argc: int | None = None, most: int | None = None) -> str:
    """A command as a shell would take it, its words escaped (`printable`), cut to `most` characters (with `…`)
    where given, and how many arguments it had where the line left some out.

    >>> command(["sh", "-c", "sleep 1; echo $x"]), command(["make", "-j4"], 40)
    ("sh -c 'sleep 1; echo $x'", 'make -j4 ... (40 arguments, 2 shown)')
    >>> command(["echo", "\\x1b[2J"]), command(["python", "-c", "x" * 20], most=16)
    ("echo '\\\\x1b[2J'", 'python -c xxxxx…')
    """
    text = shlex.join(map(printable, argv))
    if most is not None:
        text = cut(text, most)
    if argc is not None and argc > len(argv):
        text += f" ... ({argc:,} arguments, {len(argv)} shown)"
    return text
