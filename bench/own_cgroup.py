"""What the `cgroup` section costs per line (bench/README.md; docs/behaviour.md §3.11): the own cgroup's reading
and its section, against the whole line of a `Sampler` taken in the same process, in the same run.

    .venv/bin/python -m bench.own_cgroup [--repeats N] [--reads N]

Measured twice where it can be: in this process's own cgroup as it is (a plain host has no limit: only the limit
files are read), and, as root on cgroup v1, in a child process moved into a cgroup with a memory limit, a CPU quota
(4 CPUs, so the measurement is never throttled) and a pids limit in each of the memory, cpu, cpuacct and pids
hierarchies, made under the process's own cgroups and removed afterwards. CPU is the process's own
(`time.process_time`), the median of the repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.cgroup.trees import removed

from orca.sample import Sampler
from orca.sample.compute.own_cgroup import cgroup_section
from orca.sample.shared.own_cgroup import OwnCgroup

V1 = ("memory", "cpu", "cpuacct", "pids")


def per_call(call: Callable[[], object], calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - start) / calls


def figures(repeats: int, reads: int) -> dict[str, float | bool]:
    """Seconds of CPU per line: the own cgroup's reading and section, and a Sampler's whole line."""
    reader = OwnCgroup()
    previous = reader.read().value_or(None)

    def section() -> None:
        nonlocal previous
        current = reader.read().value_or(None)
        cgroup_section(previous, current, 5.0)
        previous = current

    with tempfile.TemporaryDirectory() as tmp, Sampler(0, "", [tmp]) as sampler:
        own, line = [], []
        for _ in range(repeats):
            own.append(per_call(section, reads))
            line.append(per_call(sampler.line, reads // 10))
    reader.close()
    return {"own": statistics.median(own), "line": statistics.median(line), "limited": previous is not None}


def v1_points() -> dict[str, str]:
    points: dict[str, str] = {}
    for entry in Path("/proc/self/mountinfo").read_text().splitlines():
        before, _, after = entry.partition(" - ")
        fstype, _source, options = after.split(" ")
        for controller in V1:
            if fstype == "cgroup" and controller in options.split(","):
                points.setdefault(controller, before.split(" ")[4])
    own = {}
    for entry in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = entry.split(":", 2)
        for controller in controllers.split(","):
            own[controller] = path
    return {controller: os.path.join(points[controller], own[controller].lstrip("/"))
            for controller in V1 if controller in points and controller in own}


def in_a_limited_cgroup(repeats: int, reads: int) -> dict[str, float | bool] | None:
    """`figures` of a child process inside a limited v1 cgroup; None where one cannot be made."""
    parents = v1_points()
    if os.geteuid() != 0 or len(parents) < len(V1):
        return None
    made: list[Path] = []
    try:
        for controller in V1:
            directory = Path(parents[controller]) / f"orca-bench-{os.getpid()}"
            if directory not in made:
                directory.mkdir()
                made.append(directory)
        memory, cpu, pids = (Path(parents[name]) / made[0].name for name in ("memory", "cpu", "pids"))
        (memory / "memory.limit_in_bytes").write_text(str(1 << 30))
        (cpu / "cpu.cfs_quota_us").write_text("400000")
        (pids / "pids.max").write_text("256")
        procs = " ".join(str(directory / "cgroup.procs") for directory in made)
        code = (f"import json, sys; [open(p, 'w').write('0') for p in {procs.split()!r}]; "
                f"from bench.own_cgroup import figures; print(json.dumps(figures({repeats}, {reads})))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
        result: dict[str, float | bool] = json.loads(done.stdout)
        return result
    finally:
        removed(made)


def report(where: str, result: dict[str, float | bool]) -> None:
    own, line = float(result["own"]), float(result["line"])
    section = "with the section" if result["limited"] else "no limit: no section"
    print(f"{where:<34} {section:<22} own cgroup {own * 1e6:7.1f} µs   line {line * 1e6:7.1f} µs   "
          f"{100 * own / line:5.1f}% of the line")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench.own_cgroup")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reads", type=int, default=2000)
    args = parser.parse_args(argv)
    report("this process's own cgroup", figures(args.repeats, args.reads))
    limited = in_a_limited_cgroup(args.repeats, args.reads)
    if limited is None:
        print("a limited cgroup: not measured (needs root and cgroup v1's memory, cpu, cpuacct, pids)")
    else:
        report("a limited cgroup v1 child", limited)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
