"""The control runner's rules: placements, limits, the reasons a run waits, and a run's environment entries.

Pure: text and numbers in, text and records out. Only `ControlLimits.from_env` looks at the process's environment,
and only when no mapping is given; everything else is a function of its arguments (docs/control.md
says what each one is for).

>>> parse_placement("worker:gpu-a"), pool_of("worker:gpu-a"), pool_of("control")
('worker:gpu-a', 'gpu-a', '')
>>> slots_reason(1, 2), slots_reason(2, 2)
('', '2 control-placed runs are running, at most 2 at once (ORCA_CONTROL_MAX_RUNS)')
>>> secrets_env([("TOKEN", "s3cr=t"), ("DB_PASS", "x")])
['TOKEN=s3cr=t', 'DB_PASS=x', 'ORCA_SECRETS=TOKEN,DB_PASS']
>>> cap_reason(1_400_000_000, 1024)
'resident memory 1.31 GiB over the 1024 MB cap'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from os import environ as _process_environment  # the one default read; see ControlLimits.from_env
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orca.sample import Now

CONTROL = "control"
"""The placement that runs a pipeline's runs on the scheduler's own host, and that instance's samples' name."""
EC2 = "ec2"
DEFAULT = "default"
WORKER_PREFIX = "worker:"
"""A placement on a pool of remote workers: this, then the pool's name."""
MAX_POOL = 32
"""The longest pool name."""
HOLD_PERCENT = 85
"""The control instance's memory or fullest disk, in percent, past which no control-placed run starts."""
SECRETS_VARIABLE = "ORCA_SECRETS"
"""Names a run's secrets, comma-separated, so that its logs can mask their values."""

MIB = 1 << 20
"""A megabyte as the memory cap counts it (`docker --memory 1024m`): 2^20 bytes."""
GIB = 1 << 30

_POOL_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# More digits than any limit needs; it also keeps int() far from its 4300-digit refusal.
_MAX_DIGITS = 18


# --- limits ---------------------------------------------------------------------------------------------------------


def _whole(text: str | None, low: int, high: int | None, default: int) -> int:
    """`text` as a whole number of ASCII digits within [low, high]; `default` for anything else (unset included)."""
    if text is None or not text or len(text) > _MAX_DIGITS or not (text.isascii() and text.isdigit()):
        return default
    value = int(text)
    return value if low <= value and (high is None or value <= high) else default


@dataclass(frozen=True, slots=True)
class ControlLimits:
    """What a control-placed run may use, from the scheduler's environment.

    >>> ControlLimits.from_env({"ORCA_CONTROL_MAX_RUNS": "0", "ORCA_CONTROL_NICE": "20", "ORCA_CONTROL_WORKERS": "x"})
    ControlLimits(max_runs=0, memory_mb=1024, workers=1, nice=10, max_pids=4096, cgroup='')
    """

    max_runs: int = 2
    """`ORCA_CONTROL_MAX_RUNS` (>= 0): control-placed runs at once, of all pipelines; 0 holds every one."""
    memory_mb: int = 1024
    """`ORCA_CONTROL_MEMORY_MB` (>= 1): one run's resident memory, in MB of 2^20 bytes."""
    workers: int = 1
    """`ORCA_CONTROL_WORKERS` (>= 1): its dista workers, forked locally."""
    nice: int = 10
    """`ORCA_CONTROL_NICE` (0..19): how much lower than the scheduler's its CPU priority is."""
    max_pids: int = 4096
    """`ORCA_CONTROL_MAX_PIDS` (>= 1): one run's processes and threads at once; kept by the kernel (`pids.max`)
    where the run has a cgroup of its own, else not."""
    cgroup: str = ""
    """`ORCA_CONTROL_CGROUP`: a cgroup v2 directory delegated to the scheduler, in which each run gets a cgroup of
    its own; "" for none (a run is then its session, process group and descendants)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] = _process_environment) -> ControlLimits:
        """The limits `env` sets (the process's environment by default). A number that is not a whole number in
        its range is its default; the cgroup is taken as it is (`start_run` says what is wrong with it)."""
        default = cls()
        return cls(
            max_runs=_whole(env.get("ORCA_CONTROL_MAX_RUNS"), 0, None, default.max_runs),
            memory_mb=_whole(env.get("ORCA_CONTROL_MEMORY_MB"), 1, None, default.memory_mb),
            workers=_whole(env.get("ORCA_CONTROL_WORKERS"), 1, None, default.workers),
            nice=_whole(env.get("ORCA_CONTROL_NICE"), 0, 19, default.nice),
            max_pids=_whole(env.get("ORCA_CONTROL_MAX_PIDS"), 1, None, default.max_pids),
            cgroup=env.get("ORCA_CONTROL_CGROUP", ""),
        )

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * MIB


# --- placements -----------------------------------------------------------------------------------------------------


def pool_problem(pool: str) -> str:
    """Why `pool` can't name a pool of workers, or "" when it can: 1 to 32 of a-z, 0-9, `-` and `_`.

    >>> pool_problem("gpu_2"), pool_problem(""), pool_problem("GPU")
    ('', 'a pool name is empty', "a pool name holds only a-z, 0-9, '-' and '_', not 'G'")
    """
    if not pool:
        return "a pool name is empty"
    if len(pool) > MAX_POOL:
        return f"a pool name is at most {MAX_POOL} characters, not {len(pool)}"
    bad = next((c for c in pool if c not in _POOL_CHARACTERS), None)
    if bad is not None:
        return f"a pool name holds only a-z, 0-9, '-' and '_', not {bad!r}"
    return ""


def pool_of(placement: str) -> str:
    """The pool a `worker:<pool>` placement names; "" for any other placement."""
    if not placement.startswith(WORKER_PREFIX):
        return ""
    pool = placement[len(WORKER_PREFIX) :]
    return pool if not pool_problem(pool) else ""


def parse_placement(v: str) -> str:
    """`--placement`'s value: `control`, `ec2`, `worker:<pool>` or `default`, returned as given (each has one
    spelling). Anything else raises ValueError saying what is accepted, and the pool's problem for a bad pool.

    >>> parse_placement("Control")
    Traceback (most recent call last):
    ...
    ValueError: placement 'Control' is not one of default, control, ec2, worker:<pool>
    """
    if v in (DEFAULT, CONTROL, EC2):
        return v
    accepted = f"placement {v!r} is not one of {DEFAULT}, {CONTROL}, {EC2}, {WORKER_PREFIX}<pool>"
    if v.startswith(WORKER_PREFIX):
        problem = pool_problem(v[len(WORKER_PREFIX) :])
        if not problem:
            return v
        raise ValueError(f"{accepted}: {problem}")
    raise ValueError(accepted)


# --- reasons a run waits, or is ended -------------------------------------------------------------------------------


def _up(value: Decimal, decimals: int) -> str:
    """`value` rounded up to `decimals` places, without a trailing `.0`: a figure shown as over a limit never reads
    as equal to it (85.01% is `85.1%`, not `85.0%`, and 85.0000000001% is `85.1%` too). Exact: a float is taken
    at its shortest decimal form, so 85.1 stays `85.1`."""
    text = f"{value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_CEILING):f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _percent(value: float) -> str:
    """A percent over `HOLD_PERCENT` as it is shown: rounded up, and `>100` for what no real reading is (a
    `used` past its `total`, infinity), so that no figure is ever longer than 100's."""
    return _up(Decimal(repr(value)), 1) if value <= 100 else ">100"


def shown(text: str) -> str:
    """`text` as a line of a page or a terminal may show it: every character that is not printable (a newline, ESC,
    other controls) written as its Python escape, so a path can neither break a line nor move a cursor.

    >>> print(shown("/data\\n\\x1b[2J x"), shown("/dätä"))
    /data\\n\\x1b[2J x /dätä
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def pressure_reason(now: Now | None) -> str:
    """Why no control-placed run may start now, given the control instance's newest minute; "" if one may.

    Samples that are old or missing (`None`: the reader gives no newest minute for them) hold nothing, so a
    scheduler without a sampler is never stopped. Over means strictly above `HOLD_PERCENT`; a figure that is not a
    number holds nothing.

    >>> from orca.sample import Now
    >>> now = Now(t=0.0, age=3.0, memory_percent=91.0, disk_percent=90.25, disk_path="/data", cpu_percent=5.0, lines=12)
    >>> pressure_reason(now)
    'control instance: memory 91% over 85%, disk /data 90.3% over 85%'
    >>> pressure_reason(None)
    ''
    """
    if now is None:
        return ""
    over: list[str] = []
    if now.memory_percent is not None and now.memory_percent > HOLD_PERCENT:
        over.append(f"memory {_percent(now.memory_percent)}% over {HOLD_PERCENT}%")
    if now.disk_percent is not None and now.disk_percent > HOLD_PERCENT:
        over.append(f"disk {shown(now.disk_path)} {_percent(now.disk_percent)}% over {HOLD_PERCENT}%")
    return f"control instance: {', '.join(over)}" if over else ""


def slots_reason(running: int, max_runs: int) -> str:
    """Why a control-placed run waits for one of the others to end; "" when a slot is free."""
    if running < max_runs:
        return ""
    if max_runs <= 0:
        return "control-placed runs are turned off (ORCA_CONTROL_MAX_RUNS=0)"
    noun = "run is" if running == 1 else "runs are"
    return f"{running} control-placed {noun} running, at most {max_runs} at once (ORCA_CONTROL_MAX_RUNS)"


def _bytes(count: int) -> str:
    """Bytes as a person reads them on a run's page, rounded up: GiB to two places from 1 GiB, else MiB to one."""
    if count >= GIB:
        return f"{_up(Decimal(count) / GIB, 2)} GiB"
    return f"{_up(Decimal(count) / MIB, 1)} MiB"


def cap_reason(resident_bytes: int, memory_mb: int) -> str:
    """What a person reads on the page of a run ended for its memory: its figure, rounded up, and the cap.

    >>> cap_reason(67_200_000, 64)
    'resident memory 64.1 MiB over the 64 MB cap'
    """
    return f"resident memory {_bytes(resident_bytes)} over the {memory_mb} MB cap"


def kernel_cap_reason(memory_mb: int) -> str:
    """The reason of a run that the kernel ended at its cgroup's `memory.max` (the cap), before any reading saw it
    over: its memory can only have reached the cap, so no figure above it is shown.

    >>> kernel_cap_reason(64)
    'memory reached the 64 MB cap (the kernel ended the run at its cgroup memory.max)'
    """
    return f"memory reached the {memory_mb} MB cap (the kernel ended the run at its cgroup memory.max)"


# --- environment entries --------------------------------------------------------------------------------------------


def secrets_env(secrets: Sequence[tuple[str, str]]) -> list[str]:
    """A run's secrets as environment entries: each `NAME=value`, then `ORCA_SECRETS=NAME1,NAME2` naming them,
    which its logs mask the values by. Nothing for no secrets.

    Raises ValueError, naming the secret and never showing its value, for a name that is not an environment
    variable's (`[A-Za-z_][A-Za-z0-9_]*`), a name given twice or `ORCA_SECRETS` itself, and a value with a NUL byte
    (which no environment can hold).
    """
    seen: set[str] = set()
    entries: list[str] = []
    for name, value in secrets:
        if not _ENV_NAME.fullmatch(name):
            raise ValueError(f"secret {name!r}: not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
        if name == SECRETS_VARIABLE:
            raise ValueError(f"secret {name!r}: that name is the list of the run's secrets")
        if name in seen:
            raise ValueError(f"secret {name!r}: given twice")
        if "\0" in value:
            raise ValueError(f"secret {name!r}: its value holds a NUL byte, which an environment cannot hold")
        seen.add(name)
        entries.append(f"{name}={value}")
    if not entries:
        return []
    return [*entries, f"{SECRETS_VARIABLE}={','.join(name for name, _ in secrets)}"]


def run_env(limits: ControlLimits, image: str, secrets: Sequence[tuple[str, str]]) -> list[str]:
    """What a control-placed run's process gets beside the scheduler's environment: dista in local mode with the
    limits' workers, its image (which its version records), then its secrets (see `secrets_env`).

    >>> run_env(ControlLimits(workers=3), "orca/p:7", [("TOKEN", "t")])
    ['DISTA_MODE=local', 'DISTA_WORKERS=3', 'ORCA_IMAGE=orca/p:7', 'TOKEN=t', 'ORCA_SECRETS=TOKEN']
    """
    if "\0" in image:
        raise ValueError("image: holds a NUL byte, which an environment cannot hold")
    return ["DISTA_MODE=local", f"DISTA_WORKERS={limits.workers}", f"ORCA_IMAGE={image}", *secrets_env(secrets)]


def environment_of(entries: Iterable[str]) -> dict[str, str]:
    """`NAME=value` entries as a mapping, split at the first `=` as the C library does; a later entry wins.

    A mapping or a single string is a TypeError (iterating one would give its keys or characters, each an empty
    variable, `PATH` too); an entry without `=` or with an empty name, and a NUL byte, a ValueError naming the entry
    (by its name only, when it has one: the value may be a secret).

    >>> environment_of(["A=1", "B=x=y", "A=2"])
    {'A': '2', 'B': 'x=y'}
    >>> environment_of({"PATH": "/bin"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: env: NAME=value entries (a list, as run_env returns), not a dict: its names alone would be empty ...
    >>> environment_of(["PATH"])
    Traceback (most recent call last):
    ...
    ValueError: env entry 'PATH': not NAME=value (no '=')
    """
    if isinstance(entries, Mapping | str | bytes):
        kind = type(entries).__name__
        raise TypeError(
            f"env: NAME=value entries (a list, as run_env returns), not a {kind}: "
            f"its {'names' if isinstance(entries, Mapping) else 'characters'} alone would be empty variables"
        )
    environment: dict[str, str] = {}
    for entry in entries:
        if not isinstance(entry, str):
            raise TypeError(f"env: each entry is a NAME=value str, not a {type(entry).__name__}")
        name, equals, value = entry.partition("=")
        if not equals:
            raise ValueError(f"env entry {entry!r}: not NAME=value (no '=')")
        if not name:
            raise ValueError("env: an entry with an empty name (it starts with '=')")
        if "\0" in entry:
            raise ValueError(f"env entry {name!r}: holds a NUL byte, which an environment cannot hold")
        environment[name] = value
    return environment
