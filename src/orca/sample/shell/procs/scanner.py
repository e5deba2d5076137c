"""The run's processes, read from /proc every line (docs/behaviour.md §3.4 `rss`, §3.12 `run`): `ProcessScanner`.

The parts: walk.py finds the processes (a process's files by path, the walk), tree_files.py and argv0s.py keep
what a line can reuse for the next one, compute/run.py and compute/top.py make the figures of two readings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from returns.result import Failure, Result, Success

from orca.sample.compute.run_reading import NO_FIGURES, NO_PROCESSES, ProcessCounters, RunReading, started
from orca.sample.compute.top import needs_arguments, process_name
from orca.sample.parse.errors import ParseError
from orca.sample.parse.pid_io import read_write_bytes
from orca.sample.parse.pid_stat import process_times
from orca.sample.shared.bounded import OUT_OF_DESCRIPTORS
from orca.sample.shared.sysconf import clock_ticks
from orca.sample.shared.sysconf import page_size as page_size  # the tests and bench scale pages by it
from orca.sample.shell.procs.argv0s import Argv0ByImage, Argv0Files
from orca.sample.shell.procs.procfs import ProcReadings, scan_run
from orca.sample.shell.procs.states import DEAD_STATES
from orca.sample.shell.procs.tree_files import TreeFiles
from orca.sample.shell.procs.walk import ProcRoot, walk_tree


def boot_ticks(ticks_per_second: int) -> int:
    """The boot clock now, in the ticks `/proc/<pid>/stat` counts a process's start in (after boot, the boot clock
    of the reader's time namespace, as the kernel shows it); 0 where there is no such clock."""
    try:
        return time.clock_gettime_ns(time.CLOCK_BOOTTIME) * ticks_per_second // 1_000_000_000
    except (AttributeError, OSError):
        return 0


class ProcessScanner:
    """Reads the run's processes (docs/behaviour.md §3.4 `rss`, §3.12 `run`) once per line, remembering between
    lines what it can (open descriptors, argv[0]s, names, the last reading's processes). `close()` (or `with`)
    closes the descriptors it keeps."""

    def __init__(self, proc: str = "/proc", *, walk_children: bool | None = None) -> None:
        self._root = ProcRoot.at(proc)
        self._by_path = ProcReadings(proc)
        self._page_size = page_size()
        self._ticks_per_second = clock_ticks()
        self._walk = self._root.has_children_files() if walk_children is None else walk_children
        self.source = f"the run's processes in {proc}"
        """What a failure of its readings names."""
        self._keeping = True
        """Descriptors are kept between lines; not after a reading ran out of them."""
        self._tree_files = TreeFiles(self._root)
        self._argv0_files = Argv0Files(self._root)
        self._argv0_images = Argv0ByImage(self._root)
        self._last: Mapping[int, ProcessCounters] = NO_PROCESSES
        """The last reading's processes: those not the run's any more are looked at once more (`RunReading.left`)."""
        self._last_files: tuple[list[int], list[bytes], list[bytes | None]] = ([], [], [])
        self._last_read: tuple[Mapping[int, ProcessCounters], int, Mapping[int, str]] = (NO_PROCESSES, 0, {})
        """The last reading's `stat` and `io` files and what they gave: idle processes' files read the same again."""
        self._names: dict[int, tuple[int, bytes, str]] = {}
        """pid -> (start, comm, name) of the last reading's processes: a name is made again only after an exec (a
        new `comm`) or for another process."""
        self._last_pages: tuple[Mapping[int, int] | None, Mapping[int, int]] = (None, NO_FIGURES)
        """The last reading's resident pages, and them in bytes."""

    def run_rss(self, root: int | None, argv0: str, forks: int | None = None) -> int:
        """Resident bytes of `root`'s tree plus the processes whose argv[0] is `argv0`, each once; 0 with neither.

        `forks`: /proc/stat's `processes`, read before this call, when the caller has it (`TreeFiles.walk`)."""
        rss = self.reading(root, argv0, forks).unwrap().rss_bytes
        return 0 if rss is None else rss

    def reading(
        self, root: int | None, argv0: str, forks: int | None = None, at_ns: int | None = None
    ) -> Result[RunReading, ParseError]:
        """The run's processes now: `root`'s tree and the processes whose argv[0] is `argv0`, each once (none with
        neither), their resident bytes, CPU times, I/O and names, and those of the last reading's that left the run.
        `at_ns`: the moment of the host's readings beside which they are read (by default, now).

        A failure when no descriptor was left to open a process's file with: the processes are then not known, and
        none is not the answer. The descriptors kept between lines may be what took them (an embedding program
        holding most of its limit): they are let go first, and from then on every file is read by path."""
        try:
            return Success(self._reading(root, argv0, forks, at_ns))
        except OSError as error:
            if error.errno not in OUT_OF_DESCRIPTORS or not self._keeping:
                return self._failed(error)
        self.close()
        self._keeping = False
        self._tree_files = TreeFiles(self._root, share=0)
        self._argv0_files = Argv0Files(self._root, share=0)
        return self.reading(root, argv0, forks, at_ns)

    def started(self, at_ns: int) -> RunReading:
        """The reading COMMAND's run starts from, at `at_ns`, just before it was started: no process yet."""
        return started(at_ns, self._ticks_per_second)

    def _failed(self, error: OSError) -> Result[RunReading, ParseError]:
        """The failure of a reading that ran out of descriptors; any other `OSError` is a bug, raised on."""
        if error.errno not in OUT_OF_DESCRIPTORS:
            raise error
        return Failure(ParseError.of(self.source, error))

    def _reading(self, root: int | None, argv0: str, forks: int | None, at_ns: int | None) -> RunReading:
        at_ns = time.monotonic_ns() if at_ns is None else at_ns
        clock = boot_ticks(self._ticks_per_second)
        if root is None and not argv0:
            return self._read(at_ns, clock, [], [], [], NO_FIGURES)
        if not self._walk:
            run, stats = scan_run(self._root, root, argv0, self._argv0_images)
            found = list(run)
            gone = self._last.keys() - run
            read = self._root.read
            return self._read(
                at_ns, clock, found, [stats[pid] for pid in found], [read(pid, "io") for pid in found],
                self._by_path.resident(run), self._left(gone, stats.get, lambda pid: read(pid, "io")),
            )
        files = self._tree_files
        tree = frozenset() if root is None else files.walk(root, forks)
        members = tree.union(self._argv0_files.matching(argv0)) if argv0 else tree
        # The processes that left, read before `keep_only` lets go of their descriptors.
        left = self._left(self._last.keys() - members, files.stat, files.io)
        files.keep_only(tree)
        resident = self._bytes(files.resident(members))
        pids, datas, ios = files.stats(members, self._argv0_files if argv0 else None)
        return self._read(at_ns, clock, pids, datas, ios, resident, left)

    def baseline(self, root: int | None, argv0: str, at_ns: int | None = None) -> Result[RunReading, ParseError]:
        """The run's processes' CPU times and I/O, every file read by path and nothing kept open: the baseline's
        reading, taken before the kernel files' descriptors are kept (their resident bytes are not read: no line
        takes them). A failure when no descriptor was left to read them with."""
        try:
            return Success(self._baseline(root, argv0, time.monotonic_ns() if at_ns is None else at_ns))
        except OSError as error:
            return self._failed(error)

    def _baseline(self, root: int | None, argv0: str, at_ns: int) -> RunReading:
        clock = boot_ticks(self._ticks_per_second)
        if root is None and not argv0:
            return self._read(at_ns, clock, [], [], [], None)
        read = self._root.read
        if not self._walk:
            run, by_pid = scan_run(self._root, root, argv0, self._argv0_images)
            found = list(run)
            return self._read(at_ns, clock, found, [by_pid[pid] for pid in found], [read(pid, "io") for pid in found],
                              None)
        tree = frozenset() if root is None else walk_tree(self._root, root)
        members = tree.union(self._argv0_files.matching(argv0, keep=False)) if argv0 else tree
        stats = [(pid, data) for pid in members if (data := read(pid, "stat"))]
        pids = [pid for pid, _ in stats]
        return self._read(at_ns, clock, pids, [data for _, data in stats], [read(pid, "io") for pid in pids], None)

    def _left(
        self, gone: set[int], stat: Callable[[int], bytes | None], io: Callable[[int], bytes | None]
    ) -> Mapping[int, ProcessCounters]:
        """Those of the last reading's processes `gone` from the run that still exist with the same start, their
        `stat` and `io` read by `stat` and `io` (through kept descriptors while there are some, so a reused pid is
        not taken for them)."""
        left: dict[int, ProcessCounters] = {}
        for pid in gone:
            data = stat(pid)
            read = None if data is None else process_times(data)
            if read is not None and read[2][0] == self._last[pid][0]:
                left[pid] = (*read[2], _io_of(io(pid)))
        return left or NO_PROCESSES

    def _bytes(self, pages: Mapping[int, int]) -> Mapping[int, int]:
        """pid -> resident bytes of `pages`, made again only when the pages are not the last reading's."""
        last, in_bytes = self._last_pages
        if pages is not last:
            size = self._page_size
            in_bytes = {pid: count * size for pid, count in pages.items()}
            self._last_pages = (pages, in_bytes)
        return in_bytes

    def _read(
        self,
        at_ns: int,
        clock: int,
        pids: list[int],
        datas: list[bytes],
        ios: list[bytes | None],
        resident: Mapping[int, int] | None,
        left: Mapping[int, ProcessCounters] = NO_PROCESSES,
    ) -> RunReading:
        """The reading of the processes whose `stat` files are `datas` and `io` files `ios`; a `stat` that does not
        parse is left out. `resident`: pid -> bytes, None when not read (the baseline)."""
        last_pids, last_datas, last_ios = self._last_files
        if datas == last_datas and ios == last_ios and pids == last_pids:
            processes, procs, names = self._last_read
        else:
            processes, procs, names = self._parsed(pids, datas, ios)
            self._last_files = (pids, datas, ios)
            self._last_read = (processes, procs, names)
        self._last = processes
        rss = None if resident is None else sum(resident.values())
        return RunReading(
            at_ns, clock, self._ticks_per_second, processes, procs, left, rss, resident or NO_FIGURES, names
        )

    def _parsed(
        self, pids: list[int], datas: list[bytes], ios: list[bytes | None]
    ) -> tuple[dict[int, ProcessCounters], int, dict[int, str]]:
        """pid -> counters, the processes that have not ended, and pid -> name, of the files read."""
        processes: dict[int, ProcessCounters] = {}
        names: dict[int, str] = {}
        known, self._names = self._names, {}
        procs = 0
        for pid, data, io in zip(pids, datas, ios, strict=True):
            read = process_times(data)
            if read is None:
                continue
            state, comm, times = read
            processes[pid] = (*times, _io_of(io))
            procs += state not in DEAD_STATES
            named = known.get(pid)
            if named is None or named[0] != times[0] or named[1] != comm:
                named = (times[0], comm, self._name(pid, comm))
            self._names[pid] = named
            names[pid] = named[2]
        return processes, procs, names

    def _name(self, pid: int, comm: bytes) -> str:
        """The name of process `pid` whose `comm` is `comm` (compute/top.py), its arguments read only when needed."""
        text = comm.decode("utf-8", "replace")
        return process_name(text, self._root.arguments(pid)) if needs_arguments(text) else text

    def close(self) -> None:
        self._tree_files.close()
        self._argv0_files.close()

    def __enter__(self) -> ProcessScanner:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _io_of(data: bytes | None) -> tuple[int, int] | None:
    """(read_bytes, write_bytes) of an `io` file as read; None when it could not be read or does not parse."""
    return None if data is None else read_write_bytes(data)
