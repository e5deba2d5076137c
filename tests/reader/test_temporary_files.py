"""Where no temporary file can hold what `orca metrics` sets aside (docs/metrics.md, "A file of many runs": a part's
runs, each run's `--json` document or block, the table's rows as they are said), because none can be made (a
read-only file system) or the disk is full: the output is the same, held in memory instead, and a part's worker that
failed for it is said."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orca.sample.readback.shell import parts, run_rows
from orca.sample.readback.shell.cli.metrics import metrics_main
from orca.sample.readback.shell.run_rows import Aside
from orca.sample.readback.shell.sources import part_starts
from tests.reader.test_hostile_input import one_line_runs

FULL = "/dev/full"


def full_disk(mode: str = "w+b", buffering: int = -1, encoding: str | None = None, newline: str | None = None,
              errors: str | None = None, **_: Any) -> IO[Any]:
    """A temporary file on a disk that is full: every write that reaches it fails (ENOSPC)."""
    return open(FULL, mode, buffering=buffering, encoding=encoding, newline=newline, errors=errors)


def none_usable(*_: Any, **__: Any) -> IO[Any]:
    raise FileNotFoundError(2, "No usable temporary directory found")


@pytest.mark.skipif(not Path(FULL).exists(), reason="no /dev/full")
@pytest.mark.parametrize("temporary", [full_disk, none_usable])
@pytest.mark.parametrize("options", [[], ["--json"], ["--each"]])
def test_what_is_set_aside_is_held_in_memory_when_no_temporary_file_can_hold_it(
        temporary: Any, options: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = one_line_runs(tmp_path / "cron.jsonl", 3000)
    monkeypatch.setattr(parts, "MIN_PART_BYTES", path.stat().st_size // 3)
    monkeypatch.setattr(parts, "usable_cores", lambda: 2)
    assert metrics_main([*options, str(path)]) == 0
    alone = capsys.readouterr()
    assert alone.err == ""
    monkeypatch.setattr(tempfile, "TemporaryFile", temporary)
    assert metrics_main([*options, str(path)]) == 0
    held = capsys.readouterr()
    assert held.out == alone.out
    if temporary is none_usable:  # no file for a part's runs: the file is read here, whole
        assert held.err == ""
        return
    start = part_starts(lambda at, length: path.read_bytes()[at:at + length], path.stat().st_size, 2)[1]
    said = f"orca metrics: {path}: a worker failed reading its part (from byte {start}): No space left on device"
    assert held.err.startswith(said) and held.err.endswith("; its part was read here\n"), held.err


@given(texts=st.lists(st.text(max_size=40), max_size=60), room=st.integers(0, 3000), piece=st.integers(1, 64))
@settings(max_examples=200, deadline=None)
def test_texts_aside_are_each_read_back_whenever_the_disk_fills(texts: list[str], room: int, piece: int) -> None:
    """Texts aside, written `piece` bytes at a time to a file on a disk with `room` bytes left (a write takes what
    fits, then fails as the kernel's does): each is read back as it was added, whether the disk filled before, during
    or after it."""
    made: list[int] = []
    real_file, real_write = tempfile.TemporaryFile, os.write

    def made_here(*args: Any, **kwargs: Any) -> IO[Any]:
        file: IO[Any] = real_file(*args, **kwargs)
        made.append(file.fileno())
        return file

    def short_of_room(descriptor: int, data: Any) -> int:
        if descriptor not in made:
            return real_write(descriptor, data)
        taken = min(len(data), room - os.fstat(descriptor).st_size)
        if taken <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(descriptor, bytes(data[:taken]))

    aside = Aside()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "TemporaryFile", made_here)
        patch.setattr(os, "write", short_of_room)
        patch.setattr(run_rows, "ASIDE_PIECE", piece)
        for text in texts:
            aside.add(text)
        got = [aside[index] for index in range(len(texts))]
    aside.close()
    assert got == texts
