"""How many processes `orca metrics` may read a file with (docs/metrics.md): the cores of its affinity, and no
more than its cgroup's CPU limit rounded up, read from fixture trees of `/proc/self/cgroup`, a `/proc/self/mountinfo`
mounting the fixture's cgroup root, and cgroup files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orca.sample.readback.shell import parts
from orca.sample.shared.own_cgroup import own_cpu_limit


def tree(tmp_path: Path, own: str, files: dict[str, str], v1: str = "") -> str:
    """A proc root whose `self/cgroup` is `own`, its `self/mountinfo` mounting a cgroup root that holds `files`
    (path -> text): as the v2 hierarchy, or with `v1` (`cpu,cpuacct`) the v1 hierarchy of those controllers under it."""
    proc, cgroups = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text(own)
    mount = f"29 23 0:26 / {cgroups} rw - cgroup2 cgroup2 rw"
    if v1:
        mount = f"32 31 0:29 / {cgroups}/{v1} rw - cgroup cgroup rw,{v1}"
    (proc / "self" / "mountinfo").write_text(f"25 1 8:1 / / rw - ext4 /dev/sda1 rw\n{mount}\n")
    cgroups.mkdir()
    for path, text in files.items():
        (cgroups / path).parent.mkdir(parents=True, exist_ok=True)
        (cgroups / path).write_text(text)
    return str(proc)


@pytest.fixture
def eight_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))


def test_v2_the_tightest_limit_of_the_cgroup_and_its_ancestors(tmp_path: Path, eight_cores: None) -> None:
    proc = tree(tmp_path, "0::/kubepods/pod1/box\n", {
        "kubepods/pod1/box/cpu.max": "max 100000\n",
        "kubepods/pod1/cpu.max": "150000 100000\n",
        "kubepods/cpu.max": "400000 100000\n",
    })
    assert own_cpu_limit(proc) == 1.5
    assert parts.usable_cores(proc) == 2


def test_v2_a_container_with_its_own_cgroup_at_the_root(tmp_path: Path, eight_cores: None) -> None:
    proc = tree(tmp_path, "0::/\n", {"cpu.max": "100000 100000\n"})
    assert parts.usable_cores(proc) == 1


def test_v2_a_host_path_not_mounted_here_reads_the_root(tmp_path: Path, eight_cores: None) -> None:
    proc = tree(tmp_path, "0::/system.slice/docker-1.scope\n", {"cpu.max": "300000 100000\n"})
    assert parts.usable_cores(proc) == 3


def test_v2_no_limit_anywhere(tmp_path: Path, eight_cores: None) -> None:
    proc = tree(tmp_path, "0::/a\n", {"a/cpu.max": "max 100000\n"})
    assert own_cpu_limit(proc) is None
    assert parts.usable_cores(proc) == 8


def test_v1_quota_and_period(tmp_path: Path, eight_cores: None) -> None:
    proc = tree(tmp_path, "4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n", {
        "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "50000\n",
        "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
        "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
        "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
    }, v1="cpu,cpuacct")
    assert own_cpu_limit(proc) == 0.5
    assert parts.usable_cores(proc) == 1  # never fewer than one


def test_a_limit_above_the_affinity_leaves_the_affinity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    proc = tree(tmp_path, "0::/\n", {"cpu.max": "600000 100000\n"})
    assert parts.usable_cores(proc) == 2


def test_nothing_readable_is_no_limit(tmp_path: Path, eight_cores: None) -> None:
    assert own_cpu_limit(str(tmp_path / "none")) is None
    proc = tree(tmp_path, "0::/../../etc\n", {"cpu.max": "garbage\n"})
    assert parts.usable_cores(proc) == 8


def test_this_machine_reads_without_error() -> None:
    cores = parts.usable_cores()
    assert 1 <= cores <= len(os.sched_getaffinity(0))
