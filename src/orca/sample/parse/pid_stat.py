"""/proc/<pid>/stat (proc(5)): the command sits between the first `(` and the LAST `)`.

The kernel writes it in fs/proc/array.c `do_task_stat`: `pid (comm) state ppid ...`, one space between fields.
`comm` is up to 15 bytes of anything the process chose (`prctl(PR_SET_NAME)` or its executable's name): spaces,
`(`, `)` and newlines included, so fields are counted from after the last `)`, never with a regex or a plain split.

Field numbers below are proc(5)'s (1-based, `pid` is 1). Only the fields the sampler uses are parsed; the rest of
the line is not checked, so a line cut after field 24 (`rss`) still parses.

`cutime` and `cstime` (16, 17) are printed with the kernel's signed formatter (`seq_put_decimal_ll`) although they
come from unsigned nanosecond counters, so a `-` cannot arise from a real kernel; one is read as 0 rather than
rejecting the line, so that a process is never lost from the tree (its parent and memory still count) and no
counter is ever negative. `utime`, `stime`, `starttime` and `rss` are printed unsigned: a `-` there is malformed.
Field 19 (`nice`) and 18 (`priority`) are negative for reniced and real-time processes: they are skipped, not read.
"""

from __future__ import annotations

from dataclasses import dataclass

from orca.sample.parse.numbers import all_u64, u64

# Index of proc(5)'s field N in the whitespace-split text after the last `)`: field 3 (state) is index 0.
_STATE, _PPID, _UTIME, _STIME, _CUTIME, _CSTIME, _STARTTIME, _RSS = 0, 1, 11, 12, 13, 14, 19, 21
# Split no further than the rss field: the ~28 fields after it are never read (cheaper in the hot loop).
_SPLITS = _RSS + 1


@dataclass(frozen=True, slots=True)
class PidStat:
    pid: int
    comm: str
    state: str
    """Field 3: `R`, `S`, `D`, `Z`, `X`, ..."""
    ppid: int
    utime: int
    """Fields 14-17, in clock ticks."""
    stime: int
    cutime: int
    cstime: int
    starttime: int
    """Field 22: clock ticks after boot the process started."""
    rss_pages: int
    """Field 24: a cheap, lagging count (docs/behaviour.md §3.4); resident pages for sums come from statm."""

    @property
    def cpu_ticks(self) -> int:
        return self.utime + self.stime + self.cutime + self.cstime


@dataclass(frozen=True, slots=True)
class PidUsage:
    """The documented API's `PidUsage`: what /proc/<pid>/stat says one process uses."""

    parent: int
    """-1 if the line was malformed."""
    rss_pages: int
    cpu_ticks: int
    """utime + stime + cutime + cstime."""


def _child_ticks(token: bytes) -> int | None:
    """cutime/cstime: signed in the format, never negative in fact (see the module docstring); `-N` reads as 0."""
    ticks = u64(token)
    if ticks is not None:
        return ticks
    if token[:1] == b"-" and u64(token[1:]) is not None:
        return 0
    return None


def _scan(data: bytes) -> tuple[str, int, int, int, int, int, int, int] | None:
    """The fields of a stat line, or None: (state, ppid, utime, stime, cutime, cstime, starttime, rss). The one
    place that decides what is malformed, so `parse` and `stat_fields` always agree.

    bytes, not str: `bytes.isdigit` and `bytes.split` know only ASCII digits and whitespace, as the kernel writes.
    """
    close = data.rfind(b")")
    opening = data.find(b"(")
    if opening < 0 or close < opening or u64(data[:opening].strip()) is None:
        return None
    fields = data[close + 1 :].split(None, _SPLITS)
    if len(fields) < _SPLITS:
        return None
    state = fields[_STATE]
    counts = (fields[_PPID], fields[_UTIME], fields[_STIME], fields[_STARTTIME], fields[_RSS])
    # One check of the five, then plain conversions: this runs for every process of the host on every line of a scan.
    if len(state) != 1 or not state.isalpha() or not all_u64(counts):
        return None
    cutime = _child_ticks(fields[_CUTIME])
    cstime = _child_ticks(fields[_CSTIME])
    if cutime is None or cstime is None:
        return None
    ppid, utime, stime, starttime, rss = map(int, counts)
    return state.decode("ascii"), ppid, utime, stime, cutime, cstime, starttime, rss


def stat_fields(data: bytes) -> tuple[str, int, int, int] | None:
    """(state, ppid, cpu_ticks, starttime) from the raw bytes of /proc/<pid>/stat; None when malformed.

    The per-process hot path: no `Result`, no dataclass. None exactly when `parse` of the same bytes (decoded with
    replacement) fails.

    >>> stat_fields(b"42 (a) b) R 1 1 1 0 -1 0 0 0 0 0 7 3 2 1 20 -5 1 0 900 0 12\\n")
    ('R', 1, 13, 900)
    >>> stat_fields(b"42 (sleep) S 1") is None
    True
    """
    scanned = _scan(data)
    if scanned is None:
        return None
    state, ppid, utime, stime, cutime, cstime, starttime, _ = scanned
    return state, ppid, utime + stime + cutime + cstime, starttime


ProcessTimes = tuple[int, int, int, int]
"""(start, parent, own ticks, children's ticks) of one process: fields 22, 4, 14 + 15 (utime + stime) and 16 + 17
(cutime + cstime, the children it waited for). The start tells a process from another that got its pid."""


def process_times(data: bytes) -> tuple[str, bytes, ProcessTimes] | None:
    """(state, comm, its `ProcessTimes`) from the raw bytes of /proc/<pid>/stat; None when malformed, exactly as
    `stat_fields` (the run's CPU and its top processes, docs/behaviour.md §3.12). `comm` as the kernel wrote it.

    >>> process_times(b"42 (a) b) R 1 1 1 0 -1 0 0 0 0 0 7 3 2 1 20 -5 1 0 900 0 12\\n")
    ('R', b'a) b', (900, 1, 10, 3))
    >>> process_times(b"42 (sleep) S 1") is None
    True
    """
    fields = _scan(data)  # (state, ppid, utime, stime, cutime, cstime, starttime, rss)
    if fields is None:
        return None
    comm = data[data.find(b"(") + 1 : data.rfind(b")")]  # the same `(` and `)` _scan found
    return fields[0], comm, (fields[6], fields[1], fields[2] + fields[3], fields[4] + fields[5])


EXEC_AREA_FIRST = 45
"""proc(5)'s fields 45 to 51 (`start_data` to `env_end`, Linux 3.5+): where exec laid out the data, the heap and
the arguments and environment. They change when a process execs, and only then (ASLR places them anew; another
program's layout differs anyway), so an exec that keeps `comm` (a script running another script) is still seen."""


def exec_area(data: bytes) -> bytes:
    """The raw fields 45-51 of a /proc/<pid>/stat (`EXEC_AREA_FIRST`); empty when the line has fewer fields. The
    kernel writes them as 0 to a reader not allowed to trace the process: then no exec is seen.

    >>> exec_area(b"7 (a b) S" + b" 0" * 41 + b" 1 2 3 4 5 6 7 0\\n")
    b'1 2 3 4 5 6 7'
    >>> exec_area(b"7 (a) S 1 1")
    b''
    """
    after = data[data.rfind(b")") + 2 :].split(None, EXEC_AREA_FIRST + 4)
    first = EXEC_AREA_FIRST - 3  # the fields after `comm` start at field 3
    return b" ".join(after[first : first + 7]) if len(after) >= first + 7 else b""


def parse(text: str) -> PidStat | None:
    """The fields of one /proc/<pid>/stat line the sampler uses; None for a line not of the kernel's shape. A plain
    union, not a `Result`: nothing chains a process's stat, and the shell reads it by `stat_fields`.

    >>> parse("7 (a ) (b) Z 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 15 -5 1 0 99 0 0").comm
    'a ) (b'
    """
    # surrogatepass: any str encodes, so the parse is total; the structure is the same in bytes as in text.
    scanned = _scan(text.encode("utf-8", "surrogatepass"))
    if scanned is None:
        return None
    state, ppid, utime, stime, cutime, cstime, starttime, rss = scanned
    # The same `(` and `)` _scan found: both are ASCII, so they sit at the same places in the text.
    opening, close = text.find("("), text.rfind(")")
    return PidStat(
        pid=int(text[:opening]),
        comm=text[opening + 1 : close],
        state=state,
        ppid=ppid,
        utime=utime,
        stime=stime,
        cutime=cutime,
        cstime=cstime,
        starttime=starttime,
        rss_pages=rss,
    )


def parse_pid_stat(text: str) -> tuple[int, int]:
    """The documented API's adapter: (parent, resident pages); (-1, 0) if malformed.

    >>> parse_pid_stat("1 (init) S 0 1 1 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5 6 77")
    (0, 77)
    >>> parse_pid_stat("garbage")
    (-1, 0)
    """
    stat = parse(text)
    return (-1, 0) if stat is None else (stat.ppid, stat.rss_pages)


def parse_pid_usage(text: str) -> PidUsage:
    """The documented API's adapter: parent, resident pages and CPU ticks; parent -1 if malformed."""
    stat = parse(text)
    if stat is None:
        return PidUsage(parent=-1, rss_pages=0, cpu_ticks=0)
    return PidUsage(parent=stat.ppid, rss_pages=stat.rss_pages, cpu_ticks=stat.cpu_ticks)
