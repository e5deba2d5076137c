"""The summaries as `orca metrics` prints them for a person: one block per run, then a `total:` line when there are
several (docs/metrics.md, "The summary"). The run's rows come first, its CPU in percent of one core as `top` counts it;
the host's rows say they are the host's, its CPU in percent of all its cores. Names from the lines (hosts, paths,
containers) and of the files are printed with their control characters escaped (`printable`)."""

from __future__ import annotations

from orca.sample.readback.gather.records import (
    CgroupSummary,
    ContainerSummary,
    ExitSummary,
    InstanceSummary,
    IoSummary,
    NetSummary,
    ProcessSummary,
    RunSummary,
)
from orca.sample.readback.words import command, cores, count, duration, exit_after, percent, printable, rate, size, utc

LABEL = 14
"""The width of a row's label."""


def exit_text(ended: ExitSummary) -> str:
    """How COMMAND ended, then what `wait4` reported where the line has it.

    >>> exit_text(ExitSummary(0, None, None, 31.25, 20.1, 3.2, 3 * 2**29))
    'exit 0 after 31.2 s  (wait4: user 20.10 s, system 3.20 s, max rss 1.50 GiB)'
    >>> exit_text(ExitSummary(None, 9, None, 200.0, None, None, None)), exit_text(ExitSummary(None, 64, *[None] * 5))
    ('killed by SIGKILL after 3m 20s', 'killed by signal 64')
    >>> exit_text(ExitSummary(127, None, "No such file or directory", None, None, None, None))
    'could not start: No such file or directory (exit 127)'
    """
    usage = [f"{what} {seconds:.2f} s" for what, seconds in (("user", ended.user), ("system", ended.system))
             if seconds is not None]
    if ended.max_rss is not None:
        usage.append(f"max rss {size(ended.max_rss)}")
    return exit_after(ended) + (f"  (wait4: {', '.join(usage)})" if usage else "")


def run_cpu_text(run: RunSummary) -> str:
    """The run's CPU as `top` counts it: 100% is one core busy.

    >>> run_cpu_text(RunSummary(None, None, None, 74.8, 199.0, 7))
    'mean 74.8%  max 199.0% of one core'
    >>> print(run_cpu_text(RunSummary(None, None, None, None, None, None)))
    unknown (no line says both the run's CPU and the cores)
    """
    if run.cpu_mean_core_percent is None or run.cpu_peak_core_percent is None:
        return "unknown (no line says both the run's CPU and the cores)"
    return f"mean {percent(run.cpu_mean_core_percent)}  max {percent(run.cpu_peak_core_percent)} of one core"


def moved_text(moved: IoSummary | NetSummary, ways: tuple[str, str] = ("read", "write")) -> str:
    """Bytes moved each way, and the highest rates: read and written (`io`), or in and out (`net`).

    >>> moved_text(IoSummary(3 * 2**20, 200 * 10**6, 2**20, 50 * 2**20))
    'read 3.00 MiB (peak 1.00 MiB/s)  write 190.73 MiB (peak 50.00 MiB/s)'
    >>> moved_text(NetSummary(2**10, 0, 2**10, 0), ("in", "out"))
    'in 1.00 KiB (peak 1.00 KiB/s)  out 0 B (peak 0 B/s)'
    """
    first, second, first_peak, second_peak = [getattr(moved, name) for name in moved.__match_args__]  # its fields
    return f"{ways[0]} {size(first)} (peak {rate(first_peak)})  {ways[1]} {size(second)} (peak {rate(second_peak)})"


def run_io_text(io: IoSummary, run: RunSummary) -> str:
    """The run's own bytes read and written, and in how many of its lines they were unknown: never a total that
    looks whole when some lines lacked it.

    >>> lacking = RunSummary(None, None, None, None, None, None, None, 7, 5)
    >>> run_io_text(IoSummary(0, 83 * 2**20, 0, 50 * 2**20), lacking)
    'read 0 B (peak 0 B/s)  write 83.00 MiB (peak 50.00 MiB/s)  (unknown in 5 of 7 lines)'
    """
    unknown = run.io_unknown_lines
    return moved_text(io) + (f"  (unknown in {unknown:,} of {run.io_lines:,} lines)" if unknown else "")


def process_text(process: ProcessSummary) -> str:
    """One name of the run's top processes: how many, their memory peak together, their CPU seconds, and the bytes
    they read and wrote where they did.

    >>> process_text(ProcessSummary("java", 12, 2**31, 41.04, 0, 200 * 10**6))
    'java ×12: peak 2.00 GiB, 41.0 CPU-s, write 190.73 MiB'
    >>> process_text(ProcessSummary("pool.py", 5, 5 * 2**30, 60.0, 0, 0, 4242, 2**31, 99.5))
    'pool.py ×5: peak 5.00 GiB, 60.0 CPU-s; largest 2.00 GiB (pid 4242), busiest 100% of one core'
    >>> process_text(ProcessSummary("sleep", 1, None, 0.0, 0, 0))
    'sleep: peak unknown, 0.0 CPU-s'
    """
    several = f" ×{process.count:,}" if process.count > 1 else ""
    peak = "unknown" if process.mem_peak is None else size(process.mem_peak)
    moved = "".join(f", {what} {size(moved)}" for what, moved in (("read", process.read), ("write", process.write))
                    if moved)
    one = ""
    if process.count > 1:  # several of one name: which was the largest, and how busy one got
        parts = []
        if process.largest_rss is not None:
            parts.append(f"largest {size(process.largest_rss)} (pid {process.largest_pid})")
        if process.busiest_core_percent is not None:
            parts.append(f"busiest {process.busiest_core_percent:.0f}% of one core")
        one = "; " + ", ".join(parts) if parts else ""
    return f"{printable(process.name)}{several}: peak {peak}, {process.cpu_seconds:.1f} CPU-s{moved}{one}"


def cgroup_texts(summary: CgroupSummary) -> list[tuple[str, str]]:
    """The run against each of its cgroup's limits: memory, CPU and processes, each only with its limit.

    >>> for row in cgroup_texts(CgroupSummary(1932735283, 2147483648, 0.97, 1.0, 41.0, 2, 37, 4096)):
    ...     print(*row)
    memory peak 1.80 GiB of 2.00 GiB limit (90%), 2 OOM kills
    cpu 0.97 of 1.0 cores, throttled 41% of periods
    pids peak 37 of 4,096 limit
    >>> cgroup_texts(CgroupSummary(None, 2147483648, None, 0.5, None, 0, None, None))
    [('memory', 'peak unknown of 2.00 GiB limit'), ('cpu', 'unknown of 0.5 cores')]
    >>> cgroup_texts(CgroupSummary(None, 2147483648, None, None, None, 1234, None, None))
    [('memory', 'peak unknown of 2.00 GiB limit, 1,234 OOM kills')]
    """
    texts = []
    if summary.mem_max is not None:
        if summary.mem_peak is None:
            memory = f"peak unknown of {size(summary.mem_max)} limit"
        else:
            share = 100 * summary.mem_peak / summary.mem_max if summary.mem_max else 0.0
            memory = f"peak {size(summary.mem_peak)} of {size(summary.mem_max)} limit ({share:.0f}%)"
        if summary.oom_kills:
            memory += ", " + count(summary.oom_kills, "OOM kill")
        texts.append(("memory", memory))
    if summary.cpu_max is not None:
        used = "unknown" if summary.cpu_cores is None else f"{summary.cpu_cores:.2f}"
        cpu = f"{used} of {cores(summary.cpu_max)} cores"
        if summary.throttled is not None:
            cpu += f", throttled {summary.throttled:.0f}% of periods"
        texts.append(("cpu", cpu))
    if summary.pids_max is not None and summary.pids_peak is not None:
        texts.append(("pids", f"peak {summary.pids_peak:,} of {summary.pids_max:,} limit"))
    return texts


def _run_rows(summary: InstanceSummary) -> list[tuple[str, str]]:
    """The run's own rows, first: what ran, how it ended, its CPU, memory and disk I/O, the processes that used the
    most, and against its cgroup's limits."""
    rows: list[tuple[str, str]] = []
    run = summary.run
    memory = summary.memory
    started = run is None or run.exit is None or run.exit.error is None  # one that never started had no processes
    if run is not None:
        if run.command is not None:
            rows.append(("command", command(run.command, run.argc)))
        if run.exit is not None:
            rows.append(("ended", exit_text(run.exit)))
        if started:
            processes = "" if run.procs_peak is None else f"  processes up to {run.procs_peak:,}"
            rows.append(("run cpu", run_cpu_text(run) + processes))
    if started and memory is not None and (run is not None or memory.rss_peak > 0):
        rows.append(("run memory", f"rss peak {size(memory.rss_peak)}"))
    if run is not None and run.io is not None:
        rows.append(("run io", run_io_text(run.io, run)))
    rows += [("process", process_text(process)) for process in summary.top or ()]
    if summary.cgroup is not None:
        rows += [(f"cgroup {limit}", text) for limit, text in cgroup_texts(summary.cgroup)]
    return rows


def _host_rows(summary: InstanceSummary) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if summary.cpu is not None:
        cpu = summary.cpu
        of = "all cores" if summary.cores is None else f"all {summary.cores} cores"
        rows.append(("host cpu", f"mean {percent(cpu.mean_all_cores_percent)}"
                                 f"  p95 {percent(cpu.p95_all_cores_percent)}"
                                 f"  max {percent(cpu.max_all_cores_percent)} of {of}"
                                 f"  busiest core p95 {percent(cpu.busiest_core_p95_percent)}"))
    if summary.memory is not None:
        memory = summary.memory
        rows.append(("host memory", f"used peak {size(memory.used_peak)} ({percent(memory.used_peak_percent)} of "
                                    f"{size(memory.total)})  swap peak {size(memory.swap_peak)}"))
    if summary.disk is not None:
        rows.append(("host disk", f"fullest {printable(summary.disk.path)} at {percent(summary.disk.peak_percent)}"))
    if summary.io is not None:
        rows.append(("host io", moved_text(summary.io)))
    if summary.net is not None:
        rows.append(("host net", moved_text(summary.net, ("in", "out"))))
    if summary.pressure is not None:
        pressure = summary.pressure
        rows.append(("host pressure", f"cpu {percent(pressure.cpu)}  memory {percent(pressure.memory)}"
                                      f"  io {percent(pressure.io)}  (mean share of time stalled)"))
    rows += [("container", _container(container)) for container in summary.containers]
    if summary.containers_omitted:
        about = "about " if summary.containers_omitted_estimated else ""
        rows.append(("container", f"and {about}{summary.containers_omitted:,} more, not shown: the"
                                  f" {len(summary.containers):,} above had the highest memory peaks"))
    return rows


def _container(container: ContainerSummary) -> str:
    limit = "" if container.mem_max is None else f" of {size(container.mem_max)} limit"
    parts = [f"{printable(container.name)}: mem peak {size(container.mem_peak)}{limit}"]
    if container.throttled_mean is not None:
        parts.append(f"throttled mean {percent(container.throttled_mean)}")
    if container.pids_peak is not None:
        parts.append(f"pids peak {container.pids_peak}")
    if container.oom_kills:
        parts.append(f"oom kills {container.oom_kills}")
    return "  ".join(parts)


def block_text(summary: InstanceSummary) -> str:
    """One run's block: its source and host, the run's rows, when and how many lines, the host's rows, and the
    sampler's own cost."""
    cores_text = "" if summary.cores is None else f", {summary.cores} cores"
    started = "" if summary.start is None else f", run started {utc(summary.start)}"
    overhead = "" if summary.overhead_percent is None else f", {summary.overhead_percent:.2f}% of one core"
    rows = [
        *_run_rows(summary),
        ("time", f"{utc(summary.last_t - summary.duration)} to {utc(summary.last_t)}  ({duration(summary.duration)})"),
        ("lines", f"{summary.lines:,}, {count(summary.gaps, 'gap')} (median interval {summary.median_dt:g} s)"),
        *_host_rows(summary),
        ("sampler", f"{summary.self_cpu_seconds:.2f} s of CPU{overhead}"),
    ]
    head = f"{printable(summary.name)}  (host {printable(summary.host)}{cores_text}{started})"
    return "\n".join([head, *(f"  {label.ljust(LABEL)} {text}" for label, text in rows)]) + "\n"


def total_text(runs: int, lines: int, begin: float, end: float) -> str:
    """The `total:` line of several runs.

    >>> total_text(2, 10, 100.0, 160.0)
    'total: 2 runs, 10 lines, 1970-01-01T00:01:40Z to 1970-01-01T00:02:40Z (1m 00s)\\n'
    """
    return f"total: {count(runs, 'run')}, {count(lines, 'line')}, {utc(begin)} to {utc(end)} " \
           f"({duration(end - begin)})\n"
