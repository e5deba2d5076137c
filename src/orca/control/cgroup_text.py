"""The cgroup v2 files a run's own cgroup is made and read by (the kernel's cgroup-v2 documentation), as text: pure.

Every function here takes a file's text and returns what the runner uses, or builds the text written to one; none
raises, whatever the text.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from orca.control.rules import ControlLimits

RUN_PREFIX = "run-"
"""A run's cgroup is `run-<its root's pid>` in the delegated directory."""
CONTROLLERS = ("memory", "pids")
"""The controllers a run's cgroup is given where the delegated directory offers them."""
_U64_DIGITS = 20
_MEMORY_MAX_LIMIT = 1 << 62
"""Past this a cap is no cap the kernel can count (its page counters): written as `max`."""


def number(text: str | None) -> int | None:
    """A single-value file (`memory.current`, `memory.peak`): its number, None for `max`, a missing file or any
    other text.

    >>> number("73728000\\n"), number("max\\n"), number(None), number("-1")
    (73728000, None, None, None)
    """
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= _U64_DIGITS else None


def keyed(text: str | None) -> dict[str, int]:
    """A flat-keyed file (`memory.events`, `cgroup.events`): key -> number; a line that is not `key number` is
    left out.

    >>> keyed("low 0\\nhigh 0\\nmax 31\\noom 1\\noom_kill 1\\noom_group_kill 1\\n")["oom"]
    1
    >>> keyed("populated 1\\nfrozen 0\\nbad\\nx -2\\n")
    {'populated': 1, 'frozen': 0}
    """
    values: dict[str, int] = {}
    for line in (text or "").splitlines():
        fields = line.split()
        if len(fields) == 2 and (value := number(fields[1])) is not None:
            values[fields[0]] = value
    return values


def pids(text: str | None) -> frozenset[int]:
    """`cgroup.procs`: one pid a line.

    >>> sorted(pids("412\\n413\\n\\nx\\n"))
    [412, 413]
    """
    return frozenset(pid for line in (text or "").split() if (pid := number(line)) is not None and pid > 0)


def controllers(text: str | None) -> frozenset[str]:
    """`cgroup.controllers` or `cgroup.subtree_control`: the controllers named, space-separated.

    >>> sorted(controllers("cpuset cpu io memory hugetlb pids rdma misc\\n") & set(CONTROLLERS))
    ['memory', 'pids']
    """
    return frozenset((text or "").split())


def settings(limits: ControlLimits, enabled: Set[str]) -> list[tuple[str, str, bool]]:
    """(file, text, required) written in a run's new cgroup, for the controllers `enabled` for it: the cap as
    `memory.max` (and no swap, so that the cap holds in memory and not on disk; the whole run killed together when
    the kernel kills for the cap), the processes and threads as `pids.max`. `memory.swap.max` needs swap
    accounting and `memory.oom.group` Linux 4.19, so a kernel without them is no failure.

    >>> settings(ControlLimits(memory_mb=64, max_pids=400), {"memory", "pids"})  # doctest: +NORMALIZE_WHITESPACE
    [('memory.max', '67108864', True), ('memory.swap.max', '0', False), ('memory.oom.group', '1', False),
     ('pids.max', '400', True)]
    >>> settings(ControlLimits(), set())
    []
    """
    written: list[tuple[str, str, bool]] = []
    if "memory" in enabled:
        cap = limits.memory_bytes
        written += [
            ("memory.max", str(cap) if cap < _MEMORY_MAX_LIMIT else "max", True),
            ("memory.swap.max", "0", False),
            ("memory.oom.group", "1", False),
        ]
    if "pids" in enabled:
        written.append(("pids.max", str(limits.max_pids), True))
    return written


def reached_cap(events: Mapping[str, int]) -> bool:
    """Whether `memory.events` says the cgroup's memory reached `memory.max` and an allocation was about to fail
    (`oom`): the kernel then ends the run (`memory.oom.group`), or would have had to.

    >>> reached_cap({"max": 31, "oom": 0}), reached_cap({"max": 31, "oom": 1, "oom_kill": 1})
    (False, True)
    """
    return events.get("oom", 0) > 0
