"""Renderers: a parsed snapshot back to the text the kernel would print, for round-trip properties.

Formats follow the kernel's own printers: fs/proc/stat.c (show_stat), fs/proc/meminfo.c (show_val_kb),
block/genhd.c (diskstats_show; 14 fields before 4.18, 18 from 4.18, 20 from 5.5; the 7-field partition lines of
2.6.25 and older), net/core/net-procfs.c (dev_seq_printf_stats; `%6s:%8lu` with no space on old kernels) and
kernel/sched/psi.c (psi_show: `%lu.%02lu` shares, `%llu` total).
"""

from __future__ import annotations

from orca.sample.parse.diskstats import DiskStats
from orca.sample.parse.meminfo import MemInfo
from orca.sample.parse.net_dev import NetDev
from orca.sample.parse.pressure import Pressure, PressureLine
from orca.sample.parse.proc_stat import CpuTimes, ProcStat

# What follows the cpu lines in a real /proc/stat: the parser must ignore all of it.
_STAT_TAIL = (
    "intr 122441 0 0 1 1 14\n"
    "ctxt 214872\n"
    "btime 1796015774\n"
    "{processes}"
    "procs_running 1\n"
    "procs_blocked 0\n"
    "softirq 76207 0 13699 3 7202 11156 0 2 20351 0 23794\n"
)

NET_DEV_HEADER = (
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier"
    " compressed\n"
)


def _cpu_fields(times: CpuTimes, guest: tuple[int, int]) -> str:
    counters = (times.user, times.nice, times.system, times.idle, times.iowait, times.irq, times.softirq, times.steal)
    return " ".join(str(counter) for counter in (*counters, *guest))


def render_proc_stat(stat: ProcStat, guest: tuple[int, int] = (0, 0)) -> str:
    """show_stat(): `cpu  ` and ten counters (guest and guest_nice last), then `cpuN ` lines, then the rest, whose
    `processes` line is left out with no fork count (a kernel before 2.6 had none)."""
    lines = [f"cpu  {_cpu_fields(stat.total, guest)}"]
    lines += [f"cpu{number} {_cpu_fields(times, guest)}" for number, times in stat.cores]
    processes = "" if stat.forks is None else f"processes {stat.forks}\n"
    return "\n".join(lines) + "\n" + _STAT_TAIL.format(processes=processes)


def render_meminfo(info: MemInfo, no_space: bool = False) -> str:
    """show_val_kb(): `Key:` padded to 16 columns, the kB value right-aligned in 8; unitless for other values.

    A value that is a whole number of KiB is written in kB, any other without a unit: both parse to the same bytes.
    `no_space` writes `Key:123 kB`, as some kernels do.
    """
    lines = []
    for key, value in info.bytes_by_key.items():
        number, unit = (value // 1024, " kB") if value % 1024 == 0 else (value, "")
        lines.append(f"{key}:{number}{unit}" if no_space else f"{key + ':':<16}{number:>8}{unit}")
    return "".join(line + "\n" for line in lines)


def render_diskstats(stats: DiskStats, field_count: int = 20, filler: int = 0) -> str:
    """diskstats_show() with `field_count` fields per line (14, 18, 20; or 7, the old partition format).

    The counters the snapshot does not hold (and major, minor) are `filler`.
    """
    lines = []
    for minor, device in enumerate(stats.devices):
        if field_count == 7:
            counters = [filler, device.sectors_read, filler, device.sectors_written]
            lines.append(f"{filler:>4} {minor:>4} {device.name} " + " ".join(map(str, counters)))
            continue
        counters = [filler] * (field_count - 3)
        counters[2], counters[6] = device.sectors_read, device.sectors_written
        lines.append(f"{filler:>4} {minor:>7} {device.name} " + " ".join(map(str, counters)))
    return "".join(line + "\n" for line in lines)


def render_net_dev(net: NetDev, loopback: tuple[int, int] | None = (3193, 3193), no_space: bool = False) -> str:
    """dev_seq_show(): the two header lines, then `%6s: ` and 16 counters per interface (`lo` first if given).

    `no_space` is the old `%6s:%8lu` format, where a long byte count follows the colon directly: `eth0:123`.
    """
    interfaces = dict(net.bytes_by_interface)
    if loopback is not None:
        interfaces = {"lo": loopback, **interfaces}
    lines = []
    for name, (received, sent) in interfaces.items():
        separator = ":" if no_space else ": "
        counters = [received, 7, 0, 0, 0, 0, 0, 0, sent, 5, 0, 0, 0, 0, 0, 0]
        lines.append(f"{name:>6}{separator}" + " ".join(f"{counter:>7}" for counter in counters).lstrip())
    return NET_DEV_HEADER + "".join(line + "\n" for line in lines)


def _pressure_line(kind: str, line: PressureLine) -> str:
    return f"{kind} avg10={line.avg10:.2f} avg60={line.avg60:.2f} avg300={line.avg300:.2f} total={line.total_us}\n"


def render_pressure(pressure: Pressure) -> str:
    """psi_show(): the `some` line, then the `full` line when there is one."""
    full = "" if pressure.full is None else _pressure_line("full", pressure.full)
    return _pressure_line("some", pressure.some) + full
