"""Staging files under a shared root (shell/out/staging.py): private directories, no symbolic link followed, no
file of another user's written, none left readable by others."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from orca.sample.shell.out.staging import NotPrivate, open_private, private_directories, stage_root

NOBODY = 65534


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_root_follows_the_environment() -> None:
    assert stage_root({"ORCA_LOG_STAGE": "/s", "TMPDIR": "/t"}) == "/s"
    assert stage_root({"ORCA_LOG_STAGE": "", "TMPDIR": "/t"}) == "/t/orca-logs"
    assert stage_root({}) == "/tmp/orca-logs"


def test_directories_are_made_private_and_the_file_is_the_users_alone(tmp_path: Path) -> None:
    root = tmp_path / "orca-logs"
    path = root / "bucket" / "a" / "b.jsonl"
    descriptor = open_private(str(root), str(path))
    try:
        os.write(descriptor, b"line\n")
    finally:
        os.close(descriptor)
    assert path.read_bytes() == b"line\n"
    assert [mode(p) for p in (root, root / "bucket", root / "bucket" / "a")] == [0o700] * 3
    assert mode(path) == 0o600


def test_an_existing_file_readable_by_others_is_made_private_before_the_write(tmp_path: Path) -> None:
    path = tmp_path / "root" / "f"
    path.parent.mkdir(mode=0o700)
    path.write_bytes(b"old\n")
    path.chmod(0o644)
    os.close(open_private(str(path.parent), str(path)))
    assert mode(path) == 0o600
    assert path.read_bytes() == b"old\n"


def test_a_planted_symbolic_link_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    target = tmp_path / "victim"
    target.write_bytes(b"precious\n")
    (root / "f").symlink_to(target)
    with pytest.raises(NotPrivate, match="symbolic link"):
        open_private(str(root), str(root / "f"))
    assert target.read_bytes() == b"precious\n"


def test_a_directory_replaced_by_a_link_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "bucket").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(NotPrivate, match="symbolic link"):
        open_private(str(root), str(root / "bucket" / "key"))
    assert list(elsewhere.iterdir()) == []


def test_a_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o777)
    with pytest.raises(NotPrivate, match="other users can write"):
        private_directories(str(root), str(root / "bucket"))
    assert not (root / "bucket").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another user's needs root")
def test_directories_and_files_of_another_user_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    theirs = root / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(NotPrivate, match="owned by another user"):
        open_private(str(root), str(theirs / "f"))
    planted = root / "planted"
    planted.write_bytes(b"")
    os.chown(planted, NOBODY, NOBODY)
    with pytest.raises(NotPrivate, match="owned by another user"):
        open_private(str(root), str(planted))
    assert planted.read_bytes() == b""


def test_a_path_outside_the_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotPrivate, match="not under the staging root"):
        private_directories(str(tmp_path / "root"), str(tmp_path / "other"))


@pytest.mark.timeout(10)
@pytest.mark.parametrize("reader", [False, True], ids=["nobody reading", "a reader"])
def test_a_planted_fifo_neither_holds_the_open_nor_takes_the_lines(tmp_path: Path, reader: bool) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    fifo = root / "f"
    os.mkfifo(fifo)
    held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK) if reader else -1
    try:
        with pytest.raises(OSError):  # no reader: ENXIO; a reader: not a regular file
            os.close(open_private(str(root), str(fifo)))
    finally:
        if held >= 0:
            os.close(held)
