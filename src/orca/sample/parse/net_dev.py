"""/proc/net/dev (proc(5))."""

from __future__ import annotations

import functools
from collections.abc import Mapping

import msgspec
from returns.result import Failure, Result, Success

from orca.sample.parse.errors import ParseError
from orca.sample.parse.kernel_lines import parsed_lines
from orca.sample.parse.numbers import all_counters

# net/core/net-procfs.c prints 8 receive then 8 transmit counters after `name:`; bytes lead each group.
_COUNTERS = 16
_SENT_AT = 8
LOOPBACK = "lo"


class NetDev(msgspec.Struct, frozen=True, gc=False):
    bytes_by_interface: Mapping[str, tuple[int, int]]
    """Interface → (bytes received, bytes sent); `lo` left out."""


# The header lines, and an idle interface's, are the same line after line: each is parsed once and its reading
# handed out again.
@functools.lru_cache(maxsize=256)
def interface_line(line: str) -> tuple[str, tuple[int, int]] | None:
    """One line's interface and its (bytes received, bytes sent); None for a line that is not an interface's."""
    name, colon, rest = line.rpartition(":")
    name = name.strip()
    if not colon or not name or len(name.split()) != 1:
        return None
    fields = rest.split()
    if len(fields) < _COUNTERS or not all_counters(fields[:_COUNTERS]):
        return None
    return name, (int(fields[0]), int(fields[_SENT_AT]))


def parse(text: str) -> Result[NetDev, ParseError]:
    """Bytes received and sent per interface, `lo` left out.

    A line is `name: 16 counters`. The name is what precedes the LAST `:`: the kernel's dev_valid_name() forbids
    `:`, `/` and white space in a name but allows `.`, `-`, `@` and the rest (`eth0.100`, `veth1a2b-c`), and 2.6-era
    kernels did not reject `:`. Old kernels print `eth0:123` with no space, which this split also handles. The two
    header lines, and any line without 16 unsigned decimals (cut off, a `-5`, garbage), are skipped. Text with no
    interface line at all, not even `lo`, is a failure; only `lo` is an empty success (a container's namespace).

    >>> parse("  eth0:123 1 0 0 0 0 0 0 456 2 0 0 0 0 0 0\\n").unwrap().bytes_by_interface
    {'eth0': (123, 456)}
    """
    bytes_by_interface: dict[str, tuple[int, int]] = {}
    seen_interface = False
    for interface in parsed_lines(text, interface_line):
        if interface is None:
            continue
        seen_interface = True
        name, counters = interface
        if name != LOOPBACK:
            bytes_by_interface[name] = counters
    if not seen_interface:
        return Failure(ParseError("/proc/net/dev", "no interface line"))
    return Success(NetDev(bytes_by_interface=bytes_by_interface))


def parse_net_dev(text: str) -> dict[str, tuple[int, int]]:
    """The documented API's adapter (docs/behaviour.md §6): interface → (bytes received, bytes sent); {} when
    nothing parses.

    >>> parse_net_dev("    lo: 9 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0\\n")
    {}
    """
    return dict(parse(text).map(lambda net: net.bytes_by_interface).value_or({}))
