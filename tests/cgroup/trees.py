"""Fixture trees for the own cgroup's reader: a proc root whose `self/cgroup` and `self/mountinfo` place the cgroup
hierarchies in a fixture directory, and the cgroup files there."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

CAPTURES = Path(__file__).parents[1] / "golden" / "captures"
MACHINE = "linux-6.18.44-fc-v1045.x86_64-2cores"


def v1_capture(name: str) -> str:
    """A real capture of this machine's cgroup v1 files (tests/golden/test_own_cgroup.py says which)."""
    return (CAPTURES / f"{name}.{MACHINE}.txt").read_text()


def v2_handwritten(name: str) -> str:
    """A cgroup v2 file written by hand from cgroup-v2.rst (tests/golden/test_cgroup.py says how)."""
    return (CAPTURES / f"cgroup_v2_{name}.handwritten-from-cgroup-v2.rst.txt").read_text()


V2_CPU_STAT_WITHOUT_THE_CONTROLLER = (
    CAPTURES / "cgroup_v2_cpu.stat.no-cpu-controller.linux-6.18.44-fc-v657.x86_64-2cores.txt"
).read_text()
"""A real capture: this machine's v2 root `cpu.stat`, where the cpu controller is not enabled (usage_usec
920059747, no bandwidth counters)."""


@dataclass(frozen=True)
class Mount:
    """One cgroup mount: its place under the fixture's cgroup directory, the cgroup path at its top, and (v1) its
    controllers."""

    place: str
    root: str = "/"
    controllers: str = ""
    """Empty: the v2 hierarchy; else a v1 one's super options, `cpu,cpuacct`."""


class Tree:
    """A proc root and a cgroup directory under `tmp_path`."""

    def __init__(self, tmp_path: Path, own: str, mounts: list[Mount]) -> None:
        self.proc = tmp_path / "proc"
        self.cgroups = tmp_path / "cgroup"
        (self.proc / "self").mkdir(parents=True)
        self.cgroups.mkdir()
        self.own(own)
        lines = ["27 1 254:0 / / rw,relatime - ext4 /dev/vda rw"]
        for number, mount in enumerate(mounts, start=32):
            point = self.cgroups / mount.place
            point.mkdir(parents=True, exist_ok=True)
            kind = f"cgroup cgroup rw,{mount.controllers}" if mount.controllers else "cgroup2 cgroup2 rw"
            lines.append(f"{number} 31 0:{number} {mount.root} {point} rw,relatime - {kind}")
        (self.proc / "self" / "mountinfo").write_text("\n".join(lines) + "\n")

    def own(self, text: str) -> None:
        """`self/cgroup` becomes `text` (the process moved)."""
        (self.proc / "self" / "cgroup").write_text(text)

    def write(self, files: dict[str, str]) -> None:
        """Each file (path under the cgroup directory -> text) written, its directories made."""
        for path, text in files.items():
            (self.cgroups / path).parent.mkdir(parents=True, exist_ok=True)
            (self.cgroups / path).write_text(text)

    def fifo(self, path: str) -> None:
        """A FIFO at `path`: a file that must never be opened (nothing would ever be written to it)."""
        (self.cgroups / path).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(self.cgroups / path)


def removed(directories: list[Path]) -> None:
    """Each of the live cgroups `directories` removed once its processes are gone (they are being killed)."""
    for directory in directories:
        for _ in range(100):
            try:
                directory.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
