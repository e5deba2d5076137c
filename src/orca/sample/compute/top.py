"""`run.top`: the run's processes that used the most in one line, and the name a person knows each by
(docs/behaviour.md §3.12).

Which processes: the `TOP_BY_MEMORY` largest by resident memory at the reading; then the `TOP_BY_CPU` busiest over
the interval among the others (of those that used any CPU); then the `TOP_BY_IO` that read and wrote the most bytes
over it among the rest (of those that did any I/O). Each process once, in that order: at most eight, whatever the
size of the tree. Each with its CPU over the
interval, counted as `run.cpu` is (a child reaped meanwhile counts in its parent), its resident bytes, and its disk
read and write rates.

The name: a process's `comm` (its executable's name, as `ps` and `top` show it), but for an interpreter running a
script, where the script is what tells two processes apart (`python3 dev.py test` is `dev.py`, `python3 -m pytest`
is `pytest`, `bash build.sh` is `build.sh`; each interpreter's options as `compute/interpreters.py` knows them);
and for a `comm` the kernel may have cut at 15 bytes, the name of argv[0] it was cut from. The shell reads a
process's arguments only when `needs_arguments` says so.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from operator import itemgetter

from orca.sample.compute.cpu import share_of_cores
from orca.sample.compute.interpreters import options_of, script_of
from orca.sample.compute.rates import per_second
from orca.sample.compute.run_reading import NO_NAMES, ProcessUse, RunReading
from orca.sample.line_format import TopProcess

TOP_BY_MEMORY = 3
TOP_BY_CPU = 3
TOP_BY_IO = 2
NAME_CHARS_AT_MOST = 64
"""A longer name (a script's) is cut and ends with `…`."""
COMM_CHARS_AT_MOST = 15
"""The kernel keeps 15 bytes of a process's name (TASK_COMM_LEN less its NUL): one of 15 may have been cut."""

_LARGEST = itemgetter(1)


def needs_arguments(comm: str) -> bool:
    """Whether a process's name needs its arguments (`/proc/<pid>/cmdline`): an interpreter's or a shell's, which
    may run a script, or a `comm` the kernel may have cut.

    >>> needs_arguments("python3.11"), needs_arguments("bash"), needs_arguments("java"), needs_arguments("x" * 15)
    (True, True, False, True)
    """
    return len(comm) >= COMM_CHARS_AT_MOST or options_of(comm) is not None


def process_name(comm: str, argv: Sequence[str]) -> str:
    """The name a person knows a process by, from its `comm` and its arguments (empty when they could not be read).

    >>> process_name("python3", ["/usr/bin/python3", "-X", "dev", "/srv/orca/dev.py", "test", "-x"])
    'dev.py'
    >>> process_name("python3", ["python3", "-m", "pytest", "-q"]), process_name("python3", ["python3", "-c", "pass"])
    ('pytest', 'python3')
    >>> process_name("sh", ["sh", "-c", "make all"]), process_name("bash", ["bash", "-e", "./ci/build.sh"])
    ('sh', 'build.sh')
    >>> process_name("chromium-browse", ["/usr/lib/chromium/chromium-browser", "--type=renderer"])
    'chromium-browser'
    >>> process_name("java", ["java", "-jar", "app.jar"])
    'java'
    """
    name = comm
    if argv:
        options = options_of(comm)
        if options is not None:
            script = script_of(options, argv)
            if script:
                name = _basename(script)
        elif len(comm) >= COMM_CHARS_AT_MOST:
            command = _basename(argv[0])
            if command.startswith(comm):
                name = command
    return name if len(name) <= NAME_CHARS_AT_MOST else name[: NAME_CHARS_AT_MOST - 1] + "…"


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] or path


def top_processes(
    cur: RunReading,
    by_process: Mapping[int, ProcessUse],
    seconds: float,
    cores: int,
    were_named: Mapping[int, str] = NO_NAMES,
) -> tuple[TopProcess, ...]:
    """The line's `run.top`: the processes of `cur` that used the most, chosen as the module docstring says, from
    what each used since the previous reading (`by_process`; empty when none ran) over `seconds`.

    >>> from orca.sample.compute.run_reading import RunReading
    >>> cur = RunReading(0, 0, 100, {7: (0, 1, 0, 0, (0, 0)), 8: (0, 7, 0, 0, None)}, 2, rss_bytes=6,
    ...                  resident={7: 4, 8: 2}, names={7: "make", 8: "cc1"})
    >>> [(top.name, top.cpu, top.rss, top.write) for top in top_processes(cur, {8: (50, None)}, 1.0, 2)]
    [('make', 0.0, 4, 0), ('cc1', 25.0, 2, None)]
    """
    names, resident, processes = cur.names, cur.resident, cur.processes
    largest = [pid for pid, _ in heapq.nlargest(TOP_BY_MEMORY, resident.items(), key=_LARGEST) if pid in processes]
    chosen = dict.fromkeys(largest)
    busy = ((ticks, pid) for pid, (ticks, _) in by_process.items() if ticks > 0 and pid not in chosen)
    chosen.update(dict.fromkeys(pid for _, pid in heapq.nlargest(TOP_BY_CPU, busy)))
    moved = ((sum(io), pid) for pid, (_, io) in by_process.items() if io is not None and any(io) and pid not in chosen)
    chosen.update(dict.fromkeys(pid for _, pid in heapq.nlargest(TOP_BY_IO, moved)))
    tops = []
    for pid in chosen:
        use = by_process.get(pid)
        if use is None:  # it did not run: nothing used, its I/O known when its `io` was read
            ticks, io = 0, None if processes[pid][4] is None else (0, 0)
        else:
            ticks, io = use
        tops.append(TopProcess(
            pid=pid,
            name=names.get(pid) or were_named.get(pid, ""),
            cpu=share_of_cores(ticks, seconds, cur.ticks_per_second, cores),
            rss=resident.get(pid),
            read=None if io is None else per_second(io[0], seconds),
            write=None if io is None else per_second(io[1], seconds),
        ))
    return tuple(tops)
