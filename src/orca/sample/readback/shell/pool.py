"""The local executor (docs/metrics.md, "A fleet at scale"): a `ProcessPoolExecutor` of processes forked from this
one, which start at once with everything imported and the descriptors open at the first `submit`. They leave Ctrl-C
to this process (a terminal sends SIGINT to the whole group), which kills them when it leaves early."""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor


@contextlib.contextmanager
def local_executor(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of `workers` forked processes, shut down when the block ends: waited for when it ends normally (its
    futures have their results), killed when it ends by an exception."""
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_leave_interrupts)
    try:
        yield executor
    except BaseException:
        _kill(executor)
        raise
    forked = _processes(executor)
    executor.shutdown(wait=True, cancel_futures=True)
    for process in forked:
        # Forked before a later fork of the same `submit` failed, it waits for work no manager thread will send,
        # and multiprocessing would wait for it when this process exits.
        if process.is_alive():
            process.kill()
            process.join()


def _leave_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _kill(executor: ProcessPoolExecutor) -> None:
    """Its processes killed and reaped, its futures cancelled."""
    kill = getattr(executor, "kill_workers", None)  # Python 3.14
    if kill is not None:
        kill()
    else:
        for process in _processes(executor):
            with contextlib.suppress(OSError, ValueError):
                process.kill()
    executor.shutdown(wait=True, cancel_futures=True)


def _processes(executor: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The processes it has forked. Before 3.14 the pool offers no way to end them but its map of them."""
    return list((getattr(executor, "_processes", None) or {}).values())
