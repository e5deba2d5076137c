"""`Sampler` of the documented API (README, Python API): the readings a line is the difference of, and what to read
(docs/behaviour.md §3).

Each section's source is read behind one `Source`: a function giving a `Result` (the snapshot, or a `ParseError`
naming the file and the reason), and the report of its failures. A source that fails makes its section null and
says why on standard error, once until it reads well again; an unexpected exception in a reader is told the same
way, with its type, and never stops the sampler (docs/behaviour.md §3.10).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from returns.result import Result, Success
from toolz import pipe

from orca.sample.compute import quick
from orca.sample.compute.build import build_line
from orca.sample.compute.encode import encode_line
from orca.sample.compute.snapshot import ContainerReading, DiskReading, Snapshot
from orca.sample.parse import diskstats, net_dev, proc_stat
from orca.sample.parse.diskstats import DiskStats
from orca.sample.parse.errors import ParseError
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.pressure import Pressure
from orca.sample.parse.proc_stat import ProcStat
from orca.sample.shell.machine import kernel as readers
from orca.sample.shell.machine.choice import psutil_reader_for
from orca.sample.shell.machine.early import RATE_FILES, EarlyReadings
from orca.sample.shell.machine.pressure import read_pressure
from orca.sample.shell.machine.source import Source, host_name, self_cpu_seconds

if TYPE_CHECKING:
    from orca.sample.shell.machine.containers import ContainerSource
    from orca.sample.shell.procs.scanner import ProcessScanner

T = TypeVar("T")


def _run_rss(scanner: ProcessScanner, root: int | None, argv0: str) -> Result[int, ParseError]:
    return Success(scanner.run_rss(root, argv0))


_NO_RUN: Result[int, ParseError] = Success(0)

QUICK_MISSES_AT_MOST = 8
"""Lines in a row made by the general path although the quick one was tried, after which it is no longer tried: a
host whose files do not read as the quick path expects would otherwise pay for both on every line. The lines of a
source's told failure do not count: the quick path waits for it to read again, and is not tried meanwhile."""
_QUICK_FILES = (*RATE_FILES, "meminfo")
"""The kernel files the quick path reads, in the order `_counters_of` takes them."""


def _no_run() -> Result[int, ParseError]:
    """The run's resident bytes with neither --pid nor --match: none to count."""
    return _NO_RUN


_NOT_READ = OSError("not read")


class Sampler:
    """Takes the baseline readings when made; each `line()` is a JSON line covering the time since the last one.

    `baseline`: the command's readings, taken before it loaded the sampler (`shell/machine/early.py`): parsed into the
    baseline in place of reading the same files again, so the first line covers the time from them.

    `close()` (or `with Sampler(...) as sampler:`) closes the descriptors it keeps between lines."""

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
        baseline: EarlyReadings | None = None,
        quick_lines: bool = True,
    ) -> None:
        self.root = root if root > 0 else None
        """The `--pid` process; None without one (root <= 0 in the documented API)."""
        self.argv0 = argv0
        self.dirs = tuple(dirs)
        self.cgroup = cgroup
        self.proc = proc
        self.sys = sys
        self.host = host_name()
        # `reader` ("proc", "psutil"), else ORCA_SAMPLE_READER, else psutil where <proc>/stat cannot be read.
        self._psutil = psutil_reader_for(reader, self.root, argv0, self.dirs, cgroup, proc=proc, sys=sys)
        # The process scans and their parsers load only for a run to measure (--pid, --match): 0 without one.
        self._scanner: ProcessScanner | None = None
        if self.root is not None or argv0:
            from orca.sample.shell.procs.scanner import ProcessScanner

            self._scanner = ProcessScanner(proc)
        self._stat: Source[ProcStat] = Source(f"{proc}/stat", readers.parsed_file(proc, "stat", proc_stat.parse))
        self._meminfo: Source[MemInfo] = Source(
            f"{proc}/meminfo", readers.parsed_file(proc, "meminfo", readers.parse_wanted_meminfo)
        )
        self._rss: Source[int] = Source(
            f"the run's processes in {proc}",
            _no_run if self._scanner is None else functools.partial(_run_rss, self._scanner, self.root, argv0),
        )
        self._disks: Source[tuple[DiskReading, ...]] = Source(
            "--dirs", functools.partial(readers.read_disks, self.dirs)
        )
        self._diskstats: Source[DiskStats] = Source(
            f"{proc}/diskstats", readers.parsed_file(proc, "diskstats", diskstats.parse)
        )
        self._net: Source[NetDev] = Source(f"{proc}/net/dev", readers.parsed_file(proc, "net/dev", net_dev.parse))
        self._container_source: ContainerSource | None = None
        if cgroup:
            from orca.sample.shell.machine.containers import ContainerSource

            self._container_source = ContainerSource(cgroup, names, proc)
        self._containers: Source[tuple[ContainerReading, ...]] | None = (
            Source(cgroup, self._container_source.readings) if self._container_source else None
        )
        self._pressure: Source[Mapping[str, Pressure] | None] = Source(
            f"{proc}/pressure", functools.partial(read_pressure, proc)
        )
        # /sys/block is read again only when /proc/diskstats names other devices (a disk came or went): its links
        # cost a dozen system calls a line that would almost always give the same answer.
        self._disk_names: frozenset[str] | None = None
        self._whole_disks: frozenset[str] | None = None
        self._container_disks: frozenset[str] | None = None
        """`MAJ:MIN` of the whole disks, for the containers' `io`: read with the whole disks, only with --cgroup."""
        # The quick path (compute/quick.py) for the host's own line from /proc: not for psutil or containers.
        self._quick_paths: tuple[str, ...] | None = None
        if quick_lines and self._psutil is None and self._containers is None:
            self._quick_paths = tuple(os.path.join(proc, name) for name in _QUICK_FILES)
        self._quick_misses = 0
        self._general_failing = False
        """A source the quick path reads failed on the last general line: lines stay general until it reads again,
        so its recovery is noticed and its next failure told."""
        self._prev: Snapshot | None
        """The previous readings as a snapshot; None after a quick line, until the general path needs them."""
        self._prev_reading: EarlyReadings | None = None
        """The previous readings' texts and clocks (quick path only), to make `_prev` from when it is needed."""
        self._prev_counters: quick.Counters | None = None
        if self._quick_paths is None:
            self._prev = self._baseline(baseline)
            self.started_ns = self._prev.monotonic_ns
        else:
            early = baseline if baseline is not None and baseline.proc == proc else self._read_texts()
            self._prev, self._prev_reading = None, early
            self._prev_counters = self._counters_of(early)
            if self._prev_counters is None:  # parsed now, as the general path would: a failure is told at once
                self._prev = self._given(early)
            self.started_ns = early.monotonic_ns
        """`time.monotonic_ns()` of the baseline readings: the start the loop's schedule counts from
        (docs/behaviour.md §2.2)."""

    def _baseline(self, early: EarlyReadings | None) -> Snapshot:
        """The first readings: `early` when it covers every rate this sampler has, parsed now and dated when it was
        read; else read now. The psutil reader and the containers' files have no early readings."""
        if early is None or early.proc != self.proc or self._psutil is not None or self._containers is not None:
            return self.snapshot()
        now = readers.reading_given(early.texts, self.snapshot)
        return dataclasses.replace(now, monotonic_ns=early.monotonic_ns, wall=early.wall)

    def snapshot(self) -> Snapshot:
        """Everything one line needs, read now. Never raises."""
        if self._psutil is not None:
            return self._psutil.snapshot()
        at_ns = time.monotonic_ns()
        wall = time.time()
        diskstats = self._diskstats.value()
        whole_disks = self._current_whole_disks(diskstats)  # also renews the containers' disk numbers
        containers = self._containers
        return Snapshot(
            monotonic_ns=at_ns,
            wall=wall,
            host=self.host,
            stat=self._stat.value(),
            meminfo=self._meminfo.value(),
            rss_bytes=self._rss.value(),
            disks=self._disks.value(),
            diskstats=diskstats,
            whole_disks=whole_disks,
            net=self._net.value(),
            containers_enabled=bool(self.cgroup),
            containers=None if containers is None else containers.value(),
            pressure=self._pressure.value(),
            self_cpu=self_cpu_seconds(),
            container_disks=self._container_disks,
        )

    def _current_whole_disks(self, diskstats: DiskStats | None) -> frozenset[str] | None:
        return self._whole_disks_for(None if diskstats is None else frozenset([d.name for d in diskstats.devices]))

    def _whole_disks_for(self, names: frozenset[str] | None) -> frozenset[str] | None:
        if names is None or names != self._disk_names:
            self._disk_names = names
            try:
                self._whole_disks = whole = readers.read_whole_disks(self.sys)
                if self._containers is not None:
                    self._container_disks = None if whole is None else readers.read_device_numbers(self.sys, whole)
            except Exception:  # no list: the skip list applies, as when /sys/block cannot be listed
                self._whole_disks = self._container_disks = None
        return self._whole_disks

    def line(self) -> str:
        """The next line (no newline): the new readings against the previous ones, which they then replace."""
        return self.line_bytes().decode()

    def line_bytes(self) -> bytes:
        """`line()` as the encoder made it, for the outputs, which write bytes."""
        if self._quick_paths is None:
            current = self.snapshot()
            general = pipe(current, functools.partial(build_line, self._previous_snapshot()), encode_line)
            self._prev = current
            return general
        reading = self._read_texts()
        counters = self._counters_of(reading)
        tried = not self._general_failing  # while a told failure lasts, the quick path waits: no miss of its own
        data = None if counters is None or not tried else self._quick_line(reading, counters)
        if data is None:
            previous = self._previous_snapshot()  # first: a failure in it is told before one in the new readings
            current = self._given(reading)
            data = pipe(current, functools.partial(build_line, previous), encode_line)
            self._prev = current
            self._general_failing = any(
                source.failing()
                for source in (
                    self._stat, self._meminfo, self._diskstats, self._net, self._pressure, self._disks, self._rss
                )
            )
            if tried:
                self._quick_misses += 1
            if self._quick_misses >= QUICK_MISSES_AT_MOST:
                self._quick_paths = None  # `_prev` is this line's: the general path goes on from it
        else:
            self._prev = None
            self._quick_misses = 0
        self._prev_reading, self._prev_counters = reading, counters
        return data

    def _quick_line(self, reading: EarlyReadings, counters: quick.Counters) -> bytes | None:
        """The line by the quick path, or None when the general path must make it (it then reads the directories
        and the run's processes again, and says why one failed)."""
        previous, paths = self._prev_counters, self._quick_paths
        if previous is None or paths is None:
            return None
        try:
            disks = tuple(map(readers.read_disk, self.dirs))
        except (OSError, ValueError):
            return None
        rss = 0
        if self._scanner is not None:
            try:
                rss = self._scanner.run_rss(self.root, self.argv0, counters.forks)
            except Exception:  # the general path reads it again, and says why it failed
                return None
        names = frozenset(counters.disk_names)
        whole_disks = self._whole_disks if names == self._disk_names else self._whole_disks_for(names)
        times = os.times()
        return quick.line(
            previous,
            counters,
            reading.texts[paths[-1]],
            wall=reading.wall,
            host=self.host,
            disks=disks,
            whole_disks=whole_disks,
            rss=rss,
            self_cpu=times.user + times.system,
        )

    def _read_texts(self) -> EarlyReadings:
        """The quick path's files, read now through the kept descriptors, with the clocks."""
        at_ns = time.monotonic_ns()
        wall = time.time()
        return EarlyReadings(self.proc, at_ns, wall, readers.kernel_files_bytes(self._quick_paths or ()))

    def _counters_of(self, reading: EarlyReadings) -> quick.Counters | None:
        paths, texts = self._quick_paths, reading.texts
        if paths is None:
            return None
        get = texts.get
        return quick.counters(
            get(paths[0], _NOT_READ),
            get(paths[1], _NOT_READ),
            get(paths[2], _NOT_READ),
            (get(paths[3], _NOT_READ), get(paths[4], _NOT_READ), get(paths[5], _NOT_READ)),
            reading.monotonic_ns,
        )

    def _given(self, reading: EarlyReadings) -> Snapshot:
        """The snapshot of `reading`: its files parsed as `snapshot()` parses them, dated when they were read (the
        rest, `mem`'s rss and the directories, read now)."""
        now = readers.reading_given(reading.texts, self.snapshot)
        return dataclasses.replace(now, monotonic_ns=reading.monotonic_ns, wall=reading.wall)

    def _previous_snapshot(self) -> Snapshot:
        if self._prev is None:  # the last line was quick: its readings parsed now
            self._prev = self.snapshot() if self._prev_reading is None else self._given(self._prev_reading)
        return self._prev

    def close(self) -> None:
        """Close the descriptors kept between lines (a later line would open what it needs again)."""
        if self._scanner is not None:
            self._scanner.close()
        if self._container_source is not None:
            self._container_source.close()

    def __enter__(self) -> Sampler:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
