"""What the sampler takes from the environment (docs/behaviour.md §2.1, §3.5, §6)."""

from __future__ import annotations

import os

DEFAULT_SECONDS = 5.0
SHORTEST_SECONDS = 0.001
"""The shortest interval: the schedule divides the time since the start by it, which must stay a finite number."""
LONGEST_SECONDS = 1_000_000.0
"""The longest interval (over eleven days): a wait must stay within what the system's clock calls can take."""
SECONDS_RANGE = f"0 (off) or from {SHORTEST_SECONDS:g} to {LONGEST_SECONDS:.0f}"


def parse_seconds(text: str) -> float | None:
    """An interval as a command line or the environment spells it: 0, or a number from `SHORTEST_SECONDS` to
    `LONGEST_SECONDS`; else None. Zero is a number written as zero: one too small for a float (`1e-400`) reads as
    0.0 but is not 0.

    >>> parse_seconds("2.5"), parse_seconds("0"), parse_seconds("1e10"), parse_seconds("5e-324"), parse_seconds("x")
    (2.5, 0.0, None, None, None)
    >>> parse_seconds("0.0e-400"), parse_seconds("1e-400"), parse_seconds("-0.000e7")
    (0.0, None, 0.0)
    """
    try:
        seconds = float(text)
    except ValueError:
        return None
    if seconds == 0:
        # float() took the text, so its digits before any exponent are its significand.
        significand = text.lower().partition("e")[0]
        return None if any(digit in significand for digit in "123456789") else 0.0
    if SHORTEST_SECONDS <= seconds <= LONGEST_SECONDS:
        return seconds
    return None


def sample_seconds() -> float:
    """`ORCA_SAMPLE_SECONDS`: the interval; 0 turns sampling off; unset, or not a number `parse_seconds` takes,
    is 5."""
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
