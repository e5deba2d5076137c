"""The files the sampler's own cgroup is read from (docs/behaviour.md §3.11): cgroup v1's, `pids.max`,
`/proc/self/mountinfo` and where `/proc/self/cgroup` and it put each controller.

The v1 files are real captures of this machine (cgroup v1 for the controllers, a v2 hierarchy beside them with only
hugetlb): a child cgroup of the memory, cpu, cpuacct and pids hierarchies limited to 256 MiB, half a CPU and 64 pids,
caught with a process holding 100 MiB after another was killed for passing the limit; the unlimited ones are its
ancestor's (`memory.limit_in_bytes`), a fresh child's (`pids.max`) and the root's (`cpu.stat`). Their meanings are
memory.rst's (5.2 the stat file: `total_<counter>`, `hierarchical_memory_limit`; 10. `oom_control`'s `oom_kill`; "-1"
resets a limit), cpuacct.rst's (`cpuacct.usage` in nanoseconds) and sched-bwc.rst's (`nr_periods`, `nr_throttled`).
The mountinfo capture is that process's, less one line of the machine's own sandbox mounts; hostile and container
lines are written by hand from proc_pid_mountinfo(5), the namespace paths from cgroup-v2.rst ("Namespace").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.result import Failure, Success

from orca.sample.compute.own_cgroup import cgroup_limits, cgroup_reading
from orca.sample.parse import cgroup
from orca.sample.parse.cgroup import CpuPeriods
from orca.sample.parse.mountinfo import CgroupMount, cgroup_mounts, unescaped
from orca.sample.parse.own_cgroup import CgroupFiles, Hierarchy, directories, hierarchies, own_paths

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v1045.x86_64-2cores"


def capture(name: str) -> str:
    return (CAPTURES / f"{name}.{MACHINE}.txt").read_text()


# v1 memory, cpu and cpuacct, as the sampler reads them -------------------------------------------------------------

V1 = CgroupFiles(
    memory_v1=True, memory_limits=("memory.limit_in_bytes",), memory_stat="memory.stat",
    memory_used="memory.usage_in_bytes", memory_events="memory.oom_control", cpu_v1=True,
    cpu_quotas=(("cpu.cfs_quota_us", "cpu.cfs_period_us"),), cpu_stats=("cpu.stat",), cpu_usage="cpuacct.usage",
    cpu_usage_ns=True,
)
LIMITED = {
    "memory.limit_in_bytes": "cgroup_v1_memory.limit_in_bytes.limited", "memory.stat": "cgroup_v1_memory.stat.limited",
    "memory.usage_in_bytes": "cgroup_v1_memory.usage_in_bytes.limited",
    "memory.oom_control": "cgroup_v1_memory.oom_control.oom-killed",
    "cpu.cfs_quota_us": "cgroup_v1_cpu.cfs_quota_us.half", "cpu.cfs_period_us": "cgroup_v1_cpu.cfs_period_us",
    "cpu.stat": "cgroup_v1_cpu.stat.throttled", "cpuacct.usage": "cgroup_v1_cpuacct.usage",
}


def v1_texts(**replaced: bytes) -> dict[str, bytes]:
    """The limited cgroup's captured files, by name, with `replaced`'s (keys with `_` for `.`) in their place."""
    texts = {name: capture(kept).encode() for name, kept in LIMITED.items()}
    return texts | {name.replace("_", ".", 1): text for name, text in replaced.items()}


def test_a_limited_v1_cgroup() -> None:
    """256 MiB (`memory.limit_in_bytes` and `memory.stat`'s `hierarchical_memory_limit`), half a CPU (50,000 of
    100,000 us), 112959488 bytes in use of which 20480 inactive file pages, one OOM kill, 1471490123 ns of CPU."""
    texts = v1_texts()
    limits = cgroup_limits(V1, texts)
    assert (limits.memory, limits.cpu) == (268435456, 0.5)
    reading = cgroup_reading(V1, limits, texts)
    assert (reading.memory_used, reading.inactive_file, reading.oom_kills) == (112959488, 20480, 1)
    assert reading.cpu_usage_usec == 1471490
    assert reading.cpu_periods == CpuPeriods(periods=31, throttled=28)


@pytest.mark.parametrize(
    "limit",
    [
        pytest.param(capture("cgroup_v1_memory.limit_in_bytes.unlimited").encode(), id="the kernel's maximum, 4 KiB"),
        pytest.param(b"9223372036854710272\n", id="the kernel's maximum, 64 KiB pages"),
        pytest.param(b"-1\n", id="-1, as written"),
    ],
)
def test_an_unlimited_v1_memory_limit_is_none(limit: bytes) -> None:
    stat = b"hierarchical_memory_limit 9223372036854771712\n"
    assert cgroup_limits(V1, v1_texts(memory_limit_in_bytes=limit, memory_stat=stat)).memory is None


def test_the_hierarchical_limit_holds_an_ancestors_limit() -> None:
    """The cgroup's own file unlimited, `memory.stat`'s `hierarchical_memory_limit` still says 256 MiB."""
    unlimited = capture("cgroup_v1_memory.limit_in_bytes.unlimited").encode()
    assert cgroup_limits(V1, v1_texts(memory_limit_in_bytes=unlimited)).memory == 268435456


def test_cpu_stat_of_v1() -> None:
    throttled = cgroup.flat_keyed(capture("cgroup_v1_cpu.stat.throttled"), "cpu.stat").unwrap()
    assert cgroup.cpu_periods(throttled) == Success(cgroup.CpuPeriods(periods=31, throttled=28))
    unlimited = cgroup.flat_keyed(capture("cgroup_v1_cpu.stat.unlimited"), "cpu.stat").unwrap()
    assert cgroup.cpu_periods(unlimited) == Success(cgroup.CpuPeriods(periods=0, throttled=0))


# pids.max, v1 and v2 ----------------------------------------------------------------------------------------------


def test_pids() -> None:
    assert cgroup.pids_current(capture("cgroup_v1_pids.current")) == Success(3)
    assert cgroup.pids_max(capture("cgroup_v1_pids.max.limited")) == Success(64)
    assert cgroup.pids_max(capture("cgroup_v1_pids.max.unlimited")) == Success(None)


@pytest.mark.parametrize("text", ["", "-1\n", "Max\n", "64 64\n"])
def test_pids_max_rejects(text: str) -> None:
    assert isinstance(cgroup.pids_max(text), Failure)


# /proc/self/mountinfo ---------------------------------------------------------------------------------------------


def test_mountinfo_of_this_machine() -> None:
    mounts = cgroup_mounts(capture("proc_self_mountinfo.v1-hybrid")).unwrap()
    assert [(mount.version, mount.mount_point) for mount in mounts] == [
        (1, f"/sys/fs/cgroup/{name}")
        for name in ("cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids", "systemd")
    ] + [(2, "/sys/fs/cgroup/unified")]
    assert all(mount.root == "/" for mount in mounts)
    assert mounts[0].controllers == {"cpu"}
    assert mounts[8].controllers == {"name=systemd"}
    assert mounts[9].controllers == frozenset()


def test_mountinfo_of_a_container_and_a_systemd_host() -> None:
    text = (
        "1301 1300 0:30 /docker/1a2b /sys/fs/cgroup/cpu,cpuacct ro,nosuid,nodev,noexec,relatime master:11 - cgroup "
        "cgroup rw,cpu,cpuacct\n"
        "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
        "rw,nsdelegate,memory_recursiveprot\n"
        "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime shared:9 master:3 - cgroup cgroup rw,xattr,name=systemd\n"
    )
    container, host, named = cgroup_mounts(text).unwrap()
    assert container == CgroupMount(1, "/docker/1a2b", "/sys/fs/cgroup/cpu,cpuacct", frozenset({"cpu", "cpuacct"}))
    assert host == CgroupMount(2, "/", "/sys/fs/cgroup", frozenset())
    assert "name=systemd" in named.controllers


def test_mountinfo_escapes() -> None:
    [mount] = cgroup_mounts(r"50 31 0:40 / /mnt/cg\040two\134x rw - cgroup2 none rw" + "\n").unwrap()
    assert mount.mount_point == "/mnt/cg two\\x"
    assert unescaped(r"\011\012") == "\t\n"


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue", id="ext3"),
        pytest.param("36 35 98:0 /mnt1 /mnt2 rw - cgroup2", id="cut after the type"),
        pytest.param("36 35 98:0 /mnt1 /mnt2 - cgroup2 none rw", id="no options field"),
        pytest.param("36 35 98:0 relative /mnt2 rw - cgroup2 none rw", id="a root not absolute"),
        pytest.param("garbage", id="garbage"),
    ],
)
def test_mountinfo_lines_that_are_no_cgroup_mount(line: str) -> None:
    assert cgroup_mounts(line + "\n").value_or(None) in ((), None)


def test_mountinfo_with_no_line_of_its_shape_is_a_failure() -> None:
    result = cgroup_mounts("garbage\nmore garbage\n")
    assert isinstance(result, Failure) and result.failure().source == "/proc/self/mountinfo"
    assert cgroup_mounts("") == Success(())


# where each controller is -----------------------------------------------------------------------------------------


def test_hierarchies_of_this_machines_limited_child() -> None:
    own = own_paths(capture("proc_self_cgroup.v1-limited-child")).unwrap()
    mounts = cgroup_mounts(capture("proc_self_mountinfo.v1-hybrid")).unwrap()
    found = hierarchies(own, mounts)
    memory = "/sys/fs/cgroup/memory/process_api/fdc5542165b85e85bcf5deb24ecbf24c"
    assert found["memory"] == Hierarchy(1, (f"{memory}/orca-capture-9733", memory, "/sys/fs/cgroup/memory/process_api",
                                            "/sys/fs/cgroup/memory"))
    assert found["cpu"] == Hierarchy(1, ("/sys/fs/cgroup/cpu/orca-capture-9733", "/sys/fs/cgroup/cpu"))
    assert found["cpuacct"] == Hierarchy(1, ("/sys/fs/cgroup/cpuacct/orca-capture-9733", "/sys/fs/cgroup/cpuacct"))
    assert found["pids"] == Hierarchy(1, ("/sys/fs/cgroup/pids/orca-capture-9733", "/sys/fs/cgroup/pids"))


def test_hierarchies_in_a_v2_cgroup_namespace() -> None:
    """cgroup-v2.rst: inside the namespace `0::/`, and a cgroup2 mounted there has the namespace's root as its own."""
    mounts = cgroup_mounts("29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n").unwrap()
    found = hierarchies(own_paths("0::/\n").unwrap(), mounts)
    assert found == {name: Hierarchy(2, ("/sys/fs/cgroup",)) for name in ("memory", "cpu", "pids")}


def test_a_path_outside_the_namespace_root_is_read_at_the_mount_point() -> None:
    """cgroup-v2.rst: a process moved out of its namespace's root shows `0::/../container_id2`."""
    mount = CgroupMount(2, "/", "/sys/fs/cgroup", frozenset())
    assert directories(mount, "/../container_id2") == ("/sys/fs/cgroup",)


def test_a_containers_own_cgroup_mounted_as_its_root() -> None:
    """Without a cgroup namespace Docker on v1 mounts the container's cgroup at the hierarchy's place, its root the
    container's path, which `/proc/self/cgroup` shows too."""
    mount = CgroupMount(1, "/docker/1a2b", "/sys/fs/cgroup/memory", frozenset({"memory"}))
    assert directories(mount, "/docker/1a2b") == ("/sys/fs/cgroup/memory",)
    assert directories(mount, "/docker/1a2b/sub") == ("/sys/fs/cgroup/memory/sub", "/sys/fs/cgroup/memory")
    assert directories(mount, "/docker/other") == ("/sys/fs/cgroup/memory",)


def test_a_controller_without_a_hierarchy_is_not_found() -> None:
    mounts = (CgroupMount(1, "/", "/cg/memory", frozenset({"memory"})),)
    assert set(hierarchies({"memory": "/a", "pids": "/a"}, mounts)) == {"memory"}


def test_a_name_with_a_unicode_line_separator_is_one_line() -> None:
    """The kernel ends lines with `\\n` alone; a cgroup or mount point may be named with U+0085 or U+2028."""
    assert own_paths("0::/a\x85b\u2028c\n").unwrap() == {"": "/a\x85b\u2028c"}
    [mount] = cgroup_mounts("50 31 0:40 / /cg\x85x rw - cgroup2 none rw\n").unwrap()
    assert mount.mount_point == "/cg\x85x"


def test_own_paths_rejects_text_of_another_shape() -> None:
    assert isinstance(own_paths("nothing here\n"), Failure)
    assert own_paths("") == Success({})
