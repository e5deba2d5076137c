"""The summaries as `orca metrics` prints them for a person: one block per instance, then a `total:` line when there
are several (docs/metrics.md). Names from the lines (hosts, paths, containers) and of the files are
printed with their control characters escaped (`printable`)."""

from __future__ import annotations

import math
import shlex

from orca.sample.readback.summary.cgroup import CgroupSummary, cpu_text, memory_text, pids_text
from orca.sample.readback.summary.records import ContainerSummary, InstanceSummary, IoSummary, NetSummary
from orca.sample.readback.summary.run import ExitSummary, RunSummary

SIGNAL_NAMES = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 8: "SIGFPE",
                9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}
"""The signals whose numbers are the same on Linux, macOS and the BSDs: a line does not say where it was written, so
another number is shown as a number alone."""


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
    """Unix seconds as UTC ISO 8601, to the second (as `datetime` shows it: the time to the microsecond, rounded
    half to even, then its seconds).

    >>> utc(1796016198.738), utc(0), utc(951782400)
    ('2026-11-30T05:23:18Z', '1970-01-01T00:00:00Z', '2000-02-29T00:00:00Z')
    >>> utc(4102444799.9), utc(59.9999996)
    ('2099-12-31T23:59:59Z', '1970-01-01T00:01:00Z')
    """
    whole = math.floor(t)
    if round((t - whole) * 1e6) >= 1_000_000:
        whole += 1
    days, seconds = divmod(whole, 86400)
    year, month, day = _civil(days)
    hours, rest = divmod(seconds, 3600)
    return f"{year:04d}-{month:02d}-{day:02d}T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}Z"


def _civil(days: int) -> tuple[int, int, int]:
    """The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`): the arithmetic
    of a calendar, with no clock or time zone behind it."""
    days += 719468  # from 0000-03-01, so that a leap day ends the year
    era, of_era = divmod(days, 146097)
    year_of_era = (of_era - of_era // 1460 + of_era // 36524 - of_era // 146096) // 365
    of_year = of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * of_year + 2) // 153
    day = of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    return year_of_era + era * 400 + (month <= 2), month, day


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


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _traffic(first: str, total: int, peak: int, second: str, second_total: int, second_peak: int) -> str:
    return (f"{first} {humanised(total)} (peak {humanised(peak)}/s)  "
            f"{second} {humanised(second_total)} (peak {humanised(second_peak)}/s)")


def _io(io: IoSummary) -> str:
    return _traffic("read", io.read, io.read_peak, "write", io.write, io.write_peak)


def _net(net: NetSummary) -> str:
    return _traffic("in", net.received, net.received_peak, "out", net.sent, net.sent_peak)


def command_text(run: RunSummary) -> str | None:
    """The command as a shell would take it, and how many arguments the line left out; None without one.

    >>> command_text(RunSummary(("sh", "-c", "sleep 1; echo $x"), None, *[None] * 6))
    "sh -c 'sleep 1; echo $x'"
    >>> command_text(RunSummary(("make", "-j4"), 40, *[None] * 6))
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


def run_text(run: RunSummary, rss_peak: int | None) -> str:
    """The run's processes: their CPU as `top` counts it (100% is one core busy), their resident memory at its
    largest (the lines' `mem.rss`), the most of them at once.

    >>> run_text(RunSummary(None, None, None, 37.4, 99.5, 0.748, 1.99, 7), 2**30)
    'cpu mean 74.8%  max 199.0% of one core  rss peak 1.00 GiB  processes up to 7'
    >>> run_text(RunSummary(None, None, None, 37.4, 99.5, None, None, None), None)
    'cpu mean 37.4%  max 99.5% of all cores'
    """
    if run.cores_mean is not None and run.cores_peak is not None:
        cpu = f"cpu mean {_percent(100 * run.cores_mean)}  max {_percent(100 * run.cores_peak)} of one core"
    elif run.cpu_mean is not None and run.cpu_peak is not None:
        cpu = f"cpu mean {_percent(run.cpu_mean)}  max {_percent(run.cpu_peak)} of all cores"
    else:
        cpu = "cpu unknown"
    parts = [cpu]
    if rss_peak is not None:
        parts.append(f"rss peak {humanised(rss_peak)}")
    if run.procs_peak is not None:
        parts.append(f"processes up to {run.procs_peak:,}")
    return "  ".join(parts)


def _run_rows(summary: InstanceSummary) -> list[str]:
    """The run's own rows, first: what ran, how it ended, its CPU and memory, and against its cgroup's limits."""
    rows: list[str] = []
    run = summary.run
    if run is not None:
        command = command_text(run)
        if command is not None:
            rows.append(f"  command   {printable(command)}")
        if run.exit is not None:
            rows.append(f"  exit      {printable(exit_text(run.exit))}")
        if run.exit is None or run.exit.error is None:  # a COMMAND that never started had no processes
            rss = None if summary.memory is None else summary.memory.rss_peak
            rows.append(f"  run       {run_text(run, rss)}")
    if summary.cgroup is not None:
        rows += [f"  cgroup    {text}" for text in _cgroup_texts(summary.cgroup)]
    return rows


def _cgroup_texts(cgroup: CgroupSummary) -> list[str]:
    return [text for text in (memory_text(cgroup), cpu_text(cgroup), pids_text(cgroup)) if text is not None]


def _block(summary: InstanceSummary) -> list[str]:
    cores = "" if summary.cores is None else f", {summary.cores} cores"
    run = "" if summary.start is None else f", run started {utc(summary.start)}"
    rows = [f"{printable(summary.name)}  (host {printable(summary.host)}{cores}{run})", *_run_rows(summary)]
    rows.append(f"  time      {utc(summary.first_t)} to {utc(summary.last_t)}  ({duration(summary.duration)})")
    gaps = f"{summary.gaps} gap{'' if summary.gaps == 1 else 's'}"
    rows.append(f"  lines     {summary.lines:,}, {gaps} (median interval {summary.median_dt:g} s)")
    if summary.cpu is not None:
        cpu = summary.cpu
        rows.append(
            f"  cpu       mean {_percent(cpu.mean)}  p95 {_percent(cpu.p95)}  max {_percent(cpu.max)}"
            f"  busiest core p95 {_percent(cpu.busiest_p95)}"
        )
    if summary.memory is not None:
        memory = summary.memory
        # The run's rss is in its own row when the lines have a run section.
        rss = "" if summary.run is not None else f"  run's rss peak {humanised(memory.rss_peak)}"
        rows.append(
            f"  memory    used peak {humanised(memory.used_peak)} ({_percent(memory.used_peak_percent)} of "
            f"{humanised(memory.total)})  swap peak {humanised(memory.swap_peak)}{rss}"
        )
    if summary.disk is not None:
        rows.append(f"  disk      fullest {printable(summary.disk.path)} at {_percent(summary.disk.peak_percent)}")
    if summary.io is not None:
        rows.append(f"  io        {_io(summary.io)}")
    if summary.net is not None:
        rows.append(f"  net       {_net(summary.net)}")
    if summary.pressure is not None:
        pressure = summary.pressure
        rows.append(
            f"  pressure  cpu {_percent(pressure.cpu)}  memory {_percent(pressure.memory)}"
            f"  io {_percent(pressure.io)}  (mean share of time stalled)"
        )
    rows += [f"  container {_container(container)}" for container in summary.containers]
    if summary.containers_omitted:
        about = "about " if summary.containers_omitted_estimated else ""
        rows.append(f"  container and {about}{summary.containers_omitted:,} more, not shown: the"
                    f" {len(summary.containers):,} above had the highest memory peaks")
    overhead = "" if summary.overhead_percent is None else f", {summary.overhead_percent:.2f}% of one core"
    rows.append(f"  sampler   {summary.self_cpu_seconds:.2f} s of CPU{overhead}")
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


def summary_text(summaries: list[InstanceSummary]) -> str:
    """The summaries as text: a block per instance, then, for several, a `total:` line; "" for none."""
    if not summaries:
        return ""
    rows: list[str] = []
    for summary in summaries:
        rows += [*_block(summary), ""]
    if len(summaries) > 1:
        first = min(summary.first_t for summary in summaries)
        last = max(summary.last_t for summary in summaries)
        lines = sum(summary.lines for summary in summaries)
        span = f"{utc(first)} to {utc(last)} ({duration(last - first)})"
        rows.append(f"total: {len(summaries)} instances, {lines:,} lines, {span}")
    else:
        rows.pop()
    return "\n".join(rows) + "\n"
