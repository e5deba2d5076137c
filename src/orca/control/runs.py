"""A control-placed run's process: where its output is staged, and how it is started.

The shell of `orca.control` that starts processes; the rules it applies (the environment entries, the mark every
process of a run carries) are the pure functions of `rules` and `members`, a run's own cgroup `cgroups`'. Its memory
cap is `cap`'s.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence

from orca.control import cgroups
from orca.control.members import MARK, mark_of, proc_id
from orca.control.rules import ControlLimits, environment_of
from orca.sample import open_private, stage_root

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


def _program(argv: Sequence[str], environment: Mapping[str, str]) -> str:
    """The file `argv` runs: `argv[0]` itself when it holds a `/`, else the first executable file of that name on
    the run's `PATH`, as `execvp` looks for it. OSError (EINVAL, ENOENT, EACCES) when `argv` cannot start
    (docs/behaviour.md §12.2)."""
    if not argv:
        raise OSError(errno.EINVAL, "argv is empty: there is no program to start")
    for index, word in enumerate(argv):
        if "\0" in word:
            raise OSError(errno.EINVAL, f"argv[{index}] holds a NUL byte, which no argument of a program can hold")
    name = argv[0]
    places = [name] if "/" in name else [os.path.join(directory, name) for directory in os.get_exec_path(environment)]
    files = [place for place in places if name and os.path.isfile(place)]
    for place in files:
        if os.access(place, os.X_OK):
            return os.path.abspath(place)  # so that nothing looks for it on a PATH again
    if files:
        raise PermissionError(errno.EACCES, "not executable", name)
    raise FileNotFoundError(errno.ENOENT, "no such program", name)


def _mark_self() -> None:
    """Sets this process's run mark (`members.MARK`) from its own pid and start time, for all it will start."""
    try:
        descriptor = os.open("/proc/self/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return  # no /proc: nothing could read a mark either
    try:
        found = proc_id(os.read(descriptor, 4096))
    finally:
        os.close(descriptor)
    if found is not None:
        os.putenv(MARK, mark_of(os.getpid(), found.start))


def _expose_to_oom() -> None:
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


def _prepare(nice: int, join: Callable[[], None] | None, entries: Mapping[str, str]) -> Callable[[], None]:
    """What the child runs between fork and exec: system calls, and its environment set for the exec (the mark
    holds its own pid, which only it knows before it runs anything)."""

    def prepare() -> None:
        if join is not None:
            join()  # first, so that nothing the run does is outside its cgroup
        os.nice(nice)
        _expose_to_oom()
        # Python code takes the C library's environment lock only under the GIL, which the fork was made holding:
        # no thread of the scheduler's held it then.
        for name, value in entries.items():
            os.putenv(name, value)
        _mark_self()  # last: an entry of that name, or the scheduler's own, gives way to it

    return prepare


def start_run(argv: list[str], env: Sequence[str], limits: ControlLimits, stage: str) -> subprocess.Popen[bytes]:
    """Starts a control-placed run's process: `argv`, with the scheduler's environment plus the `NAME=value`
    entries of `env` (`run_env`'s) and the run's mark (`ORCA_CONTROL_RUN=<its pid>:<its start time>`, which every
    process it starts inherits), at nice `limits.nice` relative to the scheduler, `oom_score_adj` 1000 (the
    kernel's first choice if memory runs out), the leader of a session and process group of its own, in a cgroup
    of its own under `limits.cgroup` when one is given, its standard output and error appended to `stage`. Its
    standard input is empty. The program is `argv[0]`, looked for on the run's `PATH` when it holds no `/`.

    `stage` is opened as a staging file (`orca.sample.open_private`): its directories below the staging root made
    0700, never through a symbolic link, only a regular file of this user's, made 0600 before the run writes (it
    is not masked yet). Returns the process handle. Before anything is made or started, raises TypeError or
    ValueError for `env` that is not a list of `NAME=value` entries, and OSError for an `argv` that cannot start
    (empty, a NUL byte in an argument, no such program, not executable). Raises OSError when `stage` is refused or
    cannot be opened, when the cgroup directory cannot hold runs, or when the program fails to start all the same.
    """
    entries = environment_of(env)
    program = _program(argv, {**os.environ, **entries})
    join = None
    if limits.cgroup:
        join = cgroups.joiner(limits.cgroup, limits, cgroups.prepare(limits.cgroup))
    output = open_private(_root_of(stage, os.environ), stage)
    try:
        # The environment is the scheduler's, which the child completes itself (`_prepare`): the mark is its own.
        return subprocess.Popen(
            argv,
            executable=program,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_prepare(limits.nice, join, entries),
            close_fds=True,
        )
    except subprocess.SubprocessError:
        # Only the preparation raises in the child (its cgroup, in practice); Python reports no more than that it did.
        where = f" in a cgroup of its own under {limits.cgroup}" if limits.cgroup else ""
        raise OSError(f"could not prepare the run's process{where}") from None
    finally:
        os.close(output)
