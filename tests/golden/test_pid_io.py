"""/proc/<pid>/io: a real capture and hostile input (docs/behaviour.md §3.12; Documentation/filesystems/proc.rst,
"IO statistics fields").

The capture (Linux 6.18.44-fc-v1098, x86_64, 2 cores, ext4) is `cat /proc/$$/io` of a shell that had run, and
waited for, `head -c 3145728 /dev/zero > FILE; sync FILE; dd if=FILE of=/dev/null bs=1M count=1 iflag=direct`: its
file holds what the children it waited for did. The kernel counted 3,158,016 bytes written (the 3 MiB and 12 KiB
more it charged to them) and 1,306,624 read (the 1 MiB read past the page cache, and pages of the programs loaded
from disk), as the capture says.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.pid_io import read_write_bytes

CAPTURE = Path(__file__).parent / "captures" / (
    "pid_io.sh-wrote-3MiB-read-1MiB-direct.linux-6.18.44-fc-v1098.x86_64-2cores.txt"
)


def test_the_capture() -> None:
    assert read_write_bytes(CAPTURE.read_bytes()) == (1_306_624, 3_158_016)


def test_the_fields_are_found_by_their_keys_when_not_in_the_kernels_order() -> None:
    assert read_write_bytes(b"write_bytes: 7\ncancelled_write_bytes: 0\nread_bytes: 9\n") == (9, 7)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\n", id="cut before write_bytes"),
        pytest.param(b"rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: -5\nwrite_bytes: 6\n", id="negative"),
        pytest.param(b"rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 1e3\n", id="not decimal"),
        pytest.param(b"read_bytes: 18446744073709551616\nwrite_bytes: 0\n", id="beyond 64 bits"),
        pytest.param("read_bytes: \u0663\nwrite_bytes: 0\n".encode(), id="not ascii digits"),
    ],
)
def test_what_is_not_the_kernels_text_is_refused(data: bytes) -> None:
    assert read_write_bytes(data) is None
