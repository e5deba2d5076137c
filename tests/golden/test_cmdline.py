"""/proc/<pid>/cmdline: argv[0] of real captures and hand-written cases (docs/behaviour.md §3.4 `--match`; proc(5)).

Captures (Linux 6.18.44-fc-v857, x86_64, 2 cores), copied byte for byte with `cp /proc/<pid>/cmdline`:
- `pid_cmdline.sleep`: `sleep 60` started from bash: `sleep\\0 60\\0`.
- `pid_cmdline.paren-space-paren`: /bin/sleep copied to `) (` and run as `./') (' 60`.
- `pid_cmdline.kthreadd`: /proc/2/cmdline, a kernel thread's: empty.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.cmdline import argv0

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"


@pytest.mark.parametrize(
    ("name", "expected"),
    [("pid_cmdline.sleep", "sleep"), ("pid_cmdline.paren-space-paren", "./) ("), ("pid_cmdline.kthreadd", "")],
)
def test_real_captures(name: str, expected: str) -> None:
    assert argv0((CAPTURES / f"{name}.{MACHINE}.bin").read_bytes()) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"/usr/bin/python3\x00-m\x00orca\x00", "/usr/bin/python3", id="several arguments"),
        pytest.param(b"nginx: worker process", "nginx: worker process", id="rewritten, no NUL (setproctitle)"),
        pytest.param(b"\x00second\x00", "", id="empty argv0"),
        pytest.param(b"/opt/caf\xe9\x00x\x00", "/opt/caf\ufffd", id="not UTF-8: replaced"),
        pytest.param("/opt/café/run\x00".encode(), "/opt/café/run", id="UTF-8"),
        pytest.param(b"a b\nc\x00", "a b\nc", id="spaces and a newline kept"),
    ],
)
def test_hand_written(data: bytes, expected: str) -> None:
    assert argv0(data) == expected
