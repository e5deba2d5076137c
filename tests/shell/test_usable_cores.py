"""How many processes `orca metrics` may read a file with (README, "Performance"): the cores of its affinity, and no
more than its cgroup's CPU limit rounded up, read from fixture trees of `/proc/self/cgroup` and cgroup files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orca.sample.shell.readback import parts


def tree(tmp_path: Path, own: str, files: dict[str, str]) -> tuple[str, str]:
    """A proc root whose `self/cgroup` is `own`, and a cgroup root holding `files` (path -> text)."""
    proc, cgroups = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text(own)
    cgroups.mkdir()
    for path, text in files.items():
        (cgroups / path).parent.mkdir(parents=True, exist_ok=True)
        (cgroups / path).write_text(text)
    return str(proc), str(cgroups)


@pytest.fixture
def eight_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))


def test_v2_the_tightest_limit_of_the_cgroup_and_its_ancestors(tmp_path: Path, eight_cores: None) -> None:
    proc, cgroups = tree(tmp_path, "0::/kubepods/pod1/box\n", {
        "kubepods/pod1/box/cpu.max": "max 100000\n",
        "kubepods/pod1/cpu.max": "150000 100000\n",
        "kubepods/cpu.max": "400000 100000\n",
    })
    assert parts.cgroup_cpu_limit(proc, cgroups) == 1.5
    assert parts.usable_cores(proc, cgroups) == 2


def test_v2_a_container_with_its_own_cgroup_at_the_root(tmp_path: Path, eight_cores: None) -> None:
    proc, cgroups = tree(tmp_path, "0::/\n", {"cpu.max": "100000 100000\n"})
    assert parts.usable_cores(proc, cgroups) == 1


def test_v2_a_host_path_not_mounted_here_reads_the_root(tmp_path: Path, eight_cores: None) -> None:
    proc, cgroups = tree(tmp_path, "0::/system.slice/docker-1.scope\n", {"cpu.max": "300000 100000\n"})
    assert parts.usable_cores(proc, cgroups) == 3


def test_v2_no_limit_anywhere(tmp_path: Path, eight_cores: None) -> None:
    proc, cgroups = tree(tmp_path, "0::/a\n", {"a/cpu.max": "max 100000\n"})
    assert parts.cgroup_cpu_limit(proc, cgroups) is None
    assert parts.usable_cores(proc, cgroups) == 8


def test_v1_quota_and_period(tmp_path: Path, eight_cores: None) -> None:
    proc, cgroups = tree(tmp_path, "4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n", {
        "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "50000\n",
        "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
        "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
        "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
    })
    assert parts.cgroup_cpu_limit(proc, cgroups) == 0.5
    assert parts.usable_cores(proc, cgroups) == 1  # never fewer than one


def test_a_limit_above_the_affinity_leaves_the_affinity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    proc, cgroups = tree(tmp_path, "0::/\n", {"cpu.max": "600000 100000\n"})
    assert parts.usable_cores(proc, cgroups) == 2


def test_nothing_readable_is_no_limit(tmp_path: Path, eight_cores: None) -> None:
    assert parts.cgroup_cpu_limit(str(tmp_path / "none"), str(tmp_path / "none")) is None
    proc, cgroups = tree(tmp_path, "0::/../../etc\n", {"cpu.max": "garbage\n"})
    assert parts.usable_cores(proc, cgroups) == 8


def test_this_machine_reads_without_error() -> None:
    cores = parts.usable_cores()
    assert 1 <= cores <= len(os.sched_getaffinity(0))
