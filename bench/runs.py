"""Files of sample lines for the reader's benchmarks and pictures: written by the sampler's own encoder, with values
shaped like a day of pipeline runs (busy spells, memory that grows and is freed, a disk filling up, io bursts)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import msgspec

from orca.sample.compute.encode import encode_line
from orca.sample.line_format import ContainerSample, CpuShare, Disk, IoRate, Mem, NetRate, PressureShare, Sample

GIB = 2**30


def line_at(i: int, t: float, seconds: float, rng: random.Random, host: str = "ip-10-0-1-5") -> Sample:
    """The `i`-th line of a run that started at `t - i * seconds`."""
    hour = (i * seconds / 3600) % 24
    job = 0.5 + 0.5 * math.sin(i * seconds / 1800)  # a job every hour or so
    busy = max(0.0, min(100.0, 15 + 70 * job * (1.2 if 9 <= hour <= 18 else 0.6) + rng.gauss(0, 6)))
    used = int((2 + 9 * job + 0.1 * hour) * GIB)
    cache = int((3 + 2 * math.sin(i / 500)) * GIB)
    disk_used = int((40 + 0.6 * (i * seconds / 3600) % 24 * 2) * GIB)
    burst = rng.random() < 0.05
    containers = (
        ContainerSample(name="postgres", mem=int((0.4 + 0.2 * job) * GIB), cpu=round(rng.uniform(0, 30), 1),
                        mem_nocache=int(0.35 * GIB), oom_kill=0),
        ContainerSample(name="redis", mem=int(0.1 * GIB), cpu=round(rng.uniform(0, 5), 1), mem_nocache=int(0.08 * GIB),
                        oom_kill=0),
    )
    return Sample(
        v=1,
        t=t,
        dt=seconds,
        host=host,
        cores=4,
        cpu=CpuShare(busy * 0.85, busy * 0.1, 2.0 * job if burst else 0.3, 0.0, min(100.0, busy * 1.4)),
        mem=Mem(16 * GIB, used, 16 * GIB - used, cache, 2 * GIB, 0, int(used * 0.7)),
        disk=(Disk("/tmp", 100 * GIB, disk_used, 100 * GIB - disk_used), Disk("/data", 500 * GIB, 120 * GIB,
                                                                              380 * GIB)),
        io=IoRate(int(rng.expovariate(1 / 2e6)), int((80e6 if burst else 4e6) * job)),
        net=NetRate(int(rng.expovariate(1 / 1e6)), int(rng.expovariate(1 / 5e5))),
        containers=containers,
        self_cpu=0.00135 * (i + 1),
        pressure=PressureShare(cpu=round(busy / 20, 1), memory=0.0, io=3.0 if burst else 0.1),
    )


def write_run(path: Path, lines: int, seconds: float = 5.0, start: float = 1796000000.0, seed: int = 1) -> Path:
    """`lines` lines at `seconds` apart to `path` (replaced)."""
    rng = random.Random(seed)
    with path.open("wb") as out:
        for i in range(lines):
            out.write(encode_line(line_at(i, start + i * seconds, seconds, rng)) + b"\n")
    return path


def write_one_line_runs(path: Path, count: int, apart: float = 60.0, start: float = 1796000000.0) -> Path:
    """`count` runs of one line each, `apart` seconds apart, as a sampler started by cron with `--count 1` appends
    them to one file: each line 0.2 s after its own `start`."""
    rng = random.Random(1)
    with path.open("wb") as out:
        for i in range(count):
            begun = start + i * apart
            line = line_at(i, begun + 0.2, 0.2, rng)
            out.write(encode_line(msgspec.structs.replace(line, self_cpu=0.05, start=begun)) + b"\n")
    return path
