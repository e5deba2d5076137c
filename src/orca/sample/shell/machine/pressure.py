"""The host's pressure stall information, `/proc/pressure/*` (Documentation/accounting/psi.rst)."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping

from returns.result import Failure, Result, Success

from orca.sample.compute.pressure import RESOURCES
from orca.sample.parse.errors import ParseError
from orca.sample.parse.pressure import NO_PSI_ERRNOS, Pressure, as_printed, parse
from orca.sample.shell.machine.kernel import read_kernel_file
from orca.sample.shell.report import reason_of


@functools.lru_cache(maxsize=8)
def _files(proc: str) -> tuple[tuple[str, str], ...]:
    """Each resource and the path of its file under `proc`: joined once, not every line."""
    return tuple((resource, os.path.join(proc, "pressure", resource)) for resource in RESOURCES)


def read_pressure(proc: str = "/proc") -> Result[Mapping[str, Pressure] | None, ParseError]:
    """Resource → its parsed pressure file (Documentation/accounting/psi.rst); a file that fails is left out.

    Success(None) on a kernel without PSI: `<proc>/pressure` missing (built without it), or every file missing or
    unsupported (`psi=0` at boot). A failure when no file reads, for another reason than those."""
    found: dict[str, Pressure] = {}
    failure: ParseError | None = None
    for resource, path in _files(proc):
        try:
            text = read_kernel_file(path)
        except OSError as error:
            if error.errno not in NO_PSI_ERRNOS:
                failure = failure or ParseError(path, reason_of(error))
            continue
        pressure = as_printed(text)  # the usual case: the kernel's own text, no `Result` made for it
        if pressure is not None:
            found[resource] = pressure
            continue
        parsed = parse(text)
        if isinstance(parsed, Success):
            found[resource] = parsed.unwrap()
        else:
            failure = failure or ParseError(path, parsed.failure().reason)
    if found or failure is None:
        return Success(found or None)
    return Failure(failure)
