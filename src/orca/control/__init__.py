"""orca.control: the control runner's half that lives on the samples.

The scheduler can run a pipeline's runs on its own host (placement `control`). This package holds what it decides
and does for them: where a run may be placed, when a new one must wait (too many running, or the control
instance's newest minute of samples over 85% memory or disk), the environment a run starts with and its secrets,
how it is started (lower CPU priority, first for the OOM killer, its own session, a mark every process of it
inherits, output to a private staging file, a cgroup of its own where one is delegated), and its memory cap,
enforced on all of the run, read whole: its cgroup, else its session, process group, descendants and what readings
found as its own.
"""

from __future__ import annotations

from orca.control.cap import Known, enforce_memory, kill_run, over_cap
from orca.control.members import MARK, Members, ProcId, run_members
from orca.control.rules import (
    CONTROL,
    HOLD_PERCENT,
    MAX_POOL,
    WORKER_PREFIX,
    ControlLimits,
    cap_reason,
    kernel_cap_reason,
    parse_placement,
    pool_of,
    pool_problem,
    pressure_reason,
    run_env,
    secrets_env,
    slots_reason,
)
from orca.control.runs import control_stage, start_run
from orca.control.secrets import SecretError, fetch_secret, get_secret_value

__all__ = [
    "CONTROL",
    "HOLD_PERCENT",
    "MARK",
    "MAX_POOL",
    "WORKER_PREFIX",
    "ControlLimits",
    "Known",
    "Members",
    "ProcId",
    "SecretError",
    "cap_reason",
    "control_stage",
    "enforce_memory",
    "fetch_secret",
    "get_secret_value",
    "kernel_cap_reason",
    "kill_run",
    "over_cap",
    "parse_placement",
    "pool_of",
    "pool_problem",
    "pressure_reason",
    "run_env",
    "run_members",
    "secrets_env",
    "slots_reason",
    "start_run",
]
