"""The own cgroup's reader and its section (docs/behaviour.md §3.11) on fixture trees of cgroup v2 and v1: the
namespace root `/` and nested paths, limits on ancestors, limits at `max` / `-1`, a missing controller, files that
cannot be read. The v1 files are real captures of this machine, the v2 ones written by hand from cgroup-v2.rst
(`trees.py`); every expected value is worked out by hand from those texts."""

from __future__ import annotations

from pathlib import Path

from returns.result import Failure, Success

from orca.sample.compute.own_cgroup import CgroupReading, cgroup_section
from orca.sample.line_format import CgroupSample
from orca.sample.parse.cgroup import CpuPeriods
from orca.sample.shared.own_cgroup import OwnCgroup, own_cpu_limit
from tests.cgroup.trees import V2_CPU_STAT_WITHOUT_THE_CONTROLLER, Mount, Tree, v1_capture, v2_handwritten

V2 = [Mount("unified")]
V2_FILES = {
    "memory.current": v2_handwritten("memory.current"),  # 434765824
    "memory.stat": v2_handwritten("memory.stat"),  # inactive_file 152125440
    "memory.events": v2_handwritten("memory.events"),  # oom_kill 1
    "memory.max": v2_handwritten("memory.max"),  # 536870912
    "cpu.stat": v2_handwritten("cpu.stat.throttled"),  # usage_usec 8823474, nr_periods 4820, nr_throttled 3856
    "cpu.max": "50000 100000\n",
    "pids.current": v2_handwritten("pids.current"),  # 17
    "pids.max": "max\n",
}


def reading(tree: Tree) -> CgroupReading | None:
    reader = OwnCgroup(str(tree.proc))
    try:
        return reader.read().unwrap()
    finally:
        reader.close()


def test_v2_at_a_namespace_root(tmp_path: Path) -> None:
    tree = Tree(tmp_path, "0::/\n", V2)
    tree.write({f"unified/{name}": text for name, text in V2_FILES.items()})
    assert reading(tree) == CgroupReading(
        memory_used=434765824, inactive_file=152125440, memory_limit=536870912, oom_kills=1,
        cpu_usage_usec=8823474, cpu_limit=0.5, cpu_periods=CpuPeriods(4820, 3856), pids=17, pids_limit=None,
        cpu_usage_of=str(tree.cgroups / "unified/cpu.stat"), cpu_periods_of=str(tree.cgroups / "unified/cpu.stat"),
    )


def test_v2_section_between_two_readings(tmp_path: Path) -> None:
    """One CPU second more in 2 s under half a CPU: all of the quota; 10 of 20 periods throttled: 50 %."""
    tree = Tree(tmp_path, "0::/\n", V2)
    tree.write({f"unified/{name}": text for name, text in V2_FILES.items()})
    reader = OwnCgroup(str(tree.proc))
    before = reader.read().unwrap()
    tree.write({"unified/cpu.stat": "usage_usec 9823474\nnr_periods 4840\nnr_throttled 3866\n"})
    after = reader.read().unwrap()
    reader.close()
    assert cgroup_section(before, after, 2.0) == CgroupSample(
        mem=434765824 - 152125440, mem_max=536870912, cpu=100.0, cpu_max=0.5, throttled=50.0, oom_kill=1, pids=17,
        pids_max=None,
    )


def test_v2_nested_the_tightest_ancestor_wins(tmp_path: Path) -> None:
    """A Kubernetes pod's container: the limits on the pod's cgroup, the throttling counted there."""
    tree = Tree(tmp_path, "0::/kubepods/burstable/pod1/ctr\n", V2)
    pod = "unified/kubepods/burstable/pod1"
    tree.write({
        **{f"{pod}/ctr/{name}": text for name, text in V2_FILES.items()},
        f"{pod}/ctr/memory.max": "max\n",
        f"{pod}/ctr/cpu.max": "max 100000\n",
        f"{pod}/ctr/cpu.stat": "usage_usec 700\nnr_periods 0\nnr_throttled 0\n",
        f"{pod}/ctr/pids.max": "max\n",
        f"{pod}/memory.max": "268435456\n",
        f"{pod}/cpu.max": "150000 100000\n",
        f"{pod}/cpu.stat": "usage_usec 900\nnr_periods 30\nnr_throttled 12\n",
        f"{pod}/pids.max": "1024\n",
        "unified/kubepods/burstable/memory.max": "max\n",
        "unified/kubepods/memory.max": "1073741824\n",
        "unified/kubepods/cpu.max": "400000 100000\n",
    })
    found = reading(tree)
    assert found is not None
    assert (found.memory_limit, found.cpu_limit, found.pids_limit) == (268435456, 1.5, 1024)
    assert found.cpu_usage_usec == 700  # the container's own
    assert found.cpu_periods == CpuPeriods(30, 12)  # the pod's, whose quota it is
    assert own_cpu_limit(str(tree.proc)) == 1.5


V1_MOUNTS = [Mount("cpu", controllers="cpu"), Mount("cpuacct", controllers="cpuacct"),
             Mount("memory", controllers="memory"), Mount("pids", controllers="pids")]
CHILD = "orca-capture-9733"
MEMORY = "memory/process_api/fdc5542165b85e85bcf5deb24ecbf24c"


def v1_tree(tmp_path: Path) -> Tree:
    """This machine's limited child cgroup (`proc_self_cgroup.v1-limited-child`), its files as captured."""
    tree = Tree(tmp_path, v1_capture("proc_self_cgroup.v1-limited-child"), V1_MOUNTS)
    tree.write({
        f"{MEMORY}/{CHILD}/memory.usage_in_bytes": v1_capture("cgroup_v1_memory.usage_in_bytes.limited"),
        f"{MEMORY}/{CHILD}/memory.limit_in_bytes": v1_capture("cgroup_v1_memory.limit_in_bytes.limited"),
        f"{MEMORY}/{CHILD}/memory.stat": v1_capture("cgroup_v1_memory.stat.limited"),
        f"{MEMORY}/{CHILD}/memory.oom_control": v1_capture("cgroup_v1_memory.oom_control.oom-killed"),
        f"{MEMORY}/memory.limit_in_bytes": v1_capture("cgroup_v1_memory.limit_in_bytes.unlimited"),
        f"cpu/{CHILD}/cpu.cfs_quota_us": v1_capture("cgroup_v1_cpu.cfs_quota_us.half"),
        f"cpu/{CHILD}/cpu.cfs_period_us": v1_capture("cgroup_v1_cpu.cfs_period_us"),
        f"cpu/{CHILD}/cpu.stat": v1_capture("cgroup_v1_cpu.stat.throttled"),
        "cpu/cpu.cfs_quota_us": "-1\n",
        "cpu/cpu.cfs_period_us": v1_capture("cgroup_v1_cpu.cfs_period_us"),
        "cpu/cpu.stat": v1_capture("cgroup_v1_cpu.stat.unlimited"),
        f"cpuacct/{CHILD}/cpuacct.usage": v1_capture("cgroup_v1_cpuacct.usage"),
        f"pids/{CHILD}/pids.current": v1_capture("cgroup_v1_pids.current"),
        f"pids/{CHILD}/pids.max": v1_capture("cgroup_v1_pids.max.limited"),
    })
    return tree


def test_v1_nested_as_captured(tmp_path: Path) -> None:
    tree = v1_tree(tmp_path)
    assert reading(tree) == CgroupReading(
        memory_used=112959488, inactive_file=20480, memory_limit=268435456, oom_kills=1,
        cpu_usage_usec=1471490, cpu_limit=0.5, cpu_periods=CpuPeriods(31, 28), pids=3, pids_limit=64,
        cpu_usage_of=str(tree.cgroups / f"cpuacct/{CHILD}/cpuacct.usage"),
        cpu_periods_of=str(tree.cgroups / f"cpu/{CHILD}/cpu.stat"),
    )


def test_v1_section(tmp_path: Path) -> None:
    tree = v1_tree(tmp_path)
    reader = OwnCgroup(str(tree.proc))
    before = reader.read().unwrap()
    # Half a CPU second in 1 s under half a CPU, 10 periods all throttled, 4 processes.
    tree.write({f"cpuacct/{CHILD}/cpuacct.usage": "1971490652\n",
                f"cpu/{CHILD}/cpu.stat": "nr_periods 41\nnr_throttled 38\nthrottled_time 0\n",
                f"pids/{CHILD}/pids.current": "4\n"})
    after = reader.read().unwrap()
    reader.close()
    assert cgroup_section(before, after, 1.0) == CgroupSample(
        mem=112959488 - 20480, mem_max=268435456, cpu=100.0, cpu_max=0.5, throttled=100.0, oom_kill=1, pids=4,
        pids_max=64,
    )


def test_v1_a_containers_cgroup_mounted_as_the_root(tmp_path: Path) -> None:
    """Docker on v1 without a cgroup namespace: each hierarchy's mount is the container's cgroup. Its ancestors
    cannot be seen, but `hierarchical_memory_limit` carries their limit."""
    path = "/docker/1a2b"
    tree = Tree(tmp_path, f"4:cpu,cpuacct:{path}\n3:memory:{path}\n1:name=systemd:{path}\n",
                [Mount("cpu,cpuacct", root=path, controllers="cpu,cpuacct"),
                 Mount("memory", root=path, controllers="memory")])
    stat = v1_capture("cgroup_v1_memory.stat.limited")
    tree.write({
        "memory/memory.usage_in_bytes": "1216512\n",
        "memory/memory.limit_in_bytes": v1_capture("cgroup_v1_memory.limit_in_bytes.unlimited"),
        "memory/memory.stat": stat,
        "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
        "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
        "cpu,cpuacct/cpuacct.usage": "5000\n",
    })
    found = reading(tree)
    assert found is not None
    assert (found.memory_used, found.memory_limit, found.cpu_limit, found.cpu_usage_usec) == (1216512, 268435456,
                                                                                             None, 5)
    assert (found.pids, found.pids_limit) == (None, None)  # no pids hierarchy mounted


def test_no_limit_anywhere_is_no_section(tmp_path: Path) -> None:
    v2 = Tree(tmp_path / "v2", "0::/a\n", V2)
    v2.write({**{f"unified/a/{name}": text for name, text in V2_FILES.items()},
              "unified/a/memory.max": "max\n", "unified/a/cpu.max": "max 100000\n", "unified/a/pids.max": "64\n"})
    assert reading(v2) is None  # a pids limit alone is no reason for the section
    v1 = v1_tree(tmp_path / "v1")
    v1.write({f"{MEMORY}/{CHILD}/memory.limit_in_bytes": "-1\n",
              f"{MEMORY}/{CHILD}/memory.stat": "total_inactive_file 0\nhierarchical_memory_limit 9223372036854771712\n",
              f"cpu/{CHILD}/cpu.cfs_quota_us": "-1\n"})
    assert reading(v1) is None


def test_a_missing_controller_leaves_its_parts_out(tmp_path: Path) -> None:
    """A memory limit on a v2 cgroup without the cpu and pids controllers: `cpu.stat` has no bandwidth counters and
    there is no `cpu.max` or `pids.*` (this machine's own v2 hierarchy)."""
    tree = Tree(tmp_path, "0::/\n", V2)
    tree.write({
        **{f"unified/{name}": V2_FILES[name] for name in ("memory.current", "memory.stat", "memory.events",
                                                          "memory.max")},
        "unified/cpu.stat": V2_CPU_STAT_WITHOUT_THE_CONTROLLER,
    })
    found = reading(tree)
    assert found is not None
    assert (found.cpu_limit, found.cpu_periods, found.pids, found.pids_limit) == (None, None, None, None)
    assert found.cpu_usage_usec == 920059747
    assert cgroup_section(found, found, 5.0) == CgroupSample(
        mem=282640384, mem_max=536870912, cpu=None, cpu_max=None, throttled=None, oom_kill=1, pids=None,
        pids_max=None,
    )


def test_a_file_that_cannot_be_read_nulls_its_part(tmp_path: Path) -> None:
    """`memory.stat` a directory, `memory.events` a FIFO (never opened), an ancestor's `memory.max` a FIFO too: `mem`
    and `oom_kill` null, the limit the one that can be read."""
    tree = Tree(tmp_path, "0::/a\n", V2)
    tree.write({f"unified/a/{name}": text for name, text in V2_FILES.items() if name not in ("memory.stat",
                                                                                              "memory.events")})
    (tree.cgroups / "unified/a/memory.stat").mkdir()
    tree.fifo("unified/a/memory.events")
    tree.fifo("unified/memory.max")
    found = reading(tree)
    assert found is not None
    assert (found.memory_used, found.inactive_file, found.oom_kills, found.memory_limit) == (434765824, None, None,
                                                                                            536870912)
    section = cgroup_section(found, found, 1.0)
    assert section is not None and section.mem is None and section.oom_kill is None and section.cpu == 0.0


def test_a_file_over_the_bound_is_not_read(tmp_path: Path) -> None:
    """Every file is read to at most 1 MiB: a longer `memory.stat` (a hostile tree) counts as one that cannot be
    read."""
    tree = Tree(tmp_path, "0::/\n", V2)
    tree.write({f"unified/{name}": text for name, text in V2_FILES.items()})
    tree.write({"unified/memory.stat": "anon 1\n" * (1 << 18)})
    found = reading(tree)
    assert found is not None and found.inactive_file is None and found.memory_used == 434765824


def test_without_cgroups_there_is_no_limit(tmp_path: Path) -> None:
    (tmp_path / "self").mkdir()
    assert OwnCgroup(str(tmp_path)).read() == Success(None)
    assert own_cpu_limit(str(tmp_path)) is None


def test_a_cgroup_that_cannot_be_found_is_a_failure_naming_the_file(tmp_path: Path) -> None:
    tree = Tree(tmp_path, "0::/\n", V2)
    (tree.proc / "self" / "mountinfo").unlink()
    result = OwnCgroup(str(tree.proc)).read()
    assert isinstance(result, Failure) and result.failure().source == str(tree.proc / "self" / "mountinfo")
    tree.own("not a cgroup line\n")
    result = OwnCgroup(str(tree.proc)).read()
    assert isinstance(result, Failure) and result.failure().source == str(tree.proc / "self" / "cgroup")


def test_a_cgroup_directory_not_there_is_read_at_the_mount_point(tmp_path: Path) -> None:
    """A container that sees the host's path of its cgroup, its own cgroup mounted as the root."""
    tree = Tree(tmp_path, "0::/system.slice/docker-1a.scope\n", V2)
    tree.write({f"unified/{name}": text for name, text in V2_FILES.items()})
    found = reading(tree)
    assert found is not None and found.memory_limit == 536870912


def test_a_process_moved_is_found_in_its_new_cgroup_and_no_cpu_is_taken_across(tmp_path: Path) -> None:
    """The sampler moved from `a` to `b` between two readings: `b`'s limits, and, the two readings' CPU counters
    being two cgroups', no `cpu` or `throttled` in the line across the move; from the next reading on, `b`'s own."""
    tree = Tree(tmp_path, "0::/a\n", V2)
    tree.write({f"unified/{cgroup}/{name}": text for cgroup in ("a", "b") for name, text in V2_FILES.items()})
    tree.write({"unified/b/memory.max": "1048576\n",
                "unified/b/cpu.stat": "usage_usec 98823474\nnr_periods 9820\nnr_throttled 3856\n"})
    reader = OwnCgroup(str(tree.proc))
    in_a = reader.read().unwrap()
    tree.own("0::/b\n")
    in_b = reader.read().unwrap()
    tree.write({"unified/b/cpu.stat": "usage_usec 99323474\nnr_periods 9830\nnr_throttled 3861\n"})
    later_in_b = reader.read().unwrap()
    reader.close()
    assert in_a is not None and in_b is not None
    assert (in_a.memory_limit, in_b.memory_limit) == (536870912, 1048576)
    across = cgroup_section(in_a, in_b, 1.0)
    assert across is not None and (across.cpu, across.throttled, across.cpu_max) == (None, None, 0.5)
    # Half a CPU second in 1 s under half a CPU; 5 of 10 periods throttled.
    after = cgroup_section(in_b, later_in_b, 1.0)
    assert after is not None and (after.cpu, after.throttled) == (100.0, 50.0)


def test_a_quota_set_on_another_directory_starts_its_throttling_afresh(tmp_path: Path) -> None:
    """The tightest quota moves from the cgroup to its parent: the periods counted are the parent's from then on."""
    tree = Tree(tmp_path, "0::/pod/ctr\n", V2)
    tree.write({
        **{f"unified/pod/ctr/{name}": text for name, text in V2_FILES.items()},
        "unified/pod/cpu.max": "max 100000\n",
        "unified/pod/cpu.stat": "usage_usec 900\nnr_periods 9000\nnr_throttled 9000\n",
    })
    reader = OwnCgroup(str(tree.proc))
    own_quota = reader.read().unwrap()
    tree.write({"unified/pod/cpu.max": "25000 100000\n"})
    parents_quota = reader.read().unwrap()
    reader.close()
    section = cgroup_section(own_quota, parents_quota, 1.0)
    assert section is not None and (section.cpu_max, section.throttled) == (0.25, None)


V1_APART = [Mount("cpu", controllers="cpu"), Mount("cpuacct", controllers="cpuacct")]


def test_v1_cpuacct_mounted_apart_counts_only_when_it_is_the_quotas_cgroup(tmp_path: Path) -> None:
    """cpu and cpuacct on two hierarchies (this machine's layout): a sampler in a cpu cgroup with a quota of a
    quarter of a CPU but at the cpuacct root would count the whole machine's CPU against that quarter."""
    files = {
        "cpu/limited/cpu.cfs_quota_us": "25000\n",
        "cpu/limited/cpu.cfs_period_us": "100000\n",
        "cpu/limited/cpu.stat": v1_capture("cgroup_v1_cpu.stat.throttled"),
        "cpu/cpu.cfs_quota_us": "-1\n",
        "cpu/cpu.cfs_period_us": "100000\n",
        "cpuacct/cpuacct.usage": "987654321000\n",
        "cpuacct/limited/cpuacct.usage": v1_capture("cgroup_v1_cpuacct.usage"),  # 1471490652
    }
    at_the_root = Tree(tmp_path / "apart", "2:cpuacct:/\n1:cpu:/limited\n", V1_APART)
    at_the_root.write(files)
    found = reading(at_the_root)
    assert found is not None and (found.cpu_limit, found.cpu_usage_usec) == (0.25, None)
    assert found.cpu_periods == CpuPeriods(31, 28)
    same_path = Tree(tmp_path / "same", "2:cpuacct:/limited\n1:cpu:/limited\n", V1_APART)
    same_path.write(files)
    found = reading(same_path)
    assert found is not None and (found.cpu_limit, found.cpu_usage_usec) == (0.25, 1471490)


def test_a_hybrid_machine_counts_cpu_where_its_quota_is(tmp_path: Path) -> None:
    """The cpu controller on v2, cpuacct still on a v1 hierarchy: the usage is v2's `cpu.stat`, beside the quota."""
    tree = Tree(tmp_path, "2:cpuacct:/\n0::/a\n", [Mount("cpuacct", controllers="cpuacct"), *V2])
    tree.write({
        **{f"unified/a/{name}": text for name, text in V2_FILES.items()},
        "cpuacct/cpuacct.usage": "987654321000\n",
    })
    found = reading(tree)
    assert found is not None and (found.cpu_limit, found.cpu_usage_usec) == (0.5, 8823474)
