"""cgroup v2 files (Documentation/admin-guide/cgroup-v2.rst) and Docker's names for them."""

from __future__ import annotations

from collections.abc import Mapping

from returns.result import Result

from orca.sample.parse.errors import ParseError


def memory_current(text: str) -> Result[int, ParseError]:
    """`memory.current`: one number of bytes; anything else (`max`, empty, junk) is a failure."""
    raise NotImplementedError  # issue 2: being written


def flat_keyed(text: str, source: str) -> Result[Mapping[str, int], ParseError]:
    """A flat-keyed file (`memory.stat`, `memory.events`, `cpu.stat`): `key value` per line; bad lines skipped."""
    raise NotImplementedError  # issue 2: being written


def container_id(dirname: str) -> str | None:
    """The 64-hex Docker id in a cgroup directory name: `docker-<id>.scope` (systemd) or `<id>` (cgroupfs)."""
    raise NotImplementedError  # issue 2: being written


def container_name(config: str) -> str:
    """The `Name` of a `config.v2.json` without its leading `/`; "" if none. Nothing else of the file is kept."""
    raise NotImplementedError  # issue 2: being written


def container_mem(current: str, stat: str) -> int:
    """The seed's adapter: `memory.current` less `inactive_file`, never below 0; -1 if `current` isn't a number."""
    raise NotImplementedError  # issue 2: being written
