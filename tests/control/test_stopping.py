"""A stop pending, read from `/proc/<pid>/status` (proc_pid_status(5)): `procs.stopping` on a real status of the
kernel's and on drawn masks, and on live processes."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from orca.control import procs
from tests.control.processes import stat_fields

SAMPLE = (Path(__file__).parent / "samples" / "status.linux-6.18.44-stops-pending.txt").read_bytes()
"""SIGTSTP pending to the process (`ShdPnd` bit 19), SIGTTIN to its thread (`SigPnd` bit 20): see samples/README."""
# signal(7): the four signals whose default action is to stop; signal n is bit n - 1 of a mask.
STOP_SIGNALS = {signal.SIGSTOP, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU}
masks = st.integers(min_value=0, max_value=(1 << 64) - 1)


def _with(status: bytes, **masks: int) -> bytes:
    """`status` with each named line's mask (SigPnd=..., SigBlk=...) replaced, written as the kernel writes one."""
    for key, mask in masks.items():
        status, count = re.subn(rb"^%s:\t[0-9a-f]+$" % key.encode(), b"%s:\t%016x" % (key.encode(), mask), status,
                                flags=re.M)
        assert count == 1, key
    return status


def test_the_kernels_status_with_a_stop_pending_to_the_process_and_one_to_its_thread_is_stopping() -> None:
    assert b"ShdPnd:\t0000000000080000\n" in SAMPLE and b"SigPnd:\t0000000000100000\n" in SAMPLE
    assert procs.stopping(SAMPLE)
    assert procs.stopping(_with(SAMPLE, SigPnd=0))  # SIGTSTP to the process alone
    assert procs.stopping(_with(SAMPLE, ShdPnd=0))  # SIGTTIN to the thread alone
    # Blocked, ignored and caught stop signals are not pending ones.
    assert not procs.stopping(_with(SAMPLE, SigPnd=0, ShdPnd=0, SigBlk=0x780000, SigIgn=0x780000, SigCgt=0x780000))


@pytest.mark.parametrize("number", range(1, 65))
@pytest.mark.parametrize("line", ["SigPnd", "ShdPnd"])
def test_of_every_signal_pending_only_the_four_that_stop_are_stopping(line: str, number: int) -> None:
    status = _with(SAMPLE, **{"SigPnd": 0, "ShdPnd": 0, line: 1 << (number - 1)})
    assert procs.stopping(status) == (number in STOP_SIGNALS)


@given(masks, masks, masks)
@example(0, 0, (1 << 64) - 1)
@example(1 << (signal.SIGCONT - 1), 1 << (signal.SIGCHLD - 1), 0)
def test_stopping_is_a_stop_signal_in_either_pending_mask(thread: int, process: int, blocked: int) -> None:
    expected = any((thread | process) & (1 << (number - 1)) for number in STOP_SIGNALS)
    assert procs.stopping(_with(SAMPLE, SigPnd=thread, ShdPnd=process, SigBlk=blocked)) == expected


@given(st.binary(max_size=200))
@example(b"SigPnd:\tzz\nShdPnd:\t\n")
@example(b"ShdPnd:")
def test_a_status_that_does_not_read_as_one_is_no_stop_and_no_error(text: bytes) -> None:
    if not re.search(rb"^(SigPnd|ShdPnd):", text, flags=re.M):
        assert not procs.stopping(text)
    else:
        procs.stopping(text)  # whatever the masks say, no exception


# Blocks SIGTSTP (so that one sent stays pending, as a stop does in a process that has not run since), says so, and
# sleeps.
BLOCKS_SIGTSTP = textwrap.dedent("""
    import signal, time
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTSTP})
    print("ready", flush=True)
    time.sleep(300)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_live_process_with_a_stop_pending_and_one_stopped_are_stopped_or_stopping() -> None:
    process = subprocess.Popen([sys.executable, "-c", BLOCKS_SIGTSTP], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        start = int(stat_fields(process.pid)[19])
        assert not procs.stop_pending(process.pid)
        assert not procs.stopped_or_stopping(process.pid, start)
        process.send_signal(signal.SIGTSTP)
        assert procs.stop_pending(process.pid), Path(f"/proc/{process.pid}/status").read_text()
        assert procs.stopped_or_stopping(process.pid, start)
        assert not procs.stopped_or_stopping(process.pid, start + 1), "another process's start"
        process.send_signal(signal.SIGCONT)  # cancels the pending stop (signal(7))
        assert not procs.stop_pending(process.pid)
        process.send_signal(signal.SIGSTOP)
        deadline = time.monotonic() + 20
        while stat_fields(process.pid)[0] != "T":
            assert time.monotonic() < deadline, f"not stopped: {stat_fields(process.pid)[0]}"
            time.sleep(0.01)
        assert procs.stopped_or_stopping(process.pid, start)
    finally:
        process.kill()
        process.wait()
    assert not procs.stopped_or_stopping(process.pid, start), "a process gone"
