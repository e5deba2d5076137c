"""The seed's `Sampler`: the readings a line is the difference of, and what to read (SPEC 3)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from orca.sample.compute.build import build_line
from orca.sample.compute.encode import encode_line
from orca.sample.compute.snapshot import Snapshot
from orca.sample.parse.diskstats import DiskStats
from orca.sample.shell import readers
from orca.sample.shell.containers import ContainerSource
from orca.sample.shell.pressure import read_pressure
from orca.sample.shell.procs import ProcessScanner
from orca.sample.shell.reader_choice import psutil_reader_for

T = TypeVar("T")


def _guarded(read: Callable[[], T | None]) -> T | None:
    """A reader's value, or None when it raised: a sampler never fails because one source misbehaved (SPEC 3.10)."""
    try:
        return read()
    except Exception:
        return None


def _host() -> str:
    try:
        return socket.gethostname()
    except OSError:
        return ""


def _self_cpu() -> float:
    times = os.times()
    return times.user + times.system


class Sampler:
    """Takes the baseline readings when made; each `line()` is a JSON line covering the time since the last one."""

    def __init__(
        self,
        root: int,
        argv0: str,
        dirs: Sequence[str],
        cgroup: str = "",
        names: str = "",
        *,
        proc: str = "/proc",
        sys: str = "/sys",
        reader: str = "",
    ) -> None:
        self.root = root if root > 0 else None
        """The `--pid` process; None without one (the seed's root <= 0)."""
        self.argv0 = argv0
        self.dirs = tuple(dirs)
        self.cgroup = cgroup
        self.proc = proc
        self.sys = sys
        self.host = _host()
        # `reader` ("proc", "psutil"), else ORCA_SAMPLE_READER, else psutil where <proc>/stat cannot be read.
        self._psutil = psutil_reader_for(reader, self.root, argv0, self.dirs, cgroup, proc=proc, sys=sys)
        self._scanner = _guarded(lambda: ProcessScanner(proc))
        self._containers = _guarded(lambda: ContainerSource(cgroup, names, proc)) if cgroup else None
        # /sys/block is read again only when /proc/diskstats names other devices (a disk came or went): its links
        # cost a dozen system calls a line that would almost always give the same answer.
        self._disk_names: frozenset[str] | None = None
        self._whole_disks: frozenset[str] | None = None
        self._container_disks: frozenset[str] | None = None
        """`MAJ:MIN` of the whole disks, for the containers' `io`: read with the whole disks, only with --cgroup."""
        self._prev = self.snapshot()
        self.started_ns = self._prev.monotonic_ns
        """`time.monotonic_ns()` of the baseline readings: the start the loop's schedule counts from (SPEC 2.2)."""

    def snapshot(self) -> Snapshot:
        """Everything one line needs, read now. Never raises."""
        if self._psutil is not None:
            return self._psutil.snapshot()
        at_ns = time.monotonic_ns()
        wall = time.time()
        proc = self.proc
        scanner = self._scanner
        containers = self._containers
        diskstats = _guarded(lambda: readers.read_diskstats(proc))
        whole_disks = self._current_whole_disks(diskstats)  # also renews the containers' disk numbers
        return Snapshot(
            monotonic_ns=at_ns,
            wall=wall,
            host=self.host,
            stat=_guarded(lambda: readers.read_proc_stat(proc)),
            meminfo=_guarded(lambda: readers.read_meminfo(proc)),
            rss_bytes=None if scanner is None else _guarded(lambda: scanner.run_rss(self.root, self.argv0)),
            disks=_guarded(lambda: readers.read_disks(self.dirs)),
            diskstats=diskstats,
            whole_disks=whole_disks,
            net=_guarded(lambda: readers.read_net_dev(proc)),
            containers_enabled=bool(self.cgroup),
            containers=None if containers is None else _guarded(containers.read),
            pressure=_guarded(lambda: read_pressure(proc)),
            self_cpu=_guarded(_self_cpu) or 0.0,
            container_disks=self._container_disks,
        )

    def _current_whole_disks(self, diskstats: DiskStats | None) -> frozenset[str] | None:
        names = None if diskstats is None else frozenset(device.name for device in diskstats.devices)
        if names is None or names != self._disk_names:
            self._whole_disks = _guarded(lambda: readers.read_whole_disks(self.sys))
            self._disk_names = names
            whole = self._whole_disks
            if self._containers is not None:
                self._container_disks = None if whole is None else _guarded(
                    lambda: readers.read_device_numbers(self.sys, whole)
                )
        return self._whole_disks

    def line(self) -> str:
        """The next line (no newline): the new readings against the previous ones, which they then replace."""
        return self.line_bytes().decode()

    def line_bytes(self) -> bytes:
        """`line()` as the encoder made it, for the outputs, which write bytes."""
        current = self.snapshot()
        data = encode_line(build_line(self._prev, current))
        self._prev = current
        return data

