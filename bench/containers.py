"""What `--cgroup` costs per container and line: 20 containers with throttled, mem_max, pids, io and net, against
the same 20 containers with only the first fields (memory, cpu, oom_kill) and against a line without `--cgroup`.

    .venv/bin/python -m bench.containers [--repeats N] [--lines N]

The containers are a fixture tree of cgroup v2 files on disk (this machine's cgroup v2 hierarchy has no memory
controller), so every file is read through its path each line: the figure is the upper bound of a host whose cgroup
files are kept open. Their `cgroup.procs` names a real `sleep` in a network namespace of its own where `unshare -n`
works, so `net` is read from the real /proc. Beside them: one read of a kernel-generated file through a kept
descriptor against open, read and close, which is what keeping a container's files open saves.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from tests.containers.fixtures import (
    CgroupFiles,
    in_own_network_namespace,
    systemd_dir,
    write_cgroup,
    write_limits,
)

from bench.run import ORCA, cpu_per_line, interleaved, row, us
from orca.sample.shared.bounded import KeptFiles
from orca.sample.shell.machine.containers import read_bounded

CONTAINERS = 20
MIB = 1 << 20


def container_tree(root: Path, containers: int, second_round: bool, pid: int | None) -> None:
    """`containers` Docker containers under `root`; with `second_round`, each also has memory.max, pids.current, a
    two-device io.stat and a cgroup.procs naming `pid` (or a pid that does not exist)."""
    for number in range(containers):
        directory = systemd_dir(root, f"{number:02x}" + "0" * 62)
        limited = CgroupFiles(400 * MIB, 30 * MIB, 50 * MIB, 0, 1_000_000 + number, nr_periods=1000, nr_throttled=90)
        write_cgroup(directory, limited if second_round else CgroupFiles(400 * MIB, 30 * MIB, 50 * MIB, 0, 7))
        if second_round:
            write_limits(directory, memory_max=str(512 * MIB), pids=12, io={"254:0": (MIB, MIB), "252:0": (MIB, MIB)},
                         procs=[pid if pid is not None else 4_194_304])


def per_read(path: str, reads: int) -> tuple[float, float]:
    """Seconds of CPU per read of `path`: open, read and close (`read_bounded`) and pread on a kept descriptor."""
    files = KeptFiles(8)
    files.read(path)
    start = time.process_time()
    for _ in range(reads):
        read_bounded(path)
    reopened = (time.process_time() - start) / reads
    start = time.process_time()
    for _ in range(reads):
        files.read(path)
    kept = (time.process_time() - start) / reads
    return reopened, kept


def cgroup2_file() -> str | None:
    """A kernel-generated file of a cgroup v2 hierarchy (its `cpu.stat`), where one is mounted."""
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2" and os.path.exists(f"{fields[1]}/cpu.stat"):
                return f"{fields[1]}/cpu.stat"
    return None


def container_figures(repeats: int, lines: int) -> None:
    """Prints a table: kept against reopened reads, then the CPU per line with and without the containers."""
    print("\n| figure | orca sample | against | ratio | budget | |")
    print("|---|---|---|---|---|---|")
    for path in (cgroup2_file(), "/proc/self/net/dev"):
        if path is not None:
            reopened, kept = per_read(path, 5000)
            row(f"one read of {path}: kept descriptor (pread) against open, read, close", us(kept), us(reopened),
                f"{kept / reopened:.2f}", "kept < reopened", kept < reopened)
    with tempfile.TemporaryDirectory() as tmp, in_own_network_namespace() as pid:
        today, extended = Path(tmp) / "today", Path(tmp) / "extended"
        container_tree(today, CONTAINERS, second_round=False, pid=None)
        container_tree(extended, CONTAINERS, second_round=True, pid=pid)
        got = interleaved(repeats, {
            "plain": partial(cpu_per_line, ORCA, lines, ["--dirs", tmp]),
            "today": partial(cpu_per_line, ORCA, lines, ["--dirs", tmp, "--cgroup", str(today)]),
            "extended": partial(cpu_per_line, ORCA, lines, ["--dirs", tmp, "--cgroup", str(extended)]),
        })
    net = "with net" if pid is not None else "no net (no unshare -n here)"
    row("CPU per line, no --cgroup", us(got["plain"]), "", "", "", None)
    row(f"CPU per line, --cgroup, {CONTAINERS} containers, first fields only", us(got["today"]), us(got["plain"]),
        f"{got['today'] / got['plain']:.2f}", "", None)
    row(f"CPU per line, --cgroup, {CONTAINERS} containers, every field ({net})", us(got["extended"]),
        us(got["today"]), f"{got['extended'] / got['today']:.2f}", "", None)
    for label, cost in (("first fields only", (got["today"] - got["plain"]) / CONTAINERS),
                        ("every field", (got["extended"] - got["plain"]) / CONTAINERS),
                        ("the new fields alone", (got["extended"] - got["today"]) / CONTAINERS)):
        row(f"  per container and line, {label}", us(cost), "", "", "", None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="runs of each measurement; medians are printed")
    parser.add_argument("--lines", type=int, default=200, help="lines per CPU measurement")
    args = parser.parse_args(argv)
    print(f"host: {os.cpu_count()} cores, python {sys.version.split()[0]}; "
          f"medians of {args.repeats} interleaved runs")
    container_figures(args.repeats, args.lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
