"""A control-placed run's process: where its output is staged, how it is started, and its memory cap.

The shell of `orca.control`: it starts processes, reads /proc and sends signals. The rules it applies (the cap,
the reason a person reads, which processes are the run's) are the pure functions of `rules` and `members`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from orca.control.members import ProcId, proc_id, run_members
from orca.control.rules import ControlLimits, cap_reason, environment_of, runs_over
from orca.sample import stage_root
from orca.sample.shell.bounded import is_kernel_procfs, read_or_none
from orca.sample.shell.procs.scanner import tree_usage

OOM_SCORE_ADJ = b"1000"
"""The most the kernel's OOM killer can prefer a process: a control-placed run goes before the scheduler."""
# Freezing a tree takes as many passes as it has generations forking at once; a bound, so a kill always ends.
_FREEZE_PASSES = 16


# --- the staging file -----------------------------------------------------------------------------------------------


def _under(path: str, directory: str) -> bool:
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory


def control_stage(pipeline: str, run: int, start: int, environ: Mapping[str, str] = os.environ) -> str:
    """The staging file of a control-placed run's output, `<root>/<pipeline>/<run>/driver-<start>.log`, before it is
    masked and appended to the run's `driver.log`.

    The root is the sampler's staging root (`ORCA_LOG_STAGE`, else `$TMPDIR/orca-logs`, else `/tmp/orca-logs`),
    but never one under `ORCA_LOGS`: the output is not masked yet, so a root there is passed over for the next.
    Raises ValueError for a pipeline name that is not one path segment, or when every root is under `ORCA_LOGS`.
    """
    if pipeline in ("", ".", "..") or "/" in pipeline or "\0" in pipeline:
        raise ValueError(f"pipeline {pipeline!r}: not a name that can be one directory")
    logs = environ.get("ORCA_LOGS", "")
    candidates = [dict(environ), {**environ, "ORCA_LOG_STAGE": ""}, {**environ, "ORCA_LOG_STAGE": "", "TMPDIR": ""}]
    for candidate in candidates:
        root = stage_root(candidate)
        if not logs or "://" in logs or not _under(root, logs):
            return os.path.join(root, pipeline, str(run), f"driver-{start}.log")
    raise ValueError(f"every staging root is under ORCA_LOGS ({logs}): set ORCA_LOG_STAGE elsewhere")


# --- starting a run -------------------------------------------------------------------------------------------------


def _lower_and_expose(nice: int) -> Callable[[], None]:
    """What the child runs between fork and exec: only system calls, since the scheduler may have threads."""

    def prepare() -> None:
        os.nice(nice)
        # Raising one's own oom_score_adj needs no privilege; a kernel without the file (not Linux) has no OOM score.
        try:
            fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        except OSError:
            return
        try:
            os.write(fd, OOM_SCORE_ADJ)
        except OSError:
            pass
        finally:
            os.close(fd)

    return prepare


def start_run(argv: list[str], env: Iterable[str], limits: ControlLimits, stage: str) -> subprocess.Popen[bytes]:
    """Starts a control-placed run's process: `argv`, with the scheduler's environment plus the `NAME=value`
    entries of `env` (`run_env`'s), at nice `limits.nice` relative to the scheduler, `oom_score_adj` 1000 (the
    kernel's first choice if memory runs out), in a process group of its own, its standard output and error
    appended to `stage` (created with its directories, readable by its owner only, since it is not masked yet).
    Its standard input is empty. Returns the process handle; raises OSError when `argv` cannot be started or
    `stage` cannot be opened.
    """
    Path(stage).parent.mkdir(parents=True, exist_ok=True)
    output = os.open(stage, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        return subprocess.Popen(
            argv,
            env={**os.environ, **environment_of(env)},
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            process_group=0,
            preexec_fn=_lower_and_expose(limits.nice),
            close_fds=True,
        )
    finally:
        os.close(output)


# --- the memory cap -------------------------------------------------------------------------------------------------


def over_cap(runs: Mapping[int, int], limits: ControlLimits, *, proc: str = "/proc") -> dict[int, int]:
    """run -> resident bytes of the runs (run -> root pid) whose tree holds more than `limits.memory_mb` MB, from
    one reading of all the trees. A run whose root has ended is not over."""
    return runs_over(runs, tree_usage(runs.values(), proc=proc), limits.memory_bytes)


def enforce_memory(runs: Mapping[int, int], limits: ControlLimits, *, proc: str = "/proc") -> dict[int, str]:
    """Kills each run (run -> root pid) over the cap: every process of its tree, SIGKILL. Returns run -> the reason
    a person reads on its page. A run under the cap is never signalled.

    Each root is known by its start time, read before the trees are measured, so a root that ended and whose pid
    went to another process in the meantime is left alone, as is any other pid reused while the tree is killed.
    """
    starts = {run: start for run, root in runs.items() if (start := _start_of(proc, root)) is not None}
    reasons: dict[int, str] = {}
    for run, resident in over_cap({run: runs[run] for run in starts}, limits, proc=proc).items():
        if kill_run(runs[run], starts[run], proc=proc):
            reasons[run] = cap_reason(resident, limits.memory_mb)
    return reasons


def kill_run(root: int, root_start: int, *, proc: str = "/proc") -> int:
    """SIGKILLs every process of the run whose root is `root`, started at `root_start` (`members`); returns how
    many were signalled, 0 when the root is gone or is another process now.

    The tree is frozen first (SIGSTOP, pass after pass, until a pass finds no process not yet stopped), so a
    process forking as it is killed leaves no child behind; then every stopped process is killed. Each process is
    held by a pidfd opened before its start time is checked again, so a signal never reaches a pid reused since
    the pass that found it.
    """
    held: dict[int, _Held] = {}
    try:
        for _ in range(_FREEZE_PASSES):
            table = _process_table(proc)
            new = [pid for pid in run_members(table, root, root_start) if pid not in held]
            if not new:
                break
            for pid in new:
                process = _Held.of(proc, pid, table[pid].start)
                if process is not None:
                    held[pid] = process
                    process.send(signal.SIGSTOP)
    finally:
        for process in held.values():
            process.send(signal.SIGKILL)
            process.close()
    return len(held)


class _Held:
    """One process, by a pidfd where the kernel has them (Linux 5.3+), else by pid checked just before use."""

    def __init__(self, proc: str, pid: int, start: int, pidfd: int) -> None:
        self._proc, self._pid, self._start, self._pidfd = proc, pid, start, pidfd

    @classmethod
    def of(cls, proc: str, pid: int, start: int) -> _Held | None:
        """`pid` if it is still the process that started at `start`; None if it ended or the pid is another's."""
        pidfd = -1
        with contextlib.suppress(OSError, AttributeError):
            pidfd = os.pidfd_open(pid)
        # Checked after the pidfd is open: if `pid` is still the process found, the pidfd holds that process.
        if _start_of(proc, pid) != start:
            if pidfd >= 0:
                os.close(pidfd)
            return None
        return cls(proc, pid, start, pidfd)

    def send(self, signal_number: int) -> None:
        with contextlib.suppress(OSError):
            if self._pidfd >= 0:
                signal.pidfd_send_signal(self._pidfd, signal_number)
            elif _start_of(self._proc, self._pid) == self._start:
                os.kill(self._pid, signal_number)

    def close(self) -> None:
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1


def _start_of(proc: str, pid: int) -> int | None:
    """The start time of process `pid`, None when there is none (or pid names no single process)."""
    if pid <= 0:
        return None
    data = read_or_none(f"{proc}/{pid}/stat", trusted=is_kernel_procfs(proc))
    found = None if data is None else proc_id(data)
    return None if found is None else found.start


def _process_table(proc: str) -> dict[int, ProcId]:
    """Every process's `ProcId`, from one pass over `proc`; a process that ends mid-pass is left out."""
    try:
        names = os.listdir(proc)
    except OSError:
        return {}
    trusted = is_kernel_procfs(proc)
    table: dict[int, ProcId] = {}
    for name in names:
        if name.isdigit() and name.isascii():
            data = read_or_none(f"{proc}/{name}/stat", trusted=trusted)
            found = None if data is None else proc_id(data)
            if found is not None:
                table[int(name)] = found
    return table
