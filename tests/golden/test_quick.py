"""The quick path's reading of real captures (compute/quick.py): the counters it keeps are the ones in the files,
written here by hand from the captures; a text not as the kernel prints it gives none.

The captures are this machine's (Linux 6.18.44-fc-v857, x86_64, 2 cores), taken with `cat`."""

from __future__ import annotations

import errno
from pathlib import Path

from orca.sample.compute import quick

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"
STAT = (CAPTURES / f"proc_stat.{MACHINE}.txt").read_bytes()
DISKSTATS = (CAPTURES / f"proc_diskstats.{MACHINE}.txt").read_bytes()
NET_DEV = (CAPTURES / f"proc_net_dev.{MACHINE}.txt").read_bytes()
PSI = tuple((CAPTURES / f"proc_pressure_{resource}.{MACHINE}.txt").read_bytes() for resource in ("cpu", "memory", "io"))
NO_PSI = (OSError(errno.ENOENT, "No such file or directory"),) * 3


def test_the_captures_counters() -> None:
    counters = quick.counters(STAT, DISKSTATS, NET_DEV, NO_PSI, 7)
    assert counters is not None
    # proc_stat: `cpu  8454 0 2234 63192 139 0 27 11 0 0`, `cpu0 550 0 627 35808 10 0 4 3 0 0`,
    # `cpu1 7904 0 1607 27383 129 0 22 8 0 0` (guest and guest_nice left out), and `processes 5630`.
    assert counters.cpu == (
        (8454, 0, 2234, 63192, 139, 0, 27, 11),
        (550, 0, 627, 35808, 10, 0, 4, 3),
        (7904, 0, 1607, 27383, 129, 0, 22, 8),
    )
    assert counters.core_numbers == (0, 1)
    assert counters.forks == 5630
    assert counters.stalls is None and counters.monotonic_ns == 7
    # The pressure captures' `some` totals: cpu 4134759, memory 0, io 1332681 (µs).
    with_psi = quick.counters(STAT, DISKSTATS, NET_DEV, PSI, 7)
    assert with_psi is not None and with_psi.stalls == (4134759, 0, 1332681)


def test_a_stat_without_processes_or_cut_inside_it_has_no_fork_count() -> None:
    """No `processes` line, or one cut off before its newline (its number may be missing digits): no count, so the
    walk of the run's tree never takes it for the last line's."""
    cpu_lines = b"cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n"
    for text in (cpu_lines, cpu_lines + b"processes 56", cpu_lines + b"processes -5\n", cpu_lines + b"processes \n"):
        counters = quick.counters(text, DISKSTATS, NET_DEV, NO_PSI, 0)
        assert counters is not None and counters.forks is None, text
    counters = quick.counters(cpu_lines + b"ctxt 9\nprocesses 56\nprocs_running 1\n", DISKSTATS, NET_DEV, NO_PSI, 0)
    assert counters is not None and counters.forks == 56


def test_texts_not_as_the_kernel_prints_them_give_no_counters() -> None:
    for stat in (b"cpu  1 2 3 4\n", b"cpu  1 2 3 4 5 6 7 -8\n", b"cpux 1 2 3 4 5 6 7 8\n", b"intr 1\n"):
        assert quick.counters(stat, DISKSTATS, NET_DEV, NO_PSI, 0) is None, stat
    assert quick.counters(STAT, b"", NET_DEV, NO_PSI, 0) is None
    assert quick.counters(STAT, DISKSTATS, b"garbage\n", NO_PSI, 0) is None
    one_missing = (b"some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", *NO_PSI[1:])
    assert quick.counters(STAT, DISKSTATS, NET_DEV, one_missing, 0) is None
    unreadable = (OSError(errno.EACCES, "Permission denied"),) * 3
    assert quick.counters(STAT, DISKSTATS, NET_DEV, unreadable, 0) is None
