"""The run's processes, read from /proc every line (docs/behaviour.md §3.4 `rss`, §3.12 `run`): `ProcessScanner`.

The parts: walk.py finds the processes (a process's files by path, the walk), tree_files.py and argv0s.py keep
what a line can reuse for the next one, compute/run.py makes the figures of two readings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from returns.result import Failure, Result, Success

from orca.sample.compute.run import NO_PROCESSES, RunReading
from orca.sample.compute.tree import total
from orca.sample.parse.errors import ParseError
from orca.sample.parse.pid_stat import ProcessTimes, process_times
from orca.sample.shell.bounded import OUT_OF_DESCRIPTORS
from orca.sample.shell.procs.argv0s import Argv0ByImage, Argv0Files
from orca.sample.shell.procs.procfs import ProcReadings, scan_run
from orca.sample.shell.procs.states import DEAD_STATES
from orca.sample.shell.procs.tree_files import TreeFiles
from orca.sample.shell.procs.walk import ProcRoot, walk_tree
from orca.sample.shell.sysconf import clock_ticks
from orca.sample.shell.sysconf import page_size as page_size  # the tests and bench scale pages by it


def boot_ticks(ticks_per_second: int) -> int:
    """The boot clock now, in the ticks `/proc/<pid>/stat` counts a process's start in (after boot, the boot clock
    of the reader's time namespace, as the kernel shows it); 0 where there is no such clock."""
    try:
        return time.clock_gettime_ns(time.CLOCK_BOOTTIME) * ticks_per_second // 1_000_000_000
    except (AttributeError, OSError):
        return 0


class ProcessScanner:
    """Reads the run's processes (docs/behaviour.md §3.4 `rss`, §3.12 `run`) once per line, remembering between
    lines what it can (open descriptors, argv[0]s, the last reading's processes). `close()` (or `with`) closes the
    descriptors it keeps."""

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
        self._last: Mapping[int, ProcessTimes] = NO_PROCESSES
        """The last reading's processes: those not the run's any more are looked at once more (`RunReading.left`)."""
        self._last_stats: tuple[list[int], list[bytes]] = ([], [])
        self._last_times: tuple[Mapping[int, ProcessTimes], int] = (NO_PROCESSES, 0)
        """The last reading's `stat` files and what they gave: idle processes' files read the same again."""

    def run_rss(self, root: int | None, argv0: str, forks: int | None = None) -> int:
        """Resident bytes of `root`'s tree plus the processes whose argv[0] is `argv0`, each once; 0 with neither.

        `forks`: /proc/stat's `processes`, read before this call, when the caller has it (`TreeFiles.walk`)."""
        rss = self.reading(root, argv0, forks).unwrap().rss_bytes
        return 0 if rss is None else rss

    def reading(self, root: int | None, argv0: str, forks: int | None = None) -> Result[RunReading, ParseError]:
        """The run's processes now: `root`'s tree and the processes whose argv[0] is `argv0`, each once (none with
        neither), their resident bytes and CPU times, and those of the last reading's that left the run.

        A failure when no descriptor was left to open a process's file with: the processes are then not known, and
        none is not the answer. The descriptors kept between lines may be what took them (an embedding program
        holding most of its limit): they are let go first, and from then on every file is read by path."""
        try:
            return Success(self._reading(root, argv0, forks))
        except OSError as error:
            if error.errno not in OUT_OF_DESCRIPTORS or not self._keeping:
                return self._failed(error)
        self.close()
        self._keeping = False
        self._tree_files = TreeFiles(self._root, share=0)
        self._argv0_files = Argv0Files(self._root, share=0)
        return self.reading(root, argv0, forks)

    def _failed(self, error: OSError) -> Result[RunReading, ParseError]:
        """The failure of a reading that ran out of descriptors; any other `OSError` is a bug, raised on."""
        if error.errno not in OUT_OF_DESCRIPTORS:
            raise error
        return Failure(ParseError.of(self.source, error))

    def _reading(self, root: int | None, argv0: str, forks: int | None) -> RunReading:
        at_ns = time.monotonic_ns()
        clock = boot_ticks(self._ticks_per_second)
        if root is None and not argv0:
            return self._read(at_ns, clock, [], [], 0)
        if not self._walk:
            run, stats = scan_run(self._root, root, argv0, self._argv0_images)
            found = list(run)
            gone = self._last.keys() - run
            return self._read(
                at_ns, clock, found, [stats[pid] for pid in found], total(self._by_path.resident(run), run),
                self._left(gone, stats.get) if gone else NO_PROCESSES,
            )
        files = self._tree_files
        tree = frozenset() if root is None else files.walk(root, forks)
        members = tree.union(self._argv0_files.matching(argv0)) if argv0 else tree
        gone = self._last.keys() - members  # (read before `keep_only` lets go of their descriptors)
        left = self._left(gone, files.stat) if gone else NO_PROCESSES
        files.keep_only(tree)
        rss = files.total_pages(members) * self._page_size
        pids, datas = files.stats(members, self._argv0_files.stat if argv0 else None)
        return self._read(at_ns, clock, pids, datas, rss, left)

    def baseline(self, root: int | None, argv0: str) -> Result[RunReading, ParseError]:
        """The run's processes' CPU times, every file read by path and nothing kept open: the baseline's reading,
        taken before the kernel files' descriptors are kept (their resident bytes are not read: no line takes
        them). A failure when no descriptor was left to read them with."""
        try:
            return Success(self._baseline(root, argv0))
        except OSError as error:
            return self._failed(error)

    def _baseline(self, root: int | None, argv0: str) -> RunReading:
        at_ns = time.monotonic_ns()
        clock = boot_ticks(self._ticks_per_second)
        if root is None and not argv0:
            return self._read(at_ns, clock, [], [], None)
        if not self._walk:
            run, stats = scan_run(self._root, root, argv0, self._argv0_images)
            return self._read(at_ns, clock, list(run), [stats[pid] for pid in run], None)
        tree = frozenset() if root is None else walk_tree(self._root, root)
        members = tree.union(self._argv0_files.matching(argv0, keep=False)) if argv0 else tree
        read = self._root.read
        found = [(pid, data) for pid in members if (data := read(pid, "stat"))]
        return self._read(at_ns, clock, [pid for pid, _ in found], [data for _, data in found], None)

    def _left(self, gone: set[int], stat: Callable[[int], bytes | None]) -> Mapping[int, ProcessTimes]:
        """Those of the last reading's processes `gone` from the run that still exist with the same start, their
        `stat` read by `stat` (through a kept descriptor while there is one, so a reused pid is not taken for
        them)."""
        left: dict[int, ProcessTimes] = {}
        for pid in gone:
            data = stat(pid)
            read = None if data is None else process_times(data)
            if read is not None and read[1][0] == self._last[pid][0]:
                left[pid] = read[1]
        return left

    def _read(
        self,
        at_ns: int,
        clock: int,
        pids: list[int],
        datas: list[bytes],
        rss: int | None,
        left: Mapping[int, ProcessTimes] = NO_PROCESSES,
    ) -> RunReading:
        """The reading of the processes whose `stat` files are `datas`; a file that does not parse is left out."""
        last_pids, last_datas = self._last_stats
        if datas == last_datas and pids == last_pids:
            processes, procs = self._last_times
        else:
            found: dict[int, ProcessTimes] = {}
            procs = 0
            for pid, data in zip(pids, datas, strict=True):
                read = process_times(data)
                if read is not None:
                    state, found[pid] = read
                    procs += state not in DEAD_STATES
            processes = found
            self._last_stats = (pids, datas)
            self._last_times = (processes, procs)
        self._last = processes
        return RunReading(at_ns, clock, self._ticks_per_second, processes, procs, left, rss)

    def close(self) -> None:
        self._tree_files.close()
        self._argv0_files.close()

    def __enter__(self) -> ProcessScanner:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
