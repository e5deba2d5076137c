"""Which of the run's kept processes a line reads again (docs/behaviour.md §3.12): the decision, apart from the reads.

A process's `stat` holds its CPU times and those of the children it waited for; its `schedstat` (the main thread's
time on a CPU, its wait for one, its times run) is a much cheaper file for the kernel to make, and it moves whenever
the main thread runs. A process with one thread whose `schedstat` reads as when its `stat` was last read has not run
since: its own times are the same, and so are its children's, since only it, running, can wait for them. So its
`stat` is that of the last reading. A process with more threads may have run in another thread, which its
`schedstat` does not show: its `stat` is read every line. Without an earlier reading of the same processes, every
one is read.

Whatever else a line reads for each process it reads again (`/proc/<pid>/io` will be one) follows the same decision.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def read_again(
    pids: Sequence[int], ran: Sequence[bytes], ran_before: Sequence[bytes] | None, threaded: Collection[int]
) -> list[int]:
    """The positions in `pids` of the processes whose `stat` is read again, given each one's `schedstat` now (`ran`)
    and when their `stat` files were last read (`ran_before`, in the same order; None when they were not all read
    then); `threaded`: the processes with more than one thread.

    >>> read_again([7, 8, 9], [b"5 0 1", b"9 0 2", b"3 0 1"], [b"5 0 1", b"8 0 1", b"3 0 1"], {9})
    [1, 2]
    >>> read_again([7, 8], [b"5 0 1", b"9 0 2"], None, ())
    [0, 1]
    """
    if ran_before is None:
        return list(range(len(pids)))
    if ran == ran_before and not threaded:  # an idle tree: the usual line
        return []
    return [
        place
        for place, (pid, now, before) in enumerate(zip(pids, ran, ran_before, strict=True))
        if now != before or pid in threaded
    ]
