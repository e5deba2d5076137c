"""A fleet under an `s3://` prefix (docs/metrics.md, "A fleet"): its instances' objects read as a directory's files
are, and an object that vanished between the listing and its reading one message, the rest of the fleet summarised."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orca.sample.readback.shell import many
from orca.sample.readback.shell.cli.metrics import metrics_main
from tests.fleet.fleets import mixed, write_fleet
from tests.moto_server import MotoServer
from tests.reader.test_parts import counting_forks
from tests.s3.proxy import FaultProxy


def test_a_fleet_under_a_prefix_and_an_object_gone(s3_server: MotoServer, bucket: str, proxied_env: dict[str, str],
                                                   proxy: FaultProxy, tmp_path: Path) -> None:
    names = write_fleet(tmp_path, mixed(12))
    client = s3_server.client()
    for name in names:
        client.put_object(Bucket=bucket, Key=f"p/42/metrics/{name}.jsonl",
                          Body=(tmp_path / f"{name}.jsonl").read_bytes())
    local = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", "--json", str(tmp_path)],
                           capture_output=True, text=True, timeout=120)
    location = f"s3://{bucket}/p/42/"
    whole = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", "--json", location], capture_output=True,
                           text=True, env=proxied_env, timeout=120)
    assert whole.returncode == 0, whole.stderr
    # The same fleet as from the directory, but for the names of its sources.
    from_s3, from_files = json.loads(whole.stdout), json.loads(local.stdout)
    assert from_s3["totals"] == from_files["totals"]
    assert [row["label"] for row in from_s3["rows"]] == names
    assert [row["summary"]["cpu"] for row in from_s3["rows"]] == [row["summary"]["cpu"] for row in from_files["rows"]]

    gone = f"p/42/metrics/{names[5]}.jsonl"
    proxy.answer(lambda seen: seen.operation == "GetObject" and seen.path.endswith(gone), 404, "NoSuchKey",
                 times=None)
    done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", location], capture_output=True, text=True,
                          env=proxied_env, timeout=120)
    assert done.returncode == 1
    (message,) = done.stderr.splitlines()
    assert message.startswith(f"orca metrics: s3://{bucket}/{gone}: ") and "NoSuchKey" in message, message
    assert "Traceback" not in done.stderr
    assert f"no lines (1):\n  {names[5]}  could not be read\n" in done.stdout
    assert done.stdout.splitlines()[len(names) + 1].startswith(f"total: {len(names) - 1} runs, ")


@pytest.mark.parametrize("arguments", [["--json"], []])
def test_the_local_executor_over_objects_as_one_process(s3_server: MotoServer, bucket: str, s3_env: dict[str, str],
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str],
                                                       arguments: list[str]) -> None:
    """A prefix's objects are read on the cores as a directory's files are: each process of the local executor
    fetches its group's objects with a client of its own; what is printed is one process's."""
    for name in write_fleet(tmp_path, mixed(9)):
        s3_server.client().put_object(Bucket=bucket, Key=f"p/7/metrics/{name}.jsonl",
                                      Body=(tmp_path / f"{name}.jsonl").read_bytes())
    monkeypatch.setattr(many, "MIN_SPREAD_BYTES", 0)  # a small fleet spread all the same
    monkeypatch.setattr(many, "usable_cores", lambda: 1)
    alone = metrics_main([*arguments, f"s3://{bucket}/p/7/"]), capsys.readouterr()
    monkeypatch.setattr(many, "usable_cores", lambda: 2)
    forks = counting_forks(monkeypatch)
    spread = metrics_main([*arguments, f"s3://{bucket}/p/7/"]), capsys.readouterr()
    assert spread == alone and alone[0] == 0 and alone[1].out.count("worker-") >= 9
    assert forks == [1, 1]
