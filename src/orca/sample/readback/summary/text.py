"""The summaries as `orca metrics` prints them for a person: one block per run, then a `total:` line when there are
several (docs/metrics.md, "The summary"). The run's rows come first, its CPU in percent of one core as `top` counts it;
the host's rows say they are the host's, its CPU in percent of all its cores. Names from the lines (hosts, paths,
containers) and of the files are printed with their control characters escaped (`printable`)."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime

from orca.sample.readback.gather.records import (
    CgroupSummary,
    ContainerSummary,
    ExitSummary,
    InstanceSummary,
    IoSummary,
    ProcessSummary,
    RunSummary,
)

SIGNAL_NAMES = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 8: "SIGFPE",
                9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}
"""The signals whose numbers are the same on Linux, macOS and the BSDs: a line does not say where it was written, so
another number is shown as a number alone."""
LABEL = 14
"""The width of a row's label."""


def printable(text: str) -> str:
    r"""`text` as it may be printed to a terminal: each character that is not printable (a control character such as
    ESC or a newline, a format character such as a right-to-left override, a separator other than the space) written
    as its escape, so that no name in a line can move the cursor, colour the screen or start a row of its own.

    >>> printable("db"), printable("/x\x1b[2J\n  cpu"), printable("h\u202e\u00a0é")
    ('db', '/x\\x1b[2J\\n  cpu', 'h\\u202e\\xa0é')
    """
    if text.isprintable():
        return text
    return "".join(character if character.isprintable() else character.encode("unicode_escape").decode("ascii")
                   for character in text)


def humanised(size: float) -> str:
    """Bytes in binary units, 3 significant figures or more.

    >>> [humanised(n) for n in (0, 1023, 1500, 5 * 2**20, 3.25 * 2**30, 2**50)]
    ['0 B', '1023 B', '1.46 KiB', '5.00 MiB', '3.25 GiB', '1024 TiB']
    """
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.0f} TiB" if abs(size) >= 100 else f"{size:.2f} TiB"


def utc(t: float) -> str:
    """Unix seconds as UTC ISO 8601, to the second.

    >>> utc(1796016198.738), utc(0), utc(951782400), utc(59.9999996)
    ('2026-11-30T05:23:18Z', '1970-01-01T00:00:00Z', '2000-02-29T00:00:00Z', '1970-01-01T00:01:00Z')
    """
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def duration(seconds: float) -> str:
    """`1h 02m 05s`, `3m 20s`, `12.5 s`.

    >>> [duration(s) for s in (12.46, 200, 3725, 90061)]
    ['12.5 s', '3m 20s', '1h 02m 05s', '25h 01m 01s']
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def cores(count: float) -> str:
    """A number of CPUs at the decimals the line gives it (up to 3), at least one.

    >>> cores(1.0), cores(0.5), cores(0.25), cores(2.125)
    ('1.0', '0.5', '0.25', '2.125')
    """
    text = f"{count:.3f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def command_text(run: RunSummary) -> str | None:
    """The command as a shell would take it, and how many arguments the line left out; None without one.

    >>> command_text(RunSummary(("sh", "-c", "sleep 1; echo $x"), None, *[None] * 4))
    "sh -c 'sleep 1; echo $x'"
    >>> command_text(RunSummary(("make", "-j4"), 40, *[None] * 4))
    'make -j4 ... (40 arguments, 2 shown)'
    """
    if run.command is None:
        return None
    text = shlex.join(run.command)
    if run.argc is not None and run.argc > len(run.command):
        text += f" ... ({run.argc:,} arguments, {len(run.command)} shown)"
    return text


def exit_text(ended: ExitSummary) -> str:
    """How COMMAND ended, then what `wait4` reported where the line has it.

    >>> exit_text(ExitSummary(0, None, None, 31.25, 20.1, 3.2, 3 * 2**29))
    'code 0 after 31.2 s  (wait4: user 20.10 s, system 3.20 s, max rss 1.50 GiB)'
    >>> exit_text(ExitSummary(None, 9, None, 200.0, None, None, None)), exit_text(ExitSummary(None, 64, *[None] * 5))
    ('killed by signal 9 (SIGKILL) after 3m 20s', 'killed by signal 64')
    >>> exit_text(ExitSummary(127, None, "No such file or directory", None, None, None, None))
    'could not start: No such file or directory (code 127)'
    """
    if ended.error is not None:
        code = "" if ended.code is None else f" (code {ended.code})"
        return f"could not start: {ended.error}{code}"
    if ended.signal is not None:
        name = SIGNAL_NAMES.get(ended.signal)
        text = f"killed by signal {ended.signal}" + ("" if name is None else f" ({name})")
    else:
        text = "ended" if ended.code is None else f"code {ended.code}"
    if ended.wall is not None:
        text += f" after {duration(ended.wall)}"
    usage = [f"{what} {seconds:.2f} s" for what, seconds in (("user", ended.user), ("system", ended.system))
             if seconds is not None]
    if ended.max_rss is not None:
        usage.append(f"max rss {humanised(ended.max_rss)}")
    return text + (f"  (wait4: {', '.join(usage)})" if usage else "")


def run_cpu_text(run: RunSummary) -> str:
    """The run's CPU as `top` counts it: 100% is one core busy.

    >>> run_cpu_text(RunSummary(None, None, None, 74.8, 199.0, 7))
    'mean 74.8%  max 199.0% of one core'
    >>> print(run_cpu_text(RunSummary(None, None, None, None, None, None)))
    unknown (no line says both the run's CPU and the cores)
    """
    if run.cpu_mean_core_percent is None or run.cpu_peak_core_percent is None:
        return "unknown (no line says both the run's CPU and the cores)"
    return f"mean {_percent(run.cpu_mean_core_percent)}  max {_percent(run.cpu_peak_core_percent)} of one core"


def io_text(io: IoSummary) -> str:
    """Bytes read and written, and the highest rates.

    >>> io_text(IoSummary(3 * 2**20, 200 * 10**6, 2**20, 50 * 2**20))
    'read 3.00 MiB (peak 1.00 MiB/s)  write 190.73 MiB (peak 50.00 MiB/s)'
    """
    return (f"read {humanised(io.read)} (peak {humanised(io.read_peak)}/s)  "
            f"write {humanised(io.write)} (peak {humanised(io.write_peak)}/s)")


def run_io_text(io: IoSummary, run: RunSummary) -> str:
    """The run's own bytes read and written, and in how many of its lines they were unknown: never a total that
    looks whole when some lines lacked it.

    >>> lacking = RunSummary(None, None, None, None, None, None, None, 7, 5)
    >>> run_io_text(IoSummary(0, 83 * 2**20, 0, 50 * 2**20), lacking)
    'read 0 B (peak 0 B/s)  write 83.00 MiB (peak 50.00 MiB/s)  (unknown in 5 of 7 lines)'
    """
    unknown = run.io_unknown_lines
    return io_text(io) + (f"  (unknown in {unknown:,} of {run.io_lines:,} lines)" if unknown else "")


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
    count = f" ×{process.count:,}" if process.count > 1 else ""
    peak = "unknown" if process.mem_peak is None else humanised(process.mem_peak)
    moved = "".join(f", {what} {humanised(size)}" for what, size in (("read", process.read), ("write", process.write))
                    if size)
    one = ""
    if process.count > 1:  # several of one name: which was the largest, and how busy one got
        parts = []
        if process.largest_rss is not None:
            parts.append(f"largest {humanised(process.largest_rss)} (pid {process.largest_pid})")
        if process.busiest_core_percent is not None:
            parts.append(f"busiest {process.busiest_core_percent:.0f}% of one core")
        one = "; " + ", ".join(parts) if parts else ""
    return f"{printable(process.name)}{count}: peak {peak}, {process.cpu_seconds:.1f} CPU-s{moved}{one}"


def cgroup_texts(summary: CgroupSummary) -> list[tuple[str, str]]:
    """The run against each of its cgroup's limits: memory, CPU and processes, each only with its limit.

    >>> for row in cgroup_texts(CgroupSummary(1932735283, 2147483648, 0.97, 1.0, 41.0, 2, 37, 4096)):
    ...     print(*row)
    memory peak 1.80 GiB of 2.00 GiB limit (90%), 2 OOM kills
    cpu 0.97 of 1.0 cores, throttled 41% of periods
    pids peak 37 of 4,096 limit
    >>> cgroup_texts(CgroupSummary(None, 2147483648, None, 0.5, None, 0, None, None))
    [('memory', 'peak unknown of 2.00 GiB limit'), ('cpu', 'unknown of 0.5 cores')]
    """
    texts = []
    if summary.mem_max is not None:
        if summary.mem_peak is None:
            memory = f"peak unknown of {humanised(summary.mem_max)} limit"
        else:
            share = 100 * summary.mem_peak / summary.mem_max if summary.mem_max else 0.0
            memory = f"peak {humanised(summary.mem_peak)} of {humanised(summary.mem_max)} limit ({share:.0f}%)"
        if summary.oom_kills:
            memory += f", {summary.oom_kills} OOM kill" + ("s" if summary.oom_kills > 1 else "")
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
        command = command_text(run)
        if command is not None:
            rows.append(("command", printable(command)))
        if run.exit is not None:
            rows.append(("exit", printable(exit_text(run.exit))))
        if started:
            processes = "" if run.procs_peak is None else f"  processes up to {run.procs_peak:,}"
            rows.append(("run cpu", run_cpu_text(run) + processes))
    if started and memory is not None and (run is not None or memory.rss_peak > 0):
        rows.append(("run memory", f"rss peak {humanised(memory.rss_peak)}"))
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
        rows.append(("host cpu", f"mean {_percent(cpu.mean_all_cores_percent)}"
                                 f"  p95 {_percent(cpu.p95_all_cores_percent)}"
                                 f"  max {_percent(cpu.max_all_cores_percent)} of {of}"
                                 f"  busiest core p95 {_percent(cpu.busiest_core_p95_percent)}"))
    if summary.memory is not None:
        memory = summary.memory
        rows.append(("host memory", f"used peak {humanised(memory.used_peak)} ({_percent(memory.used_peak_percent)} of "
                                    f"{humanised(memory.total)})  swap peak {humanised(memory.swap_peak)}"))
    if summary.disk is not None:
        rows.append(("host disk", f"fullest {printable(summary.disk.path)} at {_percent(summary.disk.peak_percent)}"))
    if summary.io is not None:
        rows.append(("host io", io_text(summary.io)))
    if summary.net is not None:
        net = summary.net
        rows.append(("host net", f"in {humanised(net.received)} (peak {humanised(net.received_peak)}/s)  "
                                 f"out {humanised(net.sent)} (peak {humanised(net.sent_peak)}/s)"))
    if summary.pressure is not None:
        pressure = summary.pressure
        rows.append(("host pressure", f"cpu {_percent(pressure.cpu)}  memory {_percent(pressure.memory)}"
                                      f"  io {_percent(pressure.io)}  (mean share of time stalled)"))
    rows += [("container", _container(container)) for container in summary.containers]
    if summary.containers_omitted:
        about = "about " if summary.containers_omitted_estimated else ""
        rows.append(("container", f"and {about}{summary.containers_omitted:,} more, not shown: the"
                                  f" {len(summary.containers):,} above had the highest memory peaks"))
    return rows


def _container(container: ContainerSummary) -> str:
    limit = "" if container.mem_max is None else f" of {humanised(container.mem_max)} limit"
    parts = [f"{printable(container.name)}: mem peak {humanised(container.mem_peak)}{limit}"]
    if container.throttled_mean is not None:
        parts.append(f"throttled mean {_percent(container.throttled_mean)}")
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
    gaps = f"{summary.gaps} gap{'' if summary.gaps == 1 else 's'}"
    overhead = "" if summary.overhead_percent is None else f", {summary.overhead_percent:.2f}% of one core"
    rows = [
        *_run_rows(summary),
        ("time", f"{utc(summary.last_t - summary.duration)} to {utc(summary.last_t)}  ({duration(summary.duration)})"),
        ("lines", f"{summary.lines:,}, {gaps} (median interval {summary.median_dt:g} s)"),
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
    return f"total: {runs:,} runs, {lines:,} lines, {utc(begin)} to {utc(end)} ({duration(end - begin)})\n"
