"""A control-placed run's process: where its output is staged, how it is started, and its memory cap.

The shell of `orca.control`: it starts processes, reads /proc and cgroup files and sends signals. The rules it
applies (the cap, the reason a person reads, which processes are the run's) are the pure functions of `rules`,
`members` and `cgroup_text`; finding and ending processes is `procs`', a run's own cgroup `cgroups`'.

A run is measured as it is killed: where it has a cgroup of its own, that cgroup (the kernel's numbers); else its
root's session and process group (the root leads both) and every descendant of theirs, found again at each reading,
so an orphan, a `setsid` child and what is left of a run whose root ended first are all counted and all killed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from orca.control import cgroups, procs
from orca.control.members import NONE, Members, run_members, tops
from orca.control.rules import ControlLimits, cap_reason, environment_of, kernel_cap_reason
from orca.sample import open_private, stage_root, tree_usage

OOM_SCORE_ADJ = b"1000"
"""The most the kernel's OOM killer can prefer a process: a control-placed run goes before the scheduler."""


# --- the staging file -----------------------------------------------------------------------------------------------


def _under(path: str, directory: str) -> bool:
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory


def _roots(environ: Mapping[str, str]) -> list[str]:
    """The staging roots in the order they are tried: the sampler's (`ORCA_LOG_STAGE`, else `$TMPDIR/orca-logs`),
    then without `ORCA_LOG_STAGE`, then `/tmp/orca-logs`."""
    candidates = [dict(environ), {**environ, "ORCA_LOG_STAGE": ""}, {**environ, "ORCA_LOG_STAGE": "", "TMPDIR": ""}]
    return list(dict.fromkeys(stage_root(candidate) for candidate in candidates))


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
    for root in _roots(environ):
        if not logs or "://" in logs or not _under(root, logs):
            return os.path.join(root, pipeline, str(run), f"driver-{start}.log")
    raise ValueError(f"every staging root is under ORCA_LOGS ({logs}): set ORCA_LOG_STAGE elsewhere")


def _root_of(stage: str, environ: Mapping[str, str]) -> str:
    """The staging root `stage` is under (whose directories down to it are made private), else its own directory."""
    stage = os.path.abspath(stage)
    for root in _roots(environ):
        root = os.path.abspath(root)
        if stage.startswith(root.rstrip(os.sep) + os.sep):
            return root
    return os.path.dirname(stage)


# --- starting a run -------------------------------------------------------------------------------------------------


def _prepare(nice: int, join: Callable[[], None] | None) -> Callable[[], None]:
    """What the child runs between fork and exec: only system calls, since the scheduler may have threads."""

    def prepare() -> None:
        if join is not None:
            join()  # first, so that nothing the run does is outside its cgroup
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


def start_run(argv: list[str], env: Sequence[str], limits: ControlLimits, stage: str) -> subprocess.Popen[bytes]:
    """Starts a control-placed run's process: `argv`, with the scheduler's environment plus the `NAME=value`
    entries of `env` (`run_env`'s), at nice `limits.nice` relative to the scheduler, `oom_score_adj` 1000 (the
    kernel's first choice if memory runs out), the leader of a session and process group of its own, in a cgroup
    of its own under `limits.cgroup` when one is given, its standard output and error appended to `stage`. Its
    standard input is empty.

    `stage` is opened as a staging file (`orca.sample.open_private`): its directories below the staging root made
    0700, never through a symbolic link, only a regular file of this user's, made 0600 before the run writes (it
    is not masked yet). Returns the process handle. Raises TypeError or ValueError for `env` that is not a list of
    `NAME=value` entries (before anything starts), OSError when `stage` is refused or cannot be opened, the cgroup
    directory cannot hold runs, or `argv` cannot be started.
    """
    environment = {**os.environ, **environment_of(env)}
    join = None
    if limits.cgroup:
        join = cgroups.joiner(limits.cgroup, limits, cgroups.prepare(limits.cgroup))
    output = open_private(_root_of(stage, os.environ), stage)
    try:
        return subprocess.Popen(
            argv,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_prepare(limits.nice, join),
            close_fds=True,
        )
    except subprocess.SubprocessError:
        # Only the cgroup step raises in the child; Python reports no more than that it did.
        raise OSError(f"could not start the run in a cgroup of its own under {limits.cgroup}") from None
    finally:
        os.close(output)


# --- the memory cap -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Reading:
    """One run as one reading found it."""

    resident: int
    """Bytes: its cgroup's `memory.current`, else its processes' resident memory."""
    cgroup: str | None
    """Its own cgroup, if it has one."""
    members: Members
    """Its processes, when it has no cgroup."""
    root_start: int | None
    """Its root's start time, None when the root had ended."""
    kernel_ended: bool = False
    """Its cgroup's memory reached `memory.max`: the kernel ended it."""


def _readings(runs: Mapping[int, int], limits: ControlLimits, proc: str) -> dict[int, _Reading]:
    """run -> what one reading of every process (and of each run's cgroup) finds of it; a run with nothing left is
    absent. The runs measured by their processes' resident memory are measured together, by one `tree_usage`."""
    table = procs.process_table(proc)
    own = procs.own_ids()
    readings: dict[int, _Reading] = {}
    by_processes: dict[int, _Reading] = {}
    for run, root in runs.items():
        if root in own:
            continue
        root_start = table[root].start if root in table else None
        path = cgroups.of_run(limits.cgroup, root) if limits.cgroup else None
        if path is None:
            members = run_members(table, root, root_start)
        else:
            use = cgroups.usage(path)
            if use.current is not None:
                resident = max(use.current, use.peak or 0) if use.reached_cap else use.current
                readings[run] = _Reading(resident, path, NONE, root_start, use.reached_cap)
                continue
            members = Members(cgroups.processes(path) & table.keys(), frozenset())
        if members.pids:
            by_processes[run] = _Reading(0, path, members, root_start)
    heads = {run: tops(table, reading.members.pids) for run, reading in by_processes.items()}
    usage = tree_usage(frozenset().union(*heads.values()), proc=proc)
    for run, reading in by_processes.items():
        resident = sum(usage[pid][0] for pid in heads[run] if pid in usage)
        readings[run] = _Reading(resident, reading.cgroup, reading.members, reading.root_start)
    return readings


def over_cap(runs: Mapping[int, int], limits: ControlLimits, *, proc: str = "/proc") -> dict[int, int]:
    """run -> resident bytes of the runs (run -> root pid) that hold more than `limits.memory_mb` MB, or whose cgroup
    reached it, from one reading of all of them. A run with no process left is not over."""
    return {
        run: reading.resident
        for run, reading in _readings(runs, limits, proc).items()
        if reading.kernel_ended or reading.resident > limits.memory_bytes
    }


def enforce_memory(runs: Mapping[int, int], limits: ControlLimits, *, proc: str = "/proc") -> dict[int, str]:
    """Kills each run (run -> root pid) over the cap, every process of it (SIGKILL). Returns run -> the reason a
    person reads on its page. A run under the cap is never signalled. Afterwards removes the cgroups of runs that
    have no process left.

    Each run is killed as it was measured (its cgroup, or its session, group and descendants); a root that ended
    and whose pid went to another process is left alone, as is any other pid reused while the run is killed.
    """
    reasons: dict[int, str] = {}
    for run, reading in _readings(runs, limits, proc).items():
        if not (reading.kernel_ended or reading.resident > limits.memory_bytes):
            continue
        if reading.cgroup is not None:
            killed = cgroups.kill(reading.cgroup)
        else:
            killed = kill_run(runs[run], reading.root_start, proc=proc)
        if reading.kernel_ended and reading.resident <= limits.memory_bytes:
            reasons[run] = kernel_cap_reason(limits.memory_mb)
        elif killed or reading.kernel_ended:
            reasons[run] = cap_reason(reading.resident, limits.memory_mb)
    if limits.cgroup:
        cgroups.sweep(limits.cgroup)
    return reasons


def kill_run(root: int, root_start: int | None, *, cgroup: str = "", proc: str = "/proc") -> int:
    """SIGKILLs every process of the run whose root is `root`, started at `root_start` (None: the root has ended;
    what is left of its session and group is killed); returns how many were signalled, 0 when nothing of it is left
    or `root` is another process now. `cgroup`: the directory of `ORCA_CONTROL_CGROUP`, where the run's own cgroup
    is killed whole.

    Without a cgroup the run is frozen first (`procs.end_all`: pass after pass, until a pass finds no process not
    yet stopped), so a process forking as it is killed leaves no child behind.
    """
    if root in procs.own_ids():
        return 0
    path = cgroups.of_run(cgroup, root) if cgroup else None
    if path is not None:
        return cgroups.kill(path)
    return procs.end_all(lambda table: run_members(table, root, root_start), proc)
