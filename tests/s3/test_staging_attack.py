"""Another local user who gets to the staging root first (docs/s3.md): a symbolic link planted where
the staging file will be must not receive the sampler's lines, nor have its target uploaded; the sampler says so
once and goes on to its end. The real sampler as a subprocess against the moto server; `--keep`'s rewrite in this
process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from orca.sample.shell.out.s3 import S3Sink, stage_of
from tests.moto_server import MotoServer, aws_environment
from tests.s3.staged import messages_about

NOBODY = 65534
PRECIOUS = b"a file of the sampler's user, which it can write\n"


def run_sampler(env: dict[str, str], location: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orca.sample", "--out", location, "--count", "4", "--seconds", "0.2"],
        capture_output=True, text=True, timeout=60, env=env | {"ORCA_SAMPLE_UPLOAD_SECONDS": "0.3"},
    )


def test_a_link_planted_at_the_staging_file_is_not_followed(
    tmp_path: Path, s3_server: MotoServer, bucket: str
) -> None:
    env = aws_environment(dict(os.environ), s3_server.url, tmp_path)
    root = Path(env["ORCA_LOG_STAGE"])
    (root / bucket).mkdir(parents=True, mode=0o700)
    root.chmod(0o700)
    victim = tmp_path / "victim"
    victim.write_bytes(PRECIOUS)
    (root / bucket / "k.jsonl").symlink_to(victim)
    done = run_sampler(env, f"s3://{bucket}/k.jsonl")
    assert done.returncode == 0, done.stderr
    assert victim.read_bytes() == PRECIOUS
    messages = done.stderr.splitlines()
    assert len(messages) == 1, messages
    assert "symbolic link" in messages[0] and str(root / bucket / "k.jsonl") in messages[0]
    assert s3_server.read(bucket, "k.jsonl") is None  # and the target was not uploaded either


@pytest.mark.skipif(os.geteuid() != 0, reason="planting as another user needs root")
def test_a_staging_root_another_user_made_first_is_refused(
    tmp_path: Path, s3_server: MotoServer, bucket: str
) -> None:
    # The default root, $TMPDIR/orca-logs, made first by another user, with the link inside it.
    env = aws_environment(dict(os.environ), s3_server.url, tmp_path)
    del env["ORCA_LOG_STAGE"]
    shared = tmp_path / "shared-tmp"
    shared.mkdir(mode=0o777)
    shared.chmod(0o1777)
    env["TMPDIR"] = str(shared)
    planted = shared / "orca-logs" / bucket
    planted.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_bytes(PRECIOUS)
    (planted / "k.jsonl").symlink_to(victim)
    for path in (planted.parent, planted, planted / "k.jsonl"):
        os.lchown(path, NOBODY, NOBODY)
    done = run_sampler(env, f"s3://{bucket}/k.jsonl")
    assert done.returncode == 0, done.stderr
    assert victim.read_bytes() == PRECIOUS
    messages = done.stderr.splitlines()
    assert len(messages) == 1, messages
    assert "another user" in messages[0]
    assert s3_server.read(bucket, "k.jsonl") is None


def test_keep_rewrites_the_staging_file_without_following_a_link(
    s3_env: dict[str, str], s3_server: MotoServer, bucket: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # --keep's rewrite goes through a temporary file beside the staging file and a rename: a link planted at the
    # temporary file's name is not written through, and the staging file stays a regular file.
    location = f"s3://{bucket}/kept.jsonl"
    stage = Path(stage_of(location))
    stage.parent.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim"
    victim.write_bytes(PRECIOUS)
    (stage.parent / f".{stage.name}.{os.getpid()}.keep").symlink_to(victim)
    sink = S3Sink(location, 2)
    for n in range(1, 6):
        sink.write(b"%d" % n)
    sink.close()
    assert victim.read_bytes() == PRECIOUS
    assert not stage.is_symlink()
    assert stage.read_bytes() == b"3\n4\n5\n"
    assert s3_server.read(bucket, "kept.jsonl") == b"3\n4\n5\n"
    assert messages_about(capfd.readouterr().err, location) == []
