"""How the captures in `host_captures/` were made: ten real runs of `orca sample --seconds 1 -- COMMAND` on one host,
with no cgroup of their own (the local runner, a CI machine, a laptop): each run's lines have its `run` (its own
processes) beside the host's figures, which all ten share. Run from the repository's root, as root, in a session
of its own, whose scheduling group it sets to nice -10 (`/proc/self/autogroup`), so that the other work of a shared
machine does not starve the ten into looking alike:

    sudo setsid .venv/bin/python -m tests.fleet.capture_host tests/fleet/host_captures

Each run's command, its lines in `<kind>.jsonl` (`uname -r` and the cores named in the directory's name):
- `idle`: `sleep 20`;
- `spinner`: one process spinning for 20 s (one core of the host's);
- `pair`: two processes spinning for 20 s (every core of a 2-core host, as much as its other work lets them);
- `half`: for 20 s, uses a quarter second of CPU, then sleeps a quarter second (half a core where it can have it);
- `grower`: for 10 s, builds 40 MiB more (hashing, a tenth of a second of CPU) every half second, to about 800 MiB;
  then holds it 10 s;
- `writer`: writes 256 MiB of random bytes to a file under /tmp and fsyncs it, then does as `half` for 10 s;
- `late`: `half`, started 10 s after the others;
- `killed`: does as `half`, and after 8 s kills itself with SIGKILL;
- `failed`: does as `half` for 5 s, then exits with status 3;
- `short`: spins for 3 s.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from tests.fleet.capture import SATURATED

SPIN = "import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"
PAIR = SATURATED
"""Two processes spinning for 20 s, as `capture.py`'s saturated instance."""
HALF = """
import time
end = time.time() + {seconds}
while time.time() < end:
    began = time.process_time()
    while time.process_time() - began < 0.25:
        pass
    time.sleep(0.25)
"""
GROWER = """
import hashlib, time
held = []
for step in range(20):
    began = time.process_time()
    block = bytearray()
    while time.process_time() - began < 0.1 or len(block) < 40 << 20:
        block += hashlib.sha256(block[-64:] + bytes([step])).digest() * 1024
    held.append(bytes(block[: 40 << 20]))
    time.sleep(0.5)
time.sleep(10)
"""
WRITER = """
import os, sys, time
path = sys.argv[1]
with open(path, "wb") as out:
    for _ in range(256):
        out.write(os.urandom(1 << 20))
    out.flush()
    os.fsync(out.fileno())
os.unlink(path)
""" + HALF.format(seconds=10)
KILLED = HALF.format(seconds=8) + "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
FAILED = HALF.format(seconds=5) + "import sys\nsys.exit(3)\n"
COMMANDS = {
    "idle": ["sleep", "20"],
    "spinner": [sys.executable, "-c", SPIN.format(seconds=20)],
    "pair": [sys.executable, "-c", PAIR],
    "half": [sys.executable, "-c", HALF.format(seconds=20)],
    "grower": [sys.executable, "-c", GROWER],
    "writer": [sys.executable, "-c", WRITER, f"/tmp/orca-capture-host-{os.getpid()}"],
    "late": [sys.executable, "-c", HALF.format(seconds=20)],
    "killed": [sys.executable, "-c", KILLED],
    "failed": [sys.executable, "-c", FAILED],
    "short": [sys.executable, "-c", SPIN.format(seconds=3)],
}
LATE = {"late": 10.0}
"""The runs started later than the others, by this many seconds."""


def main(argv: list[str]) -> None:
    Path("/proc/self/autogroup").write_text("-10")
    out = Path(argv[1]) / f"linux-{platform.release()}-{os.cpu_count()}cores"
    out.mkdir(parents=True, exist_ok=True)
    started: list[tuple[float, str]] = sorted((LATE.get(kind, 0.0), kind) for kind in COMMANDS)
    processes = []
    began = time.monotonic()
    try:
        for delay, kind in started:
            time.sleep(max(0.0, began + delay - time.monotonic()))
            lines = out / f"{kind}.jsonl"
            lines.unlink(missing_ok=True)
            processes.append(subprocess.Popen([sys.executable, "-m", "orca.sample", "--out", str(lines),
                                               "--seconds", "1", "--dirs", "/tmp", "--", *COMMANDS[kind]]))
        for process in processes:
            process.wait(timeout=120)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


if __name__ == "__main__":
    main(sys.argv)
