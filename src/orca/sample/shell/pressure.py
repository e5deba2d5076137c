"""The host's pressure stall information, `/proc/pressure/*` (Documentation/accounting/psi.rst; issue 4)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from orca.sample.parse.pressure import Pressure, parse
from orca.sample.shell.readers import read_text

RESOURCES = ("cpu", "memory", "io")


def read_pressure(proc: str = "/proc") -> Mapping[str, Pressure] | None:
    """Resource → its parsed pressure file; a file missing or unparsable is left out.

    None when `<proc>/pressure` is missing (a kernel built without PSI) or none of the files parses (PSI disabled at
    boot with `psi=0`: the files exist but reading them fails).
    """
    directory = os.path.join(proc, "pressure")
    found: dict[str, Pressure] = {}
    for resource in RESOURCES:
        text = read_text(os.path.join(directory, resource))
        parsed = None if text is None else parse(text).value_or(None)
        if parsed is not None:
            found[resource] = parsed
    return found or None
