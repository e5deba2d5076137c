"""The CPU bandwidth limit of a process's cgroup: `/proc/<pid>/cgroup` (cgroups(7)), cgroup v2's `cpu.max`
(Documentation/admin-guide/cgroup-v2.rst) and v1's `cpu.cfs_quota_us` and `cpu.cfs_period_us`
(Documentation/scheduler/sched-bwc.rst). Light to import: `orca metrics` reads it before it decides how many
processes to read a file with."""

from __future__ import annotations

from orca.sample.parse.numbers import u64


def cpu_limit_cores(quota: str, period: str) -> float | None:
    """The CPUs a CFS bandwidth limit allows, `quota` / `period` (both in microseconds); None when there is no limit
    (`max` in cgroup v2, `-1` in v1's `cpu.cfs_quota_us`) or the text is not a limit.

    >>> cpu_limit_cores("150000", "100000"), cpu_limit_cores("max", "100000"), cpu_limit_cores("-1", "100000")
    (1.5, None, None)
    """
    quota_us, period_us = u64(quota.strip()), u64(period.strip())
    if quota_us is None or period_us is None or quota_us == 0 or period_us == 0:
        return None
    return quota_us / period_us


def cpu_max_cores(text: str) -> float | None:
    """cgroup v2's `cpu.max`, `$MAX $PERIOD` (`max` for no limit), as `cpu_limit_cores`.

    >>> cpu_max_cores("200000 100000\\n"), cpu_max_cores("max 100000\\n"), cpu_max_cores("")
    (2.0, None, None)
    """
    words = text.split()
    return cpu_limit_cores(words[0], words[1]) if len(words) == 2 else None


def own_cgroups(text: str) -> dict[str, str]:
    """`/proc/<pid>/cgroup` (cgroups(7): `hierarchy-ID:controller-list:cgroup-path` a line): each controller of a
    cgroup v1 hierarchy -> the process's cgroup path in it, and "" -> its path in the cgroup v2 hierarchy (the
    line with hierarchy 0 and no controllers). Lines of another shape are passed over.

    >>> own_cgroups("4:cpu,cpuacct:/docker/1a\\n1:name=systemd:/x\\n0::/kubepods/pod7\\n")
    {'cpu': '/docker/1a', 'cpuacct': '/docker/1a', 'name=systemd': '/x', '': '/kubepods/pod7'}
    """
    paths: dict[str, str] = {}
    for line in text.split("\n"):  # not `splitlines`: a cgroup's name may hold U+0085 or U+2028, which it splits at
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[2].startswith("/"):
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and not controllers:
            paths[""] = path
            continue
        for controller in controllers.split(","):
            if controller:
                paths[controller] = path
    return paths
