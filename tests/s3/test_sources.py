"""`orca metrics` and `read_samples` on an S3 object and on every object under a prefix, against the moto server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orca.sample.readback.shell import s3_objects
from orca.sample.readback.shell.cli.metrics import metrics_main
from orca.sample.readback.shell.newest import read_newest_minute
from orca.sample.readback.shell.s3_objects import FETCHES
from orca.sample.readback.shell.sources import SourceError, Tally, decoded, read_samples, sources
from tests.moto_server import MotoServer
from tests.reader.hand_worked import EXPECTED_AT_1070, HAND_WORKED, RUN, sample
from tests.s3.proxy import FaultProxy


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
    put(s3_server, bucket, "empty-prefix/plot.png", "not lines")  # not *.jsonl: passed over, as in a directory
    for location, reason in [
        (f"s3://{bucket}/absent.jsonl",
         f"no such object, and no *.jsonl object under s3://{bucket}/absent.jsonl/"),
        (f"s3://{bucket}/empty-prefix/", "no *.jsonl object under this prefix"),
        (f"s3://{bucket}/empty-prefix", f"no such object, and no *.jsonl object under s3://{bucket}/empty-prefix/"),
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
        assert "no such object" in str(error)
    else:
        raise AssertionError("no SourceError")


def test_a_prefix_without_its_slash_and_what_it_reads(s3_server: MotoServer, bucket: str,
                                                      s3_env: dict[str, str]) -> None:
    """docs/metrics.md: `s3://B/P` with no object named `P` is the prefix `P/`; a prefix (as a directory) gives its
    `*.jsonl` objects; an object named is read whatever its name."""
    put(s3_server, bucket, "p/42/metrics/worker-a.jsonl", RUN)
    put(s3_server, bucket, "p/42/metrics/fleet.png", "a picture")
    put(s3_server, bucket, "p/420/metrics/worker-a.jsonl", RUN)  # under p/420/, not p/42/
    put(s3_server, bucket, "q/run", RUN)  # an object named with no suffix
    whole = [source.name for source in sources(f"s3://{bucket}/p/42")]
    assert whole == [source.name for source in sources(f"s3://{bucket}/p/42/")]
    assert whole == [f"s3://{bucket}/p/42/metrics/worker-a.jsonl"]
    assert [source.name for source in sources(f"s3://{bucket}/q/run")] == [f"s3://{bucket}/q/run"]
    assert [s.t for s in read_samples(f"s3://{bucket}/q/run")] == [100.0, 105.0, 110.0, 125.0, 130.0]


def test_an_object_that_stalls_mid_body_is_named(s3_server: MotoServer, bucket: str, proxied_env: dict[str, str],
                                                 proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    put(s3_server, bucket, "stalls.jsonl", RUN * 50)
    monkeypatch.setattr(s3_objects, "READ_SECONDS", 0.5)
    proxy.stall(lambda seen: seen.operation == "GetObject", after=len(RUN), seconds=3.0)
    assert metrics_main([f"s3://{bucket}/stalls.jsonl"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (f"orca metrics: s3://{bucket}/stalls.jsonl: the store sent nothing for 0.5 s "
                                    "(read timeout)"), err


def test_the_newest_minute_of_an_object(s3_server: MotoServer, bucket: str, s3_env: dict[str, str]) -> None:
    put(s3_server, bucket, "control.jsonl", HAND_WORKED)
    assert read_newest_minute(f"s3://{bucket}/control.jsonl", now=1070.0) == EXPECTED_AT_1070
    assert read_newest_minute(f"s3://{bucket}/absent.jsonl", now=1070.0) is None
    assert read_newest_minute("s3://no-such-bucket-orca/control.jsonl", now=1070.0) is None


def test_a_prefix_of_many_objects_is_fetched_several_at_a_time_and_no_further_ahead(
    s3_server: MotoServer, bucket: str, proxied_env: dict[str, str], proxy: FaultProxy
) -> None:
    # A run's hundreds of instance objects: fetched by a bounded pool of requests, each summarised on its own.
    names = [f"fleet/metrics/worker-{n:03}.jsonl" for n in range(3 * FETCHES)]
    for name in names:
        put(s3_server, bucket, name, RUN)
    proxy.delay(lambda seen: seen.operation == "GetObject", 0.2, times=None)
    found = sources(f"s3://{bucket}/fleet/")
    assert [source.name for source in found] == [f"s3://{bucket}/{name}" for name in names]
    # While the first object is being read, the pool fetches ahead: at most its bound of objects.
    batches = found[0].batches()
    next(batches)
    time.sleep(1.0)
    assert len([seen for seen in proxy.seen if seen.operation == "GetObject"]) <= FETCHES
    rest = list(batches)
    counts = [sum(map(len, decoded(source.batches(), Tally()))) for source in found[1:]]
    assert rest == [] and counts == [5] * (len(names) - 1)
    assert 1 < proxy.most_in_flight("GetObject") <= FETCHES


def test_an_object_whose_reader_was_away_is_fetched_again_from_where_it_stopped(
    s3_server: MotoServer, bucket: str, proxied_env: dict[str, str], proxy: FaultProxy,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each line distinct, so a chunk read twice or left out changes the bytes.
    body = "".join(f"{n:07}\n" for n in range(2_000)).encode()
    s3_server.client().put_object(Bucket=bucket, Key="slow.jsonl", Body=body)
    monkeypatch.setattr(s3_objects, "IDLE_SECONDS", 0.3)
    ((name, size, chunks),) = s3_objects.object_chunks(f"s3://{bucket}/slow.jsonl", 1_000)
    assert (name, size) == (f"s3://{bucket}/slow.jsonl", len(body))
    reading = chunks()
    first = next(reading)
    time.sleep(1.0)  # the fetch, its chunks not taken, lets go of its connection
    assert first + b"".join(reading) == body
    ranges = [seen.headers.get("range") for seen in proxy.seen if seen.operation == "GetObject"]
    # Read again after the chunk it had taken and the ones waiting for it.
    assert ranges == [None, f"bytes={(1 + s3_objects.AHEAD_CHUNKS) * 1_000}-"]
