"""What the sampler takes from the environment (SPEC 2.1, 3.5, 6)."""

from __future__ import annotations

import math
import os

DEFAULT_SECONDS = 5.0


def parse_seconds(text: str) -> float | None:
    """An interval as a command line or the environment spells it: a finite number >= 0, else None."""
    try:
        seconds = float(text)
    except ValueError:
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def sample_seconds() -> float:
    """`ORCA_SAMPLE_SECONDS`: the interval; 0 turns sampling off; unset, not a finite number or negative is 5."""
    seconds = parse_seconds(os.environ.get("ORCA_SAMPLE_SECONDS", ""))
    return DEFAULT_SECONDS if seconds is None else seconds


def metrics_location(pipeline: str, run: int, instance: str) -> str:
    """`$ORCA_LOGS/<pipeline>/<run>/metrics/<instance>.jsonl`; "" when ORCA_LOGS is unset or empty."""
    logs = os.environ.get("ORCA_LOGS", "")
    if not logs:
        return ""
    # One `/` between parts whatever ORCA_LOGS ends with (`s3://bucket/`, `/var/log/orca/`).
    return f"{logs.rstrip('/')}/{pipeline}/{run}/metrics/{instance}.jsonl"


def default_dirs() -> list[str]:
    """The directories a run writes to: `$TMPDIR` (or /tmp), and dista's spill and store directories when set."""
    dirs = [os.environ.get("TMPDIR") or "/tmp"]
    dirs += [value for name in ("DISTA_SPILL_DIR", "DISTA_STORE_DIR") if (value := os.environ.get(name))]
    return dirs
