"""Run by the live tests (`test_live.py`) as a process of its own: it moves itself into the cgroup the test made,
starts a workload there (a process holding memory, two spinning), reads its own cgroup twice a known interval apart
with the sampler's reader, then lets a process allocate past the memory limit, reads once more, and prints what it
saw as one JSON object.

Arguments: SECONDS (between the two readings), USAGE_FILE (the kernel's usage file of the cgroup, read right after
the second reading), HOLD_BYTES, then each `cgroup.procs` to write its pid to.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import msgspec

from orca.sample.compute.own_cgroup import CgroupReading, cgroup_section
from orca.sample.shared.own_cgroup import OwnCgroup

SPIN = "while True: pass"
HOLD = "import sys, time; held = b'x' * int(sys.argv[1]); print('held', flush=True); time.sleep(120)"
# The process that passes the limit asks the OOM killer to take it first, before this one and the workload.
PAST_LIMIT = "open('/proc/self/oom_score_adj', 'w').write('1000\\n'); held = b'x' * (1 << 30)"
PAST_LIMIT_WAIT = 60


def unwrapped(reader: OwnCgroup) -> CgroupReading:
    reading = reader.read().unwrap()
    assert reading is not None, "no limit seen"
    return reading


def main(argv: list[str]) -> None:
    seconds, usage_file, hold = float(argv[1]), argv[2], int(argv[3])
    for procs in argv[4:]:
        with open(procs, "w") as file:
            file.write("0\n")  # 0: the writing process itself
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(hold)], stdout=subprocess.PIPE)
    spinners: list[subprocess.Popen[bytes]] = []
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(2)]
        time.sleep(1.0)  # the spinners started, under the quota
        reader = OwnCgroup()
        first, start = unwrapped(reader), time.monotonic()
        time.sleep(seconds)
        second, end = unwrapped(reader), time.monotonic()
        with open(usage_file) as file:
            kernel_usage = int(file.read())
        section = cgroup_section(first, second, end - start)
        holder.kill()
        holder.wait()
        past = subprocess.run([sys.executable, "-c", PAST_LIMIT], timeout=PAST_LIMIT_WAIT, check=False)
        third = unwrapped(reader)
        reader.close()
    finally:
        for process in [holder, *spinners]:
            process.kill()
            process.wait()
    print(json.dumps({
        "first": msgspec.to_builtins(first), "second": msgspec.to_builtins(second), "third": msgspec.to_builtins(third),
        "dt": end - start, "kernel_usage": kernel_usage, "section": msgspec.to_builtins(section),
        "past_limit_status": past.returncode,
    }))


if __name__ == "__main__":
    main(sys.argv)
