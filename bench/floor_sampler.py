"""The floor: the least Python that writes the same line from the same files, to show how far `orca sample` is from
what Python itself costs. No checks, no fallbacks, no end conditions but `--count`: a yardstick, not a sampler.

    python bench/floor_sampler.py --out FILE [--seconds S] [--count N] [--constant]

`--constant` reads nothing and writes the same short line every time: what any Python sampler pays for a line
without its work (the wake-up, the loop and the write), the part of a cold line no parser or encoder can remove.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import time

import orjson

FILES = ("stat", "meminfo", "diskstats", "net/dev", "pressure/cpu", "pressure/memory", "pressure/io")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--constant", action="store_true")
    args = parser.parse_args()
    if args.constant:
        return constant_lines(args.out, args.seconds, args.count)
    fds = [os.open(f"/proc/{name}", os.O_RDONLY) for name in FILES]
    disks = {d for d in os.listdir("/sys/block") if "/virtual/" not in os.path.realpath(f"/sys/block/{d}")}
    out = os.open(args.out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    host, tmp = socket.gethostname(), os.environ.get("TMPDIR", "/tmp")

    def read() -> tuple[float, list[list[int]], dict[str, int], tuple[int, int], tuple[int, int], list[int]]:
        stat, meminfo, diskstats, net, *pressure = (os.pread(fd, 65536, 0).decode() for fd in fds)
        cpus = [[int(x) for x in ln.split()[1:9]] for ln in stat.splitlines() if ln.startswith("cpu")]
        mem = {k: int(v.split()[0]) * 1024 for k, _, v in (ln.partition(":") for ln in meminfo.splitlines())}
        io = [ln.split() for ln in diskstats.splitlines()]
        rw = (sum(int(f[5]) for f in io if f[2] in disks) * 512, sum(int(f[9]) for f in io if f[2] in disks) * 512)
        nets = [ln.split(":")[1].split() for ln in net.splitlines()[2:] if ln.split(":")[0].strip() != "lo"]
        inout = (sum(int(f[0]) for f in nets), sum(int(f[8]) for f in nets))
        stalls = [int(p.split()[4].removeprefix("total=")) for p in pressure]
        return time.monotonic(), cpus, mem, rw, inout, stalls

    prev = read()
    for n in range(args.count or 1 << 62):
        time.sleep(0.2 if n == 0 else args.seconds)
        cur = read()
        dt = cur[0] - prev[0]
        d = [[max(0, c - p) for p, c in zip(pc, cc, strict=True)] for pc, cc in zip(prev[1], cur[1], strict=True)]
        t = sum(d[0]) or 1
        mem, vfs = cur[2], os.statvfs(tmp)
        ru = resource.getrusage(resource.RUSAGE_SELF)
        line = {
            "v": 1, "t": round(time.time(), 3), "dt": round(dt, 3), "host": host, "cores": len(d) - 1,
            "cpu": {
                "user": round(100 * (d[0][0] + d[0][1]) / t, 1),
                "system": round(100 * (d[0][2] + d[0][5] + d[0][6]) / t, 1),
                "iowait": round(100 * d[0][4] / t, 1),
                "steal": round(100 * d[0][7] / t, 1),
                "busiest": round(max(100 * (sum(c) - c[3] - c[4]) / (sum(c) or 1) for c in d[1:]), 1),
            },
            "mem": {
                "total": mem["MemTotal"], "used": mem["MemTotal"] - mem["MemAvailable"],
                "available": mem["MemAvailable"], "cache": mem["Active(file)"] + mem["Inactive(file)"],
                "swap_total": mem["SwapTotal"], "swap_used": mem["SwapTotal"] - mem["SwapFree"], "rss": 0,
            },
            "disk": [{
                "path": tmp, "total": vfs.f_blocks * vfs.f_frsize,
                "used": (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize, "free": vfs.f_bavail * vfs.f_frsize,
            }],
            "io": {"read": round((cur[3][0] - prev[3][0]) / dt), "write": round((cur[3][1] - prev[3][1]) / dt)},
            "net": {"in": round((cur[4][0] - prev[4][0]) / dt), "out": round((cur[4][1] - prev[4][1]) / dt)},
            "self_cpu": round(ru.ru_utime + ru.ru_stime, 2),
            "pressure": {
                name: round((c - p) / 1e4 / dt, 1)
                for name, p, c in zip(("cpu", "memory", "io"), prev[5], cur[5], strict=True)
            },
        }
        os.write(out, orjson.dumps(line) + b"\n")
        prev = cur
    return 0


def constant_lines(path: str, seconds: float, count: int) -> int:
    out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for n in range(count or 1 << 62):
        time.sleep(0.2 if n == 0 else seconds)
        os.write(out, b'{"v":1}\n')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
