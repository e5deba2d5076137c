"""A run of five lines whose summary is worked out by hand (in `tests/reader/test_summary.py`)."""

from __future__ import annotations

import json
from typing import Any


def sample(t: float, **sections: Any) -> str:
    return json.dumps({"v": 1, "t": t, "dt": 5.0, "host": "h", "cores": 2, **sections})


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
    # 15 s after the line before: a gap (over twice the median interval of 5 s). The sampler started again.
    sample(125.0, cpu=None, mem=mem(1000, 400, 0, 0), containers=[container("db", 200, 3)], self_cpu=0.05),
    sample(130.0, cpu=cpu(5.0, 5.0, 0.0, 0.0, 20.0), mem=mem(500, 350, 0, 5), disk=[disk("/a", 3, 1)],
           containers=[container("db", 10, 1)], self_cpu=0.15),
]) + "\n"
