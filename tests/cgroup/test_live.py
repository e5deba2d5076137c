"""The own cgroup's reader inside a real cgroup under real limits (docs/behaviour.md §3.11), as root: a child cgroup
with a 256 MiB memory limit, a quota of half a CPU and a pids limit, a workload moved into it (a process holding
memory, two spinning ones) and the reader run inside it (`workload.py`), read twice a known interval apart; then a
process passes the memory limit and is killed for it. The cgroups are removed afterwards.

On cgroup v1 the child is made under the test's own cgroup in each of the memory, cpu, cpuacct and pids hierarchies
(so the memory limit is the child's, below an ancestor without one); on cgroup v2 beside the test's own cgroup (a
cgroup with processes cannot give its children controllers), where the machine offers the memory, cpu and pids
controllers, enabling them down to there for the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cgroup.trees import removed

pytestmark = [pytest.mark.slow, pytest.mark.requires_proc]

WORKLOAD = Path(__file__).with_name("workload.py")
MEMORY_LIMIT = 256 * 2**20
HOLD = 160 * 2**20
QUOTA_US, PERIOD_US = 50_000, 100_000
PIDS_LIMIT = 64
SECONDS = 2.0
V1_CONTROLLERS = ("memory", "cpu", "cpuacct", "pids")


def mounts() -> list[tuple[str, str, set[str]]]:
    """(file system type, mount point, super options) of each cgroup mount of this process."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        before, _, after = line.partition(" - ")
        fstype, _source, options = after.split(" ")
        if fstype in ("cgroup", "cgroup2"):
            found.append((fstype, before.split(" ")[4], set(options.split(","))))
    return found


def own_paths() -> dict[str, str]:
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") or [""]:
            paths[controller] = path
    return paths


def write(path: Path, text: str) -> None:
    path.write_text(text + "\n")


def run_workload(usage_file: Path, procs: list[Path]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(WORKLOAD), str(SECONDS), str(usage_file), str(HOLD), *map(str, procs)],
        capture_output=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def assert_against_limits(result: dict[str, Any]) -> None:
    section = result["section"]
    assert section["mem_max"] == MEMORY_LIMIT
    assert section["cpu_max"] == QUOTA_US / PERIOD_US
    assert section["pids_max"] == PIDS_LIMIT
    assert abs(section["mem"] - result["kernel_usage"]) <= 0.05 * result["kernel_usage"], result
    assert section["mem"] >= HOLD
    # Two spinning processes against half a CPU use all of it, and are throttled in most periods.
    assert 85.0 <= section["cpu"] <= 115.0, result
    assert section["throttled"] > 0.0, result
    assert 4 <= section["pids"] <= PIDS_LIMIT  # the workload's three processes and the reader
    assert result["past_limit_status"] == -9  # SIGKILL, from the OOM killer
    assert result["third"]["oom_kills"] >= result["second"]["oom_kills"] + 1, result


@contextlib.contextmanager
def v1_cgroup() -> Iterator[tuple[dict[str, Path], list[Path]]]:
    """A child cgroup of this process's own in each v1 hierarchy of `V1_CONTROLLERS`: controller -> its directory,
    and the directories (one per hierarchy) to remove."""
    if os.geteuid() != 0:
        pytest.skip("making cgroups needs root")
    points = {controller: point for fstype, point, options in mounts() if fstype == "cgroup"
              for controller in V1_CONTROLLERS if controller in options}
    missing = [controller for controller in V1_CONTROLLERS if controller not in points]
    if missing:
        pytest.skip(f"no cgroup v1 hierarchy of {', '.join(missing)} on this machine")
    own = own_paths()
    name = f"orca-live-{os.getpid()}"
    made: dict[str, Path] = {}
    made_dirs: list[Path] = []
    try:
        for controller in V1_CONTROLLERS:
            directory = Path(points[controller]) / own[controller].lstrip("/") / name
            if directory not in made_dirs:
                directory.mkdir()
                made_dirs.append(directory)
            made[controller] = directory
        yield made, made_dirs
    finally:
        removed(made_dirs)


def test_v1_a_limited_cgroup_read_from_inside() -> None:
    with v1_cgroup() as (made, _):
        write(made["memory"] / "memory.limit_in_bytes", str(MEMORY_LIMIT))
        if (made["memory"] / "memory.memsw.limit_in_bytes").exists():
            write(made["memory"] / "memory.memsw.limit_in_bytes", str(MEMORY_LIMIT))  # no swapping past the limit
        write(made["cpu"] / "cpu.cfs_period_us", str(PERIOD_US))
        write(made["cpu"] / "cpu.cfs_quota_us", str(QUOTA_US))
        write(made["cpu"] / "cpu.shares", "8192")  # the quota, not the machine's other work, is what holds it back
        write(made["pids"] / "pids.max", str(PIDS_LIMIT))
        procs = list(dict.fromkeys(directory / "cgroup.procs" for directory in made.values()))
        result = run_workload(made["memory"] / "memory.usage_in_bytes", procs)
    assert_against_limits(result)
    assert result["first"]["cpu_periods"]["periods"] < result["second"]["cpu_periods"]["periods"]


V2_CONTROLLERS = ("memory", "cpu", "pids")


def v2_parent() -> tuple[Path, Path]:
    """The v2 hierarchy's mount point and the parent of this process's own cgroup there, under which a child can
    take the memory, cpu and pids controllers; the test is skipped when the machine does not offer them."""
    if os.geteuid() != 0:
        pytest.skip("making cgroups needs root")
    points = [Path(point) for fstype, point, _ in mounts() if fstype == "cgroup2"]
    if not points:
        pytest.skip("no cgroup v2 hierarchy on this machine")
    offered = set((points[0] / "cgroup.controllers").read_text().split())
    if not set(V2_CONTROLLERS) <= offered:
        pytest.skip(f"the cgroup v2 hierarchy at {points[0]} offers only {' '.join(sorted(offered)) or 'nothing'}")
    own = own_paths().get("", "/")
    parent = (points[0] / own.lstrip("/")).parent if own != "/" else points[0]
    return points[0], parent


@contextlib.contextmanager
def v2_controllers(top: Path, parent: Path) -> Iterator[None]:
    """The memory, cpu and pids controllers enabled for the children of each cgroup from `top` down to `parent`
    (each one's `cgroup.subtree_control`), and disabled again afterwards where the test enabled them."""
    chain = [parent, *parent.parents]
    chain = list(reversed(chain[: chain.index(top) + 1]))
    enabled: list[tuple[Path, str]] = []
    try:
        for directory in chain:
            present = set((directory / "cgroup.subtree_control").read_text().split())
            for controller in V2_CONTROLLERS:
                if controller not in present:
                    try:
                        write(directory / "cgroup.subtree_control", f"+{controller}")
                    except OSError as error:  # a cgroup with processes of its own cannot give its children any
                        pytest.skip(f"cannot enable {controller} under {directory}: {error.strerror}")
                    enabled.append((directory, controller))
        yield
    finally:
        for directory, controller in reversed(enabled):
            with contextlib.suppress(OSError):
                write(directory / "cgroup.subtree_control", f"-{controller}")


def test_v2_a_limited_cgroup_read_from_inside() -> None:
    top, parent = v2_parent()
    with v2_controllers(top, parent):
        directory = parent / f"orca-live-{os.getpid()}"
        directory.mkdir()
        try:
            write(directory / "memory.max", str(MEMORY_LIMIT))
            if (directory / "memory.swap.max").exists():
                write(directory / "memory.swap.max", "0")  # no swapping past the limit
            write(directory / "cpu.max", f"{QUOTA_US} {PERIOD_US}")
            write(directory / "cpu.weight", "10000")  # the quota, not the machine's other work, holds it back
            write(directory / "pids.max", str(PIDS_LIMIT))
            result = run_workload(directory / "memory.current", [directory / "cgroup.procs"])
        finally:
            removed([directory])
    assert_against_limits(result)


def test_v1_the_sampler_in_a_limited_cgroup_writes_the_section(tmp_path: Path) -> None:
    """`orca sample` started inside the limited cgroup: every line carries `cgroup`, last but `start`, against the
    limits; the same sampler outside it (this machine's own cgroup has no memory or CPU limit) writes no such key."""
    out, outside = tmp_path / "inside.jsonl", tmp_path / "outside.jsonl"
    sample = [sys.executable, "-m", "orca.sample", "--count", "3", "--seconds", "0.3", "--dirs", str(tmp_path)]
    with v1_cgroup() as (made, _):
        write(made["memory"] / "memory.limit_in_bytes", str(MEMORY_LIMIT))
        write(made["cpu"] / "cpu.cfs_period_us", str(PERIOD_US))
        write(made["cpu"] / "cpu.cfs_quota_us", str(QUOTA_US))
        write(made["pids"] / "pids.max", str(PIDS_LIMIT))
        procs = " ".join(str(p) for p in dict.fromkeys(directory / "cgroup.procs" for directory in made.values()))
        script = f'for procs in {procs}; do echo $$ > "$procs"; done; exec "$@"'
        done = subprocess.run(["sh", "-c", script, "sh", *sample, "--out", str(out)], capture_output=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr.decode()
    subprocess.run([*sample, "--out", str(outside)], check=True, timeout=60)
    inside = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(inside) == 3
    for line in inside:
        assert list(line)[-2:] == ["cgroup", "start"], line  # no run: none but the sampler
        section = line["cgroup"]
        assert (section["mem_max"], section["cpu_max"], section["pids_max"]) == (MEMORY_LIMIT, 0.5, PIDS_LIMIT)
        assert 0 < section["mem"] < MEMORY_LIMIT and 1 <= section["pids"] <= PIDS_LIMIT
        assert section["cpu"] is not None and section["cpu"] >= 0.0
    assert all("cgroup" not in json.loads(line) for line in outside.read_text().splitlines())


def v1_points(*controllers: str) -> dict[str, Path]:
    """Controller -> this process's own cgroup directory in its v1 hierarchy; the test is skipped without root or
    without such a hierarchy for each."""
    if os.geteuid() != 0:
        pytest.skip("making cgroups needs root")
    points = {controller: point for fstype, point, options in mounts() if fstype == "cgroup"
              for controller in controllers if controller in options}
    if len(set(points.values())) < len(controllers):
        pytest.skip(f"{', '.join(controllers)} are not each on a v1 hierarchy of their own on this machine")
    own = own_paths()
    return {controller: Path(point) / own[controller].lstrip("/") for controller, point in points.items()}


def sampler_lines(out: Path, count: int, sampler: subprocess.Popen[bytes]) -> list[dict[str, Any]]:
    """The sampler's lines once it has written at least `count`."""
    while True:
        found = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        if len(found) >= count:
            return found
        assert sampler.poll() is None, "the sampler ended early"
        time.sleep(0.05)


def test_v1_cpu_and_cpuacct_apart_a_sampler_at_the_cpuacct_root_has_no_cpu(tmp_path: Path) -> None:
    """This machine mounts cpu and cpuacct apart: a sampler in a cpu cgroup with a quota of a quarter of a CPU but
    left at the cpuacct root would count every process of the machine against that quarter."""
    own = v1_points("cpu", "cpuacct")
    limited = own["cpu"] / f"orca-live-{os.getpid()}"
    limited.mkdir()
    out = tmp_path / "m.jsonl"
    try:
        write(limited / "cpu.cfs_period_us", str(PERIOD_US))
        write(limited / "cpu.cfs_quota_us", str(PERIOD_US // 4))
        script = f'echo $$ > {limited / "cgroup.procs"}; exec "$@"'
        done = subprocess.run(["sh", "-c", script, "sh", sys.executable, "-m", "orca.sample", "--count", "2",
                               "--seconds", "0.2", "--dirs", str(tmp_path), "--out", str(out)],
                              capture_output=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr.decode()
    finally:
        removed([limited])
    sections = [json.loads(line)["cgroup"] for line in out.read_text().splitlines()]
    assert [(section["cpu_max"], section["cpu"]) for section in sections] == [(0.25, None), (0.25, None)]
    assert all(section["throttled"] is not None for section in sections)  # the periods are the quota's own


def test_v1_the_line_after_the_sampler_is_moved_has_no_cpu(tmp_path: Path) -> None:
    """A sampler moved from one limited cgroup to another: the line across the move would take the first cgroup's
    CPU counter from the second's (here the second has a spinner's CPU second in it); it has no `cpu` or
    `throttled`, and the lines before and after it are the sampler's own small share."""
    own = v1_points("cpu", "cpuacct")
    name = f"orca-live-{os.getpid()}"
    cgroups = {which: [own["cpu"] / f"{name}-{which}", own["cpuacct"] / f"{name}-{which}"] for which in "ab"}
    out, until = tmp_path / "m.jsonl", tmp_path / "until"
    sampler = None
    try:
        for directory in [*cgroups["a"], *cgroups["b"]]:
            directory.mkdir()
        write(cgroups["a"][0] / "cpu.cfs_quota_us", str(QUOTA_US))
        into = {which: " ".join(f'echo $$ > {directory / "cgroup.procs"};' for directory in cgroups[which])
                for which in "ab"}
        spin = "import time\nend = time.process_time() + 1.0\nwhile time.process_time() < end:\n    pass\n"
        spinner = subprocess.Popen(["sh", "-c", into["b"] + ' exec "$@"', "sh", sys.executable, "-c", spin])
        sampler = subprocess.Popen(["sh", "-c", into["a"] + ' exec "$@"', "sh", sys.executable, "-m", "orca.sample",
                                    "--seconds", "0.2", "--until", str(until), "--dirs", str(tmp_path),
                                    "--out", str(out)], stderr=subprocess.PIPE)
        assert spinner.wait(timeout=60) == 0
        write(cgroups["b"][0] / "cpu.cfs_quota_us", str(QUOTA_US))
        before = len(sampler_lines(out, 2, sampler))
        for directory in cgroups["b"]:
            write(directory / "cgroup.procs", str(sampler.pid))
        sampler_lines(out, before + 3, sampler)
        until.touch()
        _, err = sampler.communicate(timeout=60)
        assert sampler.returncode == 0, err.decode()
    finally:
        if sampler is not None and sampler.poll() is None:
            sampler.kill()
            sampler.wait()
        removed([*cgroups["a"], *cgroups["b"]])
    shares = [json.loads(line)["cgroup"]["cpu"] for line in out.read_text().splitlines()]
    assert shares.count(None) == 1, shares
    assert all(share is None or 0.0 <= share <= 150.0 for share in shares), shares
