"""Sample files worked out by hand: a run of five lines whose summary is checked in `tests/reader/test_summary.py`,
and a file whose newest minute is checked in `tests/reader/test_newest_minute.py` and against S3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orca.sample.readback.minute import Now


def locked(path: Path) -> Path:
    """`path` written with `RUN` and made unreadable; the test is skipped for a user who can read any file."""
    path.write_text(RUN)
    path.chmod(0)
    try:
        with path.open("rb"):
            pytest.skip("running as a user who can read any file (root)")
    except PermissionError:
        pass
    return path


def sample(t: float, dt: float = 5.0, **sections: Any) -> str:
    return json.dumps({"v": 1, "t": t, "dt": dt, "host": "h", "cores": 2, **sections})


def cpu(user: float, system: float, iowait: float, steal: float, busiest: float) -> dict[str, float]:
    return {"user": user, "system": system, "iowait": iowait, "steal": steal, "busiest": busiest}


def mem(total: int, used: int, swap_used: int, rss: int) -> dict[str, int]:
    return {"total": total, "used": used, "available": total - used, "cache": 0, "swap_total": 100,
            "swap_used": swap_used, "rss": rss}


def disk(path: str, used: int, free: int) -> dict[str, Any]:
    return {"path": path, "total": used + free, "used": used, "free": free}


def container(name: str, mem: int, oom_kill: int | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "mem": mem, "cpu": 0.0, "mem_nocache": mem}
    return entry if oom_kill is None else {**entry, "oom_kill": oom_kill}


RUN = "\n".join([
    sample(100.0, cpu=cpu(10.0, 5.0, 0.0, 0.0, 40.0), mem=mem(1000, 100, 0, 10), disk=[disk("/a", 1, 3)],
           io={"read": 100, "write": 0}, net=None, containers=[container("db", 100, 0)], self_cpu=0.1,
           pressure={"cpu": 1.0, "memory": 2.0}),
    "INFO the run's own output",
    sample(105.0, cpu=cpu(20.0, 10.0, 5.0, 0.0, 60.0), mem=mem(1000, 300, 0, 50), disk=None,
           io={"read": 200, "write": 50}, containers=[container("db", 300, 1), container("web", 50)], self_cpu=0.2,
           pressure={"cpu": 3.0, "io": 4.0}),
    sample(110.0, cpu=cpu(50.0, 10.0, 0.0, 5.0, 90.0), mem=mem(1000, 250, 7, 20),
           disk=[disk("/a", 2, 2), disk("/b", 3, 1)], net={"in": 10, "out": 20}, containers=[], self_cpu=0.3),
    '{"v":1,"t":115.0,"dt":5.0,"host":"h","mem":{"total":-1}}',
    # 15 s after the line before by the sampler's clock (its dt): a gap, over twice the median interval of 5 s. Its
    # self_cpu went back, as a sampler's started again does.
    sample(125.0, 15.0, cpu=None, mem=mem(1000, 400, 0, 0), containers=[container("db", 200, 3)], self_cpu=0.05),
    sample(130.0, cpu=cpu(5.0, 5.0, 0.0, 0.0, 20.0), mem=mem(500, 350, 0, 5), disk=[disk("/a", 3, 1)],
           containers=[container("db", 10, 1)], self_cpu=0.15),
]) + "\n"


def line(t: float, used: int | None, cpu: tuple[float, float, float, float] | None, disks: list[tuple[str, int, int]],
         total: int = 1000) -> str:
    """A sample line with the fields the newest minute reads; cpu is (user, system, iowait, steal)."""
    mem = None
    if used is not None:
        mem = {"total": total, "used": used, "available": total - used, "cache": 0, "swap_total": 0, "swap_used": 0,
               "rss": 0}
    return json.dumps({
        "v": 1, "t": t, "dt": 5.0, "host": "control", "cores": 2,
        "cpu": None if cpu is None else dict(zip(["user", "system", "iowait", "steal", "busiest"], [*cpu, 50.0],
                                                 strict=True)),
        "mem": mem,
        "disk": [{"path": p, "total": used_ + free, "used": used_, "free": free} for p, used_, free in disks],
        "io": None, "net": None, "self_cpu": 0.1,
    })


HAND_WORKED = "\n".join([
    # Outside the window (1060 - 60 = 1000): a full memory and a full disk that must not count.
    line(900.0, 900, (90.0, 0.0, 0.0, 0.0), [("/a", 99, 1)]),
    "INFO the run's own output, between samples",
    # memory 20 %; cpu 10 + 5 + 1 = 16 (iowait not busy); /a 30 %, /b 50 / (50 + 30) = 62.5 %
    line(1000.0, 200, (10.0, 5.0, 50.0, 1.0), [("/a", 30, 70), ("/b", 50, 30)]),
    '{"v":2,"t":1010.0,"dt":5.0,"host":"control","mem":{"total":1,"used":1}}',
    # memory 40 %; cpu 20 + 10 + 0 = 30; /a 60 %
    "orca-sample " + line(1030.0, 400, (20.0, 10.0, 20.0, 0.0), [("/a", 60, 40)]),
    # memory 60 %; no cpu; /a 10 %
    line(1060.0, 600, None, [("/a", 10, 90)]),
]) + "\n" + line(1065.0, 1000, (100.0, 0.0, 0.0, 0.0), [("/a", 100, 0)])  # being written: no newline yet

# Window: t 1000, 1030, 1060. Memory (20 + 40 + 60) / 3 = 40; CPU (16 + 30) / 2 = 23; fullest disk /b at 62.5.
EXPECTED_AT_1070 = Now(t=1060.0, age=10.0, memory_percent=40.0, disk_percent=62.5, disk_path="/b",
                       cpu_percent=23.0, lines=3)
