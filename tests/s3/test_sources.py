"""`orca metrics` and `read_samples` on an S3 object and on every object under a prefix, against the moto server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from orca.sample.shell.readback.newest import read_newest_minute
from orca.sample.shell.readback.sources import SourceError, read_samples, sources
from tests.moto_server import MotoServer
from tests.reader.hand_worked import EXPECTED_AT_1070, HAND_WORKED, RUN, sample


def put(server: MotoServer, bucket: str, key: str, body: str) -> None:
    server.client().put_object(Bucket=bucket, Key=key, Body=body.encode())


def test_an_object_and_a_prefix(s3_server: MotoServer, bucket: str, s3_env: dict[str, str]) -> None:
    put(s3_server, bucket, "p/42/metrics/worker-a.jsonl", RUN)
    put(s3_server, bucket, "p/42/metrics/worker-b.jsonl", sample(200.0) + "\n" + sample(205.0))  # last line cut
    put(s3_server, bucket, "p/43/metrics/worker-a.jsonl", sample(300.0) + "\n")
    one = [s.t for s in read_samples(f"s3://{bucket}/p/42/metrics/worker-a.jsonl")]
    assert one == [100.0, 105.0, 110.0, 125.0, 130.0]
    names = [source.name for source in sources(f"s3://{bucket}/p/42/")]
    assert names == [f"s3://{bucket}/p/42/metrics/worker-a.jsonl", f"s3://{bucket}/p/42/metrics/worker-b.jsonl"]
    assert [s.t for s in read_samples(f"s3://{bucket}/p/42/")] == [100.0, 105.0, 110.0, 125.0, 130.0, 200.0]


def test_orca_metrics_reads_s3_with_the_outputs_settings(s3_server: MotoServer, bucket: str,
                                                         s3_env: dict[str, str]) -> None:
    put(s3_server, bucket, "run/worker-a.jsonl", RUN)
    done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", "--json", f"s3://{bucket}/run/"],
                          capture_output=True, text=True, env=s3_env, timeout=60)
    assert done.returncode == 0, done.stderr
    (document,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert (document["name"], document["lines"], document["gaps"]) == (f"s3://{bucket}/run/worker-a.jsonl", 5, 1)


def test_missing_objects_and_buckets_are_one_message(s3_server: MotoServer, bucket: str, s3_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    for location, reason in [
        (f"s3://{bucket}/absent.jsonl", "404"),
        (f"s3://{bucket}/empty-prefix/", "no object under this prefix"),
        ("s3://no-such-bucket-orca/", "NoSuchBucket"),
    ]:
        done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", location], capture_output=True,
                              text=True, env=s3_env, timeout=60)
        assert done.returncode == 1, location
        assert done.stderr.startswith(f"orca metrics: {location}: ") and reason in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    try:
        sources(f"s3://{bucket}/absent.jsonl")
    except SourceError as error:
        assert "404" in str(error)
    else:
        raise AssertionError("no SourceError")


def test_the_newest_minute_of_an_object(s3_server: MotoServer, bucket: str, s3_env: dict[str, str]) -> None:
    put(s3_server, bucket, "control.jsonl", HAND_WORKED)
    assert read_newest_minute(f"s3://{bucket}/control.jsonl", now=1070.0) == EXPECTED_AT_1070
    assert read_newest_minute(f"s3://{bucket}/absent.jsonl", now=1070.0) is None
    assert read_newest_minute("s3://no-such-bucket-orca/control.jsonl", now=1070.0) is None
