"""Lines appended to a file (docs/behaviour.md §4.2), `--keep N` (§4.4), and write failures (§4.5)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from orca.sample.shell.out.files import LineFile, append_line, count_lines
from tests.shell.run import no_traceback, one_message, parse_lines, read_lines, run, start

LINE_START = b'{"v":1,"t":'


def test_append_line_creates_parents_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "m.jsonl"
    append_line(str(path), '{"n":1}')
    append_line(str(path), '{"n":2}')
    assert path.read_bytes() == b'{"n":1}\n{"n":2}\n'


def test_append_line_keeps_what_is_there(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_bytes(b"old\n")
    append_line(str(path), "new")
    assert path.read_bytes() == b"old\nnew\n"


def test_append_line_raises_on_a_directory(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        append_line(str(tmp_path), "x")


def test_append_line_is_one_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/behaviour.md §4.2: the whole line and its newline in one `write`, on a descriptor opened with O_APPEND."""
    calls: list[tuple[int, bytes]] = []
    real_open, real_write = os.open, os.write

    def spy_open(path: str, flags: int, mode: int = 0o777) -> int:
        fd = real_open(path, flags, mode)
        calls.append((flags, b""))
        return fd

    def spy_write(fd: int, data: bytes) -> int:
        calls.append((-1, bytes(data)))
        return real_write(fd, data)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "write", spy_write)
    append_line(str(tmp_path / "m.jsonl"), '{"v":1}')
    monkeypatch.undo()
    [(flags, _), (_, data)] = calls
    assert flags & os.O_APPEND
    assert data == b'{"v":1}\n'


def test_keep_rewrites_at_two_n_to_the_last_n(tmp_path: Path) -> None:
    """docs/behaviour.md §4.4: at 2N lines the file becomes its last N; between, it grows."""
    path = tmp_path / "m.jsonl"
    file = LineFile(str(path), keep=3)
    sizes = []
    for n in range(1, 15):
        assert file.write(json.dumps({"n": n}).encode())
        sizes.append(count_lines(str(path)))
    assert sizes == [1, 2, 3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4, 5]
    # Rewritten at the 12th line to 10, 11, 12; then 13 and 14 appended.
    assert [line["n"] for line in read_lines(path)] == [10, 11, 12, 13, 14]
    assert [p.name for p in tmp_path.iterdir()] == ["m.jsonl"]  # no temporary file left behind


def test_keep_counts_lines_already_in_the_file(tmp_path: Path) -> None:
    """A restarted sampler appends to the file it finds (the S3 staging file too) and keeps counting from there."""
    path = tmp_path / "m.jsonl"
    path.write_bytes(b"".join(json.dumps({"n": n}).encode() + b"\n" for n in range(9)))
    file = LineFile(str(path), keep=5)
    assert file.write(json.dumps({"n": 9}).encode())
    assert [line["n"] for line in read_lines(path)] == [5, 6, 7, 8, 9]


def test_one_message_per_run_of_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/behaviour.md §4.5: the first failure in a row prints one message naming the location and reason; a success
    re-arms."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a regular file")
    path = blocker / "m.jsonl"
    file = LineFile(str(path), keep=None)
    assert not file.write(b"1")
    assert not file.write(b"2")
    first = capsys.readouterr().err.splitlines()
    assert len(first) == 1
    assert str(path) in first[0] and "Not a directory" in first[0]
    blocker.unlink()
    assert file.write(b"3")
    assert capsys.readouterr().err == ""
    assert path.read_bytes() == b"3\n"  # the parent was created (docs/behaviour.md §4.2)
    os.unlink(path)  # the path itself a directory: fail again, one new message
    path.mkdir()
    assert not file.write(b"4")
    assert not file.write(b"5")
    again = capsys.readouterr().err.splitlines()
    assert len(again) == 1 and "Is a directory" in again[0]


@pytest.mark.slow
def test_keep_with_a_reader_reading_all_along(tmp_path: Path) -> None:
    """docs/behaviour.md §4.2/4.4 under a concurrent reader: never a broken line, never more than 2N = 10 lines.

    A line is what a newline ends: a reader may see the first bytes of a line still being written (see below),
    never a newline-terminated line that is not whole JSON, never two lines mixed, never an old and a new file mixed."""
    path = tmp_path / "m.jsonl"
    seen_most = 0
    reads = 0
    problems: list[str] = []
    partial_tails: list[bytes] = []
    stop = threading.Event()

    def reader() -> None:
        nonlocal seen_most, reads
        while not stop.is_set():
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            reads += 1
            whole, _, tail = data.rpartition(b"\n")
            if tail:
                # The kernel copies one write into the page cache a page at a time and grows i_size after each
                # page, so a reader racing a write that crosses a page boundary can see its first part (rarely). What
                # ends in a newline is always whole: a line is what a newline ends. The fragment is the start of the
                # next line, nothing else.
                partial_tails.append(tail)
                if not (tail.startswith(LINE_START) or LINE_START.startswith(tail)):
                    problems.append(f"corrupt tail: {tail[:80]!r}")
            for raw in whole.splitlines():
                try:
                    json.loads(raw)
                except ValueError:
                    problems.append(f"broken: {raw[:80]!r}")
            seen_most = max(seen_most, whole.count(b"\n") + 1 if whole else 0)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        done = run("--out", str(path), "--keep", "5", "--count", "40", "--seconds", "0.03")
    finally:
        stop.set()
        thread.join()
    assert done.returncode == 0
    no_traceback(done.stderr)
    assert problems == []
    assert reads > 100
    assert len(partial_tails) < reads / 10  # a rare race, not the usual view
    assert 5 <= seen_most <= 10
    final = read_lines(path)
    assert 5 <= len(final) <= 10
    assert final == sorted(final, key=lambda line: line["t"])


@pytest.mark.slow
def test_out_a_directory(tmp_path: Path) -> None:
    """docs/behaviour.md §4.5: every line fails; one message naming the location; the sampler carries on to its end;
    exit 0."""
    done = run("--out", str(tmp_path), "--count", "3", "--seconds", "0.1")
    assert done.returncode == 0
    one_message(done.stderr, str(tmp_path))


@pytest.mark.slow
def test_out_under_a_regular_file_then_fixed(tmp_path: Path) -> None:
    """docs/behaviour.md §4.5: a path under a regular file fails with one message; the sampler carries on, and once the
    path can be written (the file removed; parent directories are created, docs/behaviour.md §4.2) lines arrive again,
    silently."""
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    out = blocker / "deeper" / "m.jsonl"
    sampler = start("--out", str(out), "--count", "10", "--seconds", "0.15")
    try:
        assert sampler.stderr is not None
        # The file is removed once a line has failed (its message said so), however long the start took.
        said = sampler.stderr.readline()
        blocker.unlink()
        _, stderr = sampler.communicate(timeout=20)
    finally:
        sampler.kill()
    assert sampler.returncode == 0
    one_message(said + stderr, str(out))
    lines = read_lines(out)
    assert 1 <= len(lines) < 10  # the ones before the removal were dropped


# --- a full file system: a line is written whole or not at all ---


def test_a_short_write_is_taken_back_and_the_next_line_starts_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The disk fills mid-line: the file goes back to its length before the write; the line is dropped whole."""
    path = tmp_path / "m.jsonl"
    file = LineFile(str(path), keep=None)
    assert file.write(b'{"n":1}')
    real_write = os.write

    def disk_fills_after_four_bytes(fd: int, data: bytes) -> int:
        return real_write(fd, bytes(data)[:4])

    monkeypatch.setattr(os, "write", disk_fills_after_four_bytes)
    assert not file.write(b'{"n":2}')
    monkeypatch.setattr(os, "write", real_write)
    assert path.read_bytes() == b'{"n":1}\n'
    assert file.write(b'{"n":3}')
    assert path.read_bytes() == b'{"n":1}\n{"n":3}\n'
    messages = capsys.readouterr().err.splitlines()
    assert len(messages) == 1 and str(path) in messages[0]


def _tmpfs(directory: Path, size: str) -> bool:
    """Mount a tmpfs of `size` on `directory`; False where this process may not mount."""
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)], capture_output=True, check=False
    )
    return done.returncode == 0


FILLER = "filler"


@pytest.mark.slow
def test_a_full_file_system_leaves_only_whole_lines(tmp_path: Path) -> None:
    """A 64 KiB tmpfs filled up while the sampler writes, then freed: every line in the file is whole JSON, none
    glued to another, and lines arrive again once there is room."""
    mount = tmp_path / "small"
    mount.mkdir()
    if not _tmpfs(mount, "64k"):
        pytest.skip("cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN); test_a_file_size_limit covers it")
    try:
        out = mount / "m.jsonl"
        sampler = start("--out", str(out), "--count", "60", "--seconds", "0.05")
        try:
            deadline = time.monotonic() + 20
            while (not out.exists() or out.stat().st_size < 2000) and time.monotonic() < deadline:
                time.sleep(0.01)
            # Fill what is left, in small pieces so the last one takes the last free byte.
            with (mount / FILLER).open("wb", buffering=0) as filler, contextlib.suppress(OSError):
                while filler.write(b"f" * 512):
                    pass
            time.sleep(1.0)  # lines fail, some after a short write
            (mount / FILLER).unlink()
            _, stderr = sampler.communicate(timeout=30)
        finally:
            sampler.kill()
        data = out.read_bytes()
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
    assert sampler.returncode == 0
    no_traceback(stderr)
    messages = stderr.decode().splitlines()
    assert messages and all(str(out) in message for message in messages)
    lines = parse_lines(data)  # ends with a newline; each line one whole JSON object
    assert all(list(line)[:2] == ["v", "t"] for line in lines)
    assert 2 <= len(lines) < 60
    times = [line["t"] for line in lines]
    assert times == sorted(times)


FILE_SIZE_LIMITED = """
import resource, sys
from orca.sample.shell.out.files import LineFile
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
file = LineFile(sys.argv[1], None)
print(*(file.write(b'{"v":1,"n":%d}' % n) for n in range(40)))
"""


def test_a_file_size_limit_leaves_only_whole_lines(tmp_path: Path) -> None:
    """The same with RLIMIT_FSIZE (no mount needed): the write that crosses the limit is short; what stays in the
    file is whole lines only (Python ignores SIGXFSZ, so the write fails with EFBIG instead of killing it)."""
    out = tmp_path / "m.jsonl"
    done = subprocess.run([sys.executable, "-c", FILE_SIZE_LIMITED, str(out), "205"], capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    results = done.stdout.split()
    assert b"False" in results and results[0] == b"True"
    lines = read_lines(out)
    assert [line["n"] for line in lines] == list(range(len(lines)))
    assert out.stat().st_size <= 205
    assert len(done.stderr.decode().splitlines()) == 1


# --- --keep streams: memory, permission bits, symbolic links ---

KEEP_A_BIG_FILE = """
import resource, sys
from orca.sample.shell.out.files import LineFile
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
file = LineFile(sys.argv[1], 5)
assert file.write(b'{"v":1,"n":"last"}')
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.slow
def test_keep_on_a_big_file_does_not_read_it_into_memory(tmp_path: Path) -> None:
    """A restarted `--keep 5` sampler finding a 64 MiB file: its peak memory does not grow with the file."""
    path = tmp_path / "m.jsonl"
    line = b'{"v":1,"pad":"' + b"x" * 1000 + b'"}\n'
    with path.open("wb") as big:
        for _ in range(64):
            big.write(line * 1024)
    done = subprocess.run([sys.executable, "-c", KEEP_A_BIG_FILE, str(path)], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    grew_kib = int(done.stdout)
    assert grew_kib < 16 * 1024, grew_kib  # a quarter of the file; reading it whole takes more than the file
    assert path.read_bytes() == line * 4 + b'{"v":1,"n":"last"}\n'


def test_keep_keeps_the_permission_bits(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_bytes(b"")
    path.chmod(0o600)
    file = LineFile(str(path), keep=2)
    for n in range(5):
        assert file.write(b"%d" % n)
    assert path.read_bytes() == b"2\n3\n4\n"  # trimmed at the fourth line to 2, 3
    assert path.stat().st_mode & 0o7777 == 0o600


def test_keep_through_a_symbolic_link_trims_its_target(tmp_path: Path) -> None:
    """`--out` a link: the link stays a link to the same file, which keeps receiving lines."""
    target = tmp_path / "real" / "m.jsonl"
    target.parent.mkdir()
    link = tmp_path / "m.jsonl"
    link.symlink_to(target)
    file = LineFile(str(link), keep=2)
    for n in range(7):
        assert file.write(b"%d" % n)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == b"4\n5\n6\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.jsonl"]

