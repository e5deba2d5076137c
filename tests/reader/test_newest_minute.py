"""The newest minute, from sample files worked out by hand, and read from the end of a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from orca.sample.readback.lines import LONGEST_LINE_BYTES
from orca.sample.readback.minute import Now, newest_minute, newest_window
from orca.sample.readback.sample_line import parse
from orca.sample.readback.shell.newest import lines_backwards, read_newest_minute, samples_backwards
from tests.reader.hand_worked import EXPECTED_AT_1070, HAND_WORKED, line


def test_a_hand_worked_file(tmp_path: Path) -> None:
    path = tmp_path / "control.jsonl"
    path.write_text(HAND_WORKED)
    assert read_newest_minute(str(path), now=1070.0) == EXPECTED_AT_1070


def test_the_same_from_samples_in_memory() -> None:
    complete = HAND_WORKED.rsplit("\n", 1)[0].split("\n")
    samples = [result.unwrap() for result in map(parse, complete) if isinstance(result, Success)]
    assert len(samples) == 4
    assert newest_minute(samples, now=1070.0) == EXPECTED_AT_1070
    assert newest_minute(reversed(samples), now=1070.0) == EXPECTED_AT_1070


def test_old_samples_hold_nothing(tmp_path: Path) -> None:
    path = tmp_path / "control.jsonl"
    path.write_text(HAND_WORKED)
    assert read_newest_minute(str(path), now=1180.0) is not None  # 120 s old: still held
    assert read_newest_minute(str(path), now=1180.5) is None
    # A clock behind the newest line: age 0, not negative.
    minute = read_newest_minute(str(path), now=1000.0)
    assert minute is not None and minute.age == 0.0


def test_missing_or_empty_or_sample_less_files_are_none(tmp_path: Path) -> None:
    assert read_newest_minute(str(tmp_path / "absent.jsonl"), now=0.0) is None
    (tmp_path / "empty.jsonl").write_text("")
    assert read_newest_minute(str(tmp_path / "empty.jsonl"), now=0.0) is None
    (tmp_path / "log.txt").write_text("INFO one\nWARN two\n")
    assert read_newest_minute(str(tmp_path / "log.txt"), now=0.0) is None
    assert newest_minute([], now=0.0) is None


def test_none_where_no_line_has_the_section(tmp_path: Path) -> None:
    path = tmp_path / "bare.jsonl"
    path.write_text('{"v":1,"t":50.0,"dt":5.0,"host":"h","cpu":null,"mem":null,"disk":null}\n')
    assert read_newest_minute(str(path), now=55.0) == Now(
        t=50.0, age=5.0, memory_percent=None, disk_percent=None, disk_path="", cpu_percent=None, lines=1
    )


def test_a_file_system_of_any_size(tmp_path: Path) -> None:
    """A file system's sizes have no bound (a network file system reports what it likes): the newest minute still
    says how full it is."""
    path = tmp_path / "efs.jsonl"
    path.write_text(line(50.0, None, None, [("/efs", 10**400, 3 * 10**400)]) + "\n")
    minute = read_newest_minute(str(path), now=55.0)
    assert minute is not None and (minute.disk_path, minute.disk_percent) == ("/efs", 25.0)


def test_a_named_pipe_or_a_device_is_none_at_once(tmp_path: Path) -> None:
    """A FIFO nobody writes to would hold an open or a read for good (a scheduler's tick with it)."""
    fifo = tmp_path / "control.jsonl"
    os.mkfifo(fifo)
    program = (f"from orca.sample import read_newest_minute as r; "
               f"print(r({str(fifo)!r}), r('/dev/zero'), r({str(tmp_path)!r}), r('/dev/null'))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, "None None None None\n"), done.stderr


def test_a_long_line_being_written_holds_the_lines_before_it(tmp_path: Path) -> None:
    """A last line without its newline is the sampler writing it, however long: the lines before are still read."""
    path = tmp_path / "control.jsonl"
    path.write_text(HAND_WORKED.rsplit("\n", 1)[0] + "\n" + "{" * (LONGEST_LINE_BYTES + 4 * 2**20))
    assert read_newest_minute(str(path), now=1070.0) == EXPECTED_AT_1070


def test_a_line_too_long_to_be_a_sample_is_passed_over(tmp_path: Path) -> None:
    path = tmp_path / "control.jsonl"
    lines = HAND_WORKED.rsplit("\n", 1)[0].split("\n")
    # Before the newest line, a line over 16 MiB that would read as one: it is not taken.
    huge = line(1062.0, 1000, (100.0, 0.0, 0.0, 0.0), [("/a", 100, 0)]) + " " * LONGEST_LINE_BYTES
    path.write_text("\n".join([*lines[:-1], huge, lines[-1]]) + "\n")
    assert read_newest_minute(str(path), now=1070.0) == EXPECTED_AT_1070


def test_a_big_file_is_read_only_at_its_end(tmp_path: Path) -> None:
    """Two days at 5 s (over 10 MB): the newest minute is a few kilobytes from the end, and that is what is read."""
    path = tmp_path / "long.jsonl"
    count = 2 * 17280
    with path.open("w") as out:
        for i in range(count):
            out.write(line(1_000_000.0 + 5 * i, 500 if i % 2 else 300, (1.0, 1.0, 0.0, 0.0), [("/tmp", 1, 3)]) + "\n")
    data = path.read_bytes()
    assert len(data) > 10_000_000
    read: list[int] = []

    def read_at(offset: int, length: int) -> bytes:
        read.append(length)
        return data[offset:offset + length]

    window = newest_window(samples_backwards(read_at, len(data)))
    assert len(window) == 13
    assert 0 < sum(read) < 1_000_000
    newest_t = 1_000_000.0 + 5 * (count - 1)
    minute = read_newest_minute(str(path), now=newest_t + 1)
    # The newest line is i = count - 1 (odd: 50 %); the 13 lines from t - 60 to t alternate 50 % and 30 %, beginning
    # and ending with 50 %: (7 × 50 + 6 × 30) / 13. Disk 1 / (1 + 3) = 25 %; CPU 1 + 1 = 2.
    assert minute is not None
    assert (minute.t, minute.age, minute.lines, minute.disk_percent, minute.cpu_percent) == (newest_t, 1.0, 13, 25.0,
                                                                                            2.0)
    assert minute.memory_percent is not None and abs(minute.memory_percent - (7 * 50 + 6 * 30) / 13) < 1e-9


lines_of_text = st.lists(st.binary().map(lambda b: b.replace(b"\n", b"")), max_size=20)


@given(lines_of_text, st.binary().map(lambda b: b.replace(b"\n", b"")), st.integers(1, 9))
def test_lines_backwards_are_the_complete_lines_reversed(lines: list[bytes], partial: bytes, block: int) -> None:
    data = b"".join(one + b"\n" for one in lines) + partial
    got = list(lines_backwards(lambda offset, length: data[offset:offset + length], len(data), block))
    assert got == lines[::-1]
