"""COMMAND started with `posix_spawn` (docs/behaviour.md §9.3): its signal mask the one it is given, and the signals
named at their default.

The C library keeps a few signals below `SIGRTMIN` for itself (glibc 32 and 33, musl 32 to 34: thread cancellation,
set*id across threads). Its `posix_spawn` sets each of them to "ignore" in the child unless told to reset it, and a
signal ignored stays ignored across exec, so COMMAND would start with them ignored; `os.posix_spawnp` cannot name them
(`sigaddset` refuses them). On Linux the spawn attributes are so built here, through ctypes, with those bits set in the
set of signals reset to their default; elsewhere, or where that cannot be done, `os.posix_spawnp` starts COMMAND.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ctypes  # loaded when a spawn needs it

SETSIGDEF = 0x04
SETSIGMASK = 0x08
"""`POSIX_SPAWN_SETSIGDEF` and `POSIX_SPAWN_SETSIGMASK`, the same in glibc and musl."""
OPAQUE_BYTES = 1024
"""Room for `posix_spawnattr_t` and `posix_spawn_file_actions_t`, larger than either C library's."""
SIGSET_BYTES = 128
"""`sigset_t` on Linux, in glibc and musl: a bit for each signal, signal n at bit n - 1, in unsigned longs."""


def libc_signals() -> tuple[int, ...]:
    """The signals the C library keeps for itself: those below `SIGRTMIN` that Python cannot name."""
    rtmin = int(getattr(signal, "SIGRTMIN", 0))
    return tuple(range(32, rtmin)) if rtmin > 32 else ()


def spawn(argv: list[str], env: dict[str, str], closed: Iterable[int], mask: Iterable[int],
          default: Iterable[int]) -> int:
    """Start `argv` (`argv[0]` looked for on `PATH`) with `env`, the descriptors `closed` closed, the signal mask
    `mask`, `default` and the C library's own signals at their default: its pid. An `OSError` when it cannot be
    started."""
    closed, mask, default = list(closed), set(mask), set(default)
    libc = _libc()
    if libc is None:
        return os.posix_spawnp(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_CLOSE, fd) for fd in closed],
                               setsigmask=mask, setsigdef=default)
    import ctypes

    attr = ctypes.create_string_buffer(OPAQUE_BYTES)
    actions = ctypes.create_string_buffer(OPAQUE_BYTES)
    _check(libc.posix_spawnattr_init(attr), argv[0])
    try:
        _check(libc.posix_spawn_file_actions_init(actions), argv[0])
        try:
            for fd in closed:
                _check(libc.posix_spawn_file_actions_addclose(actions, fd), argv[0])
            _check(libc.posix_spawnattr_setflags(attr, ctypes.c_short(SETSIGDEF | SETSIGMASK)), argv[0])
            _check(libc.posix_spawnattr_setsigmask(attr, _sigset(mask)), argv[0])
            _check(libc.posix_spawnattr_setsigdefault(attr, _sigset(default | set(libc_signals()))), argv[0])
            pid = ctypes.c_int(0)
            _check(libc.posix_spawnp(ctypes.byref(pid), os.fsencode(argv[0]), actions, attr, _strings(argv),
                                     _strings(f"{key}={value}" for key, value in env.items())), argv[0])
            return pid.value
        finally:
            libc.posix_spawn_file_actions_destroy(actions)
    finally:
        libc.posix_spawnattr_destroy(attr)


def _libc() -> ctypes.CDLL | None:
    """The C library, where its spawn attributes can be built here (Linux); None elsewhere."""
    if not sys.platform.startswith("linux") or not libc_signals():
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.posix_spawnp  # noqa: B018  (a C library without it: os.posix_spawnp says why)
    except (OSError, AttributeError):
        return None
    return libc


def _sigset(signums: Iterable[int]) -> ctypes.Array[ctypes.c_ulong]:
    import ctypes

    bits = 8 * ctypes.sizeof(ctypes.c_ulong)
    words = (ctypes.c_ulong * (SIGSET_BYTES // ctypes.sizeof(ctypes.c_ulong)))()
    for signum in signums:
        words[(signum - 1) // bits] |= 1 << ((signum - 1) % bits)
    return words


def _strings(texts: Iterable[str]) -> ctypes.Array[ctypes.c_char_p]:
    """A NULL-ended array of C strings, as `execve` takes its arguments and environment."""
    import ctypes

    encoded = [os.fsencode(text) for text in texts]
    return (ctypes.c_char_p * (len(encoded) + 1))(*encoded, None)


def _check(error: int, name: str) -> None:
    if error:
        raise OSError(error, os.strerror(error), name)
