"""Synthetic fleets built from real lines: the captures of `captures/` (see `capture.py`), each instance's file one
capture's lines with only its `host`, `t` and `start` changed (edited with the standard library's json, not with the
code under test), as `metrics_location` lays a run's instances out (`<instance>.jsonl`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CAPTURES = Path(__file__).with_name("captures")
KINDS = ("busy", "idle", "saturated", "oom", "straggler")


def capture(kind: str) -> list[dict[str, Any]]:
    """The lines of one capture, decoded."""
    (path,) = CAPTURES.glob(f"{kind}.*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def instance_lines(kind: str, host: str, shift: float) -> list[dict[str, Any]]:
    """A capture's lines as another instance's: its host, and every time `shift` seconds later."""
    lines = capture(kind)
    for line in lines:
        line["host"] = host
        line["t"] = round(line["t"] + shift, 3)
        line["start"] = round(line["start"] + shift, 3)
    return lines


def write_fleet(directory: Path, kinds: list[str], stagger: float = 0.001) -> list[str]:
    """One file per instance, `worker-NNN.jsonl`, the `i`-th of `kinds[i]`'s lines, started `i * stagger` seconds
    after the first; the instances' names."""
    directory.mkdir(parents=True, exist_ok=True)
    names = []
    for index, kind in enumerate(kinds):
        name = f"worker-{index:03d}"
        text = "".join(json.dumps(line, separators=(",", ":")) + "\n"
                       for line in instance_lines(kind, name, index * stagger))
        (directory / f"{name}.jsonl").write_text(text)
        names.append(name)
    return names


def mixed(count: int) -> list[str]:
    """A fleet of `count` instances (at least 5): busy ones, and one idle, one saturated, one OOM-killed and one
    straggling among them, at places spread over the fleet."""
    kinds = ["busy"] * count
    for kind, place in (("idle", count // 5), ("saturated", 2 * count // 5), ("oom", 3 * count // 5),
                        ("straggler", count - 1)):
        kinds[place] = kind
    return kinds
