"""The baseline of the benchmarks (bench/README.md): the sampler a Python user writes with psutil, writing the
line of docs/behaviour.md §3 (without the extensions) to a file.

It takes the same readings as `orca sample` (per-core CPU times, memory, swap, disk usage of the directories, whole
disks' and interfaces' counters, the run's tree by `Process.children(recursive=True)` and `memory_info()`) at the
same interval, with the same first line at 0.2 s, so the two can be compared line for line.

`--per-process` reads what `orca sample`'s `run` holds too: each of the run's processes' `cpu_times()`,
`memory_info()` and `io_counters()`, and makes from their differences the run's CPU and I/O and its top processes
(the three largest, the three busiest, the two with the most I/O), as a psutil user would write it.

    python bench/psutil_sampler.py --out FILE [--pid PID] [--match ARGV0] [--dirs D,...] [--seconds S] [--count N]
                                   [--per-process]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import time
from collections.abc import Sequence
from typing import Any

import psutil


def _share(prev: Sequence[float], cur: Sequence[float]) -> tuple[float, float, float, float, float]:
    """(user, system, iowait, steal, total) deltas of one scputimes pair."""
    d = [max(0.0, c - p) for p, c in zip(prev, cur, strict=True)]
    names = psutil.cpu_times()._fields
    f = dict(zip(names, d, strict=True))
    total = sum(f.get(k, 0.0) for k in ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"))
    return (
        f.get("user", 0.0) + f.get("nice", 0.0),
        f.get("system", 0.0) + f.get("irq", 0.0) + f.get("softirq", 0.0),
        f.get("iowait", 0.0),
        f.get("steal", 0.0),
        total,
    )


def _run_processes(pid: int, match: str) -> dict[int, psutil.Process]:
    procs: dict[int, psutil.Process] = {}
    if pid > 0:
        try:
            root = psutil.Process(pid)
            procs[root.pid] = root
            for child in root.children(recursive=True):
                procs[child.pid] = child
        except psutil.Error:
            pass
    if match:
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = proc.info["cmdline"]
            if cmdline and cmdline[0] == match:
                procs[proc.pid] = proc
    return procs


def _run_rss(pid: int, match: str) -> int:
    total = 0
    for proc in _run_processes(pid, match).values():
        with contextlib.suppress(psutil.Error):
            total += proc.memory_info().rss
    return total


Counters = tuple[float, float, int, int, int, str]
"""(create time, CPU seconds with the waited-for children's, bytes read, bytes written, resident bytes, name)."""


def _counters(proc: psutil.Process) -> Counters | None:
    try:
        with proc.oneshot():
            times, memory, name, started = proc.cpu_times(), proc.memory_info(), proc.name(), proc.create_time()
        io = proc.io_counters()
    except psutil.Error:
        return None
    cpu = times.user + times.system + times.children_user + times.children_system
    return started, cpu, io.read_bytes, io.write_bytes, memory.rss, name


def _run_section(before: dict[int, Counters], now: dict[int, Counters], dt: float, cores: int) -> dict[str, Any]:
    """The run's CPU (% of all cores), I/O and top processes from two readings of each process's counters."""
    used: dict[int, tuple[float, int, int]] = {}
    for pid, (started, cpu, read, written, _, _) in now.items():
        then = before.get(pid)
        if then is None or then[0] != started:
            used[pid] = (cpu, read, written)
        else:
            used[pid] = (max(0.0, cpu - then[1]), max(0, read - then[2]), max(0, written - then[3]))
    chosen = sorted(now, key=lambda pid: now[pid][4], reverse=True)[:3]
    busy = [pid for pid in sorted(used, key=lambda pid: used[pid][0], reverse=True) if pid not in chosen][:3]
    moved = [pid for pid in sorted(used, key=lambda pid: used[pid][1] + used[pid][2], reverse=True)
             if pid not in chosen and pid not in busy][:2]

    def percent(seconds: float) -> float:
        return round(100 * seconds / (dt * cores), 1) if dt > 0 and cores else 0.0

    return {
        "cpu": percent(sum(use[0] for use in used.values())),
        "procs": len(now),
        "io": {"read": round(sum(use[1] for use in used.values()) / dt),
               "write": round(sum(use[2] for use in used.values()) / dt)},
        "top": [{"pid": pid, "name": now[pid][5], "cpu": percent(used[pid][0]), "rss": now[pid][4],
                 "read": round(used[pid][1] / dt), "write": round(used[pid][2] / dt)}
                for pid in [*chosen, *busy, *moved]],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--pid", type=int, default=0)
    parser.add_argument("--match", default="")
    parser.add_argument("--dirs", default=os.environ.get("TMPDIR", "/tmp"))
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--per-process", action="store_true", help="the run's CPU, I/O and top processes too")
    args = parser.parse_args()
    dirs = [d for d in args.dirs.split(",") if d]
    me = psutil.Process()
    host = socket.gethostname()
    cores = psutil.cpu_count() or 0

    def readings() -> tuple[float, Any, Any, Any, Any, dict[int, Counters]]:
        processes: dict[int, Counters] = {}
        if args.per_process:
            for pid, proc in _run_processes(args.pid, args.match).items():
                counters = _counters(proc)
                if counters is not None:
                    processes[pid] = counters
        return (
            time.monotonic(),
            psutil.cpu_times(percpu=True),
            psutil.cpu_times(),
            psutil.disk_io_counters(perdisk=False),
            psutil.net_io_counters(pernic=False),
            processes,
        )

    prev = readings()
    start = prev[0]
    written = 0
    with open(args.out, "a", encoding="utf-8") if args.out != "-" else os.fdopen(1, "w", closefd=False) as out:
        while args.count <= 0 or written < args.count:
            due = start + 0.2 + written * args.seconds
            time.sleep(max(0.0, due - time.monotonic()))
            cur = readings()
            dt = cur[0] - prev[0]
            user, system, iowait, steal, total = _share(prev[2], cur[2])
            busiest = 0.0
            for p, c in zip(prev[1], cur[1], strict=False):
                _u, _s, w, _st, t = _share(p, c)
                idle = max(0.0, c.idle - p.idle)
                busiest = max(busiest, 100.0 * (t - idle - w) / t if t > 0 else 0.0)
            vm = psutil.virtual_memory()
            sw = psutil.swap_memory()
            seen: set[int] = set()
            disks = []
            for d in dirs:
                try:
                    dev = os.stat(d).st_dev
                    if dev in seen:
                        continue
                    seen.add(dev)
                    du = psutil.disk_usage(d)
                    disks.append({"path": d, "total": du.total, "used": du.used, "free": du.free})
                except OSError:
                    pass
            io_prev, io_cur = prev[3], cur[3]
            net_prev, net_cur = prev[4], cur[4]
            times = me.cpu_times()
            line = {
                "v": 1,
                "t": round(time.time(), 3),
                "dt": round(dt, 3),
                "host": host,
                "cores": cores,
                "cpu": {
                    "user": round(100 * user / total, 1) if total else 0.0,
                    "system": round(100 * system / total, 1) if total else 0.0,
                    "iowait": round(100 * iowait / total, 1) if total else 0.0,
                    "steal": round(100 * steal / total, 1) if total else 0.0,
                    "busiest": round(busiest, 1),
                },
                "mem": {
                    "total": vm.total,
                    "used": vm.total - vm.available,
                    "available": vm.available,
                    "cache": getattr(vm, "cached", 0),
                    "swap_total": sw.total,
                    "swap_used": sw.used,
                    "rss": sum(c[4] for c in cur[5].values()) if args.per_process else _run_rss(args.pid, args.match),
                },
                "disk": disks,
                "io": {
                    "read": round((io_cur.read_bytes - io_prev.read_bytes) / dt) if io_cur and io_prev else 0,
                    "write": round((io_cur.write_bytes - io_prev.write_bytes) / dt) if io_cur and io_prev else 0,
                },
                "net": {
                    "in": round((net_cur.bytes_recv - net_prev.bytes_recv) / dt),
                    "out": round((net_cur.bytes_sent - net_prev.bytes_sent) / dt),
                },
                "self_cpu": round(times.user + times.system, 2),
            }
            if args.per_process:
                line["run"] = _run_section(prev[5], cur[5], dt, cores)
            prefix = "orca-sample " if args.out == "-" else ""
            out.write(prefix + json.dumps(line, separators=(",", ":")) + "\n")
            out.flush()
            written += 1
            prev = cur
            if args.pid > 0 and not psutil.pid_exists(args.pid):
                break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
