"""cgroup v2 files (Documentation/admin-guide/cgroup-v2.rst) and Docker's names for them.

`memory.current` is a single value; `memory.stat`, `memory.events` and `cpu.stat` are "flat keyed" files, one
`key value` pair per line, values unsigned. Docker names a container's cgroup directory `docker-<id>.scope` under
`system.slice` (systemd driver) or `<id>` under `docker` (cgroupfs driver), the id 64 lowercase hex characters.

A container's `config.v2.json` holds its environment, secrets included: `container_name` returns the `Name` and
nothing else, and no error message here ever quotes the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import orjson
from returns.result import Failure, Result, Success

from orca.sample.parse.errors import ParseError
from orca.sample.parse.numbers import u64

_CONTAINER_DIR = re.compile(r"(?:docker-([0-9a-f]{64})\.scope|([0-9a-f]{64}))")


def memory_current(text: str) -> Result[int, ParseError]:
    """`memory.current`: one number of bytes; anything else (`max`, empty, junk) is a failure.

    >>> memory_current("412000000\\n")
    <Success: 412000000>
    >>> memory_current("max\\n").failure().reason
    'not a number of bytes'
    """
    value = u64(text.strip())
    if value is None:
        return Failure(ParseError("memory.current", "not a number of bytes"))
    return Success(value)


def flat_keyed(text: str, source: str) -> Result[Mapping[str, int], ParseError]:
    """A flat-keyed file (`memory.stat`, `memory.events`, `cpu.stat`): `key value` per line; bad lines skipped.

    A key that appears twice keeps its first value: a later line cannot override one already read.

    >>> flat_keyed("anon 4096\\ninactive_file 8192\\nbad line here\\n", "memory.stat")
    <Success: {'anon': 4096, 'inactive_file': 8192}>
    """
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue
        key, token = parts
        value = u64(token)
        if value is not None:
            values.setdefault(key, value)
    if not values:
        return Failure(ParseError(source, "no `key value` line"))
    return Success(values)


def container_id(dirname: str) -> str | None:
    """The 64-hex Docker id in a cgroup directory name: `docker-<id>.scope` (systemd) or `<id>` (cgroupfs).

    >>> container_id("docker-" + "ab" * 32 + ".scope") == "ab" * 32
    True
    >>> container_id("init.scope") is None
    True
    """
    match = _CONTAINER_DIR.fullmatch(dirname)
    if match is None:
        return None
    return match.group(1) or match.group(2)


def container_name(config: str) -> str:
    """The `Name` of a `config.v2.json` without its leading `/`; "" if none. Nothing else of the file is kept.

    >>> container_name('{"Name": "/postgres", "Config": {"Env": ["PGPASSWORD=secret"]}}')
    'postgres'
    >>> container_name("not json")
    ''
    """
    try:
        document = orjson.loads(config)
    except orjson.JSONDecodeError:  # also raised for lone surrogates and nesting deeper than orjson's limit
        return ""
    name = document.get("Name") if isinstance(document, dict) else None
    if not isinstance(name, str):
        return ""
    return name.removeprefix("/")
