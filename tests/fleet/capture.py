"""How the captures in `captures/` were made: five real runs of `orca sample --seconds 1 -- COMMAND`, started
together as a fleet's instances are, each in a cgroup of its own limited to 1 CPU and 512 MiB (as a pod of the kube
runner is), on cgroup v1, as root. Run from the repository's root:

    sudo .venv/bin/python -m tests.fleet.capture tests/fleet/captures [KIND...]

Each instance's command, its lines in `<kind>.jsonl` (`uname -r` and the cores named in the file's name; with KINDs
named, one instance of each named, `<kind>-<n>.jsonl` for a kind named more than once):
- `busy`: holds 120 MiB and spins a quarter of every half second (about half a CPU) for 20 s;
- `idle`: `sleep 20`;
- `saturated`: two processes spinning for 20 s against the 1-CPU quota (throttled);
- `oom`: takes 40 MiB more every half second until the kernel kills it for passing 512 MiB;
- `straggler`: `busy`, for 40 s;
- `throttled` (not among the five): `saturated` under a quota of half a CPU, which it reaches however busy the
  machine is.
The cgroups are removed afterwards.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from tests.cgroup.test_live import mounts, own_paths, write
from tests.cgroup.trees import removed

MEMORY_LIMIT = 512 * 2**20
QUOTA_US = PERIOD_US = 100_000
CONTROLLERS = ("memory", "cpu", "cpuacct", "pids")
BUSY = """
import time
held = b"x" * (120 << 20)
end = time.time() + {seconds}
while time.time() < end:
    began = time.time()
    while time.time() - began < 0.25:
        pass
    time.sleep(0.25)
"""
SATURATED = """
import multiprocessing, time
def spin():
    end = time.time() + 20
    while time.time() < end:
        pass
workers = [multiprocessing.Process(target=spin) for _ in range(2)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
"""
OOM = """
import time
held = []
while True:
    held.append(b"x" * (40 << 20))
    time.sleep(0.5)
"""
COMMANDS = {
    "busy": [sys.executable, "-c", BUSY.format(seconds=20)],
    "idle": ["sleep", "20"],
    "saturated": [sys.executable, "-c", SATURATED],
    "oom": [sys.executable, "-c", OOM],
    "straggler": [sys.executable, "-c", BUSY.format(seconds=40)],
    "throttled": [sys.executable, "-c", SATURATED],
}
QUOTAS_US = {"throttled": QUOTA_US // 2}
"""The kinds whose CPU quota is not `QUOTA_US`."""


def limited_cgroup(name: str, quota_us: int = QUOTA_US) -> list[Path]:
    """A child of this process's cgroup in each v1 hierarchy of `CONTROLLERS`, limited; its directories."""
    points = {controller: point for fstype, point, options in mounts() if fstype == "cgroup"
              for controller in CONTROLLERS if controller in options}
    own = own_paths()
    made: dict[str, Path] = {}
    for controller in CONTROLLERS:
        directory = Path(points[controller]) / own[controller].lstrip("/") / name
        directory.mkdir(exist_ok=True)
        made[controller] = directory
    write(made["memory"] / "memory.limit_in_bytes", str(MEMORY_LIMIT))
    if (made["memory"] / "memory.memsw.limit_in_bytes").exists():
        write(made["memory"] / "memory.memsw.limit_in_bytes", str(MEMORY_LIMIT))
    write(made["cpu"] / "cpu.cfs_period_us", str(PERIOD_US))
    write(made["cpu"] / "cpu.cfs_quota_us", str(quota_us))
    write(made["cpu"] / "cpu.shares", "8192")  # the quota, not the machine's other work, is what holds it back
    return list(dict.fromkeys(made.values()))


def main(argv: list[str]) -> None:
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    kinds = argv[2:] or [kind for kind in COMMANDS if kind not in QUOTAS_US]
    suffix = f"linux-{platform.release()}-{os.cpu_count()}cores"
    cgroups: list[Path] = []
    started = []
    try:
        for index, kind in enumerate(kinds):
            command = COMMANDS[kind]
            name = kind if kinds.count(kind) == 1 else f"{kind}-{index}"
            directories = limited_cgroup(f"orca-fleet-{name}-{os.getpid()}", QUOTAS_US.get(kind, QUOTA_US))
            cgroups += directories
            procs = " ".join(str(directory / "cgroup.procs") for directory in directories)
            script = f'for procs in {procs}; do echo $$ > "$procs"; done; exec "$@"'
            lines = out / f"{name}.{suffix}.jsonl"
            lines.unlink(missing_ok=True)
            sample = [sys.executable, "-m", "orca.sample", "--out", str(lines), "--seconds", "1", "--dirs", "/tmp",
                      "--", *command]
            started.append(subprocess.Popen(["sh", "-c", script, "sh", *sample]))
        for process in started:
            process.wait(timeout=120)
        time.sleep(0.5)
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()
        removed(cgroups)


if __name__ == "__main__":
    main(sys.argv)
