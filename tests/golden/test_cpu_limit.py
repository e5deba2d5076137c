"""A process's cgroup and its CPU bandwidth limit (docs/metrics.md: how many processes `orca metrics` reads a
file with).

`/proc/self/cgroup` and the v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` are real captures of this machine (cgroup v1
for the controllers, a v2 hierarchy beside them, no CPU limit). The v2 `cpu.max` texts are written by hand from
cgroup-v2.rst ("$MAX $PERIOD", `max` for no limit, default "max 100000"); the v1 quota of -1 meaning no limit is
sched-bwc.rst's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.cpu_limit import cpu_limit_cores, cpu_max_cores, own_cgroups

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v657.x86_64-2cores"


def capture(name: str) -> str:
    return (CAPTURES / f"{name}.{MACHINE}.txt").read_text()


def test_own_cgroups_of_a_hybrid_machine() -> None:
    own = own_cgroups(capture("proc_self_cgroup.v1-hybrid"))
    assert own["cpu"] == "/" and own["cpuacct"] == "/" and own[""] == "/"
    assert own["memory"].startswith("/process_api/")
    assert own["name=systemd"] == "/"


def test_v1_without_a_quota_is_no_limit() -> None:
    quota, period = capture("cgroup_v1_cpu.cfs_quota_us.unlimited"), capture("cgroup_v1_cpu.cfs_period_us")
    assert quota.strip() == "-1" and period.strip() == "100000"
    assert cpu_limit_cores(quota, period) is None


@pytest.mark.parametrize(
    ("text", "cores"),
    [
        ("max 100000\n", None),  # the default: no limit
        ("100000 100000\n", 1.0),
        ("150000 100000\n", 1.5),  # a Kubernetes limit of 1500m
        ("50000 100000\n", 0.5),
        ("400000 200000\n", 2.0),
        ("", None),
        ("max\n", None),
        ("100000\n", None),
        ("-5 100000\n", None),
        ("0 100000\n", None),
        ("100000 0\n", None),
        ("1e5 100000\n", None),
        ("100000 100000 7\n", None),
    ],
)
def test_cpu_max(text: str, cores: float | None) -> None:
    assert cpu_max_cores(text) == cores


def test_v1_quota_over_period() -> None:
    assert cpu_limit_cores("250000\n", "100000\n") == 2.5
    assert cpu_limit_cores("-1\n", "100000\n") is None
    assert cpu_limit_cores("", "100000\n") is None


def test_lines_of_another_shape_are_passed_over() -> None:
    assert own_cgroups("garbage\n3:cpu\n2:cpu:relative\n\n0::/a\n") == {"": "/a"}
    # A v1 hierarchy named 0 with controllers is still v1.
    assert own_cgroups("0:cpu:/x\n") == {"cpu": "/x"}
