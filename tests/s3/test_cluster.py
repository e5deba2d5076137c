"""A fleet read on a real Dask cluster (docs/metrics.md, "On a cluster"): `dask scheduler` and two `dask worker`
processes on 127.0.0.1, started for this module and ended by their ids, reading a fleet of real captured lines from
the moto server. The workers reach S3 through a proxy of their own and the client through another, so a test sees
who fetched what: the client lists, the workers fetch with their own settings."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from orca.sample.readback.shell import cluster
from orca.sample.readback.shell.cli.metrics import metrics_main
from orca.sample.shared.hints import extra_install
from tests.fleet.fleets import mixed, write_fleet
from tests.moto_server import MotoServer, aws_environment
from tests.s3.proxy import FaultProxy, fault_proxy

pytestmark = pytest.mark.slow
DASK = Path(sys.executable).with_name("dask")
ORCA = [sys.executable, "-m", "orca.sample", "metrics"]


@dataclass
class Cluster:
    """A scheduler and its workers, each a process of ours; the workers' environment reaches S3 through `proxy`."""

    directory: Path
    environment: dict[str, str]
    proxy: FaultProxy
    address: str = ""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_scheduler(self) -> None:
        found = self.directory / "scheduler.json"
        self._start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address",
                     "127.0.0.1:0", "--scheduler-file", str(found), "--no-show"], "scheduler")
        self.address = json.loads(_waited_for(found).read_text())["address"]

    def start_worker(self, environment: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        before = self.worker_count()
        worker = self._start([str(DASK), "worker", self.address, "--nthreads", "1", "--no-nanny", "--host",
                              "127.0.0.1", "--no-dashboard"], f"worker-{len(self.processes)}", environment)
        self.workers.append(worker)
        deadline = time.monotonic() + 60
        while self.worker_count() <= before:
            assert worker.poll() is None and time.monotonic() < deadline, "the worker did not join"
            time.sleep(0.2)
        return worker

    def stop(self, process: subprocess.Popen[bytes]) -> None:
        """Ended by its id: SIGKILL, then reaped; a worker, once the scheduler has let it go."""
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        if process in self.workers:
            self.workers.remove(process)
            deadline = time.monotonic() + 60
            while self.worker_count() > len(self.workers) and time.monotonic() < deadline:
                time.sleep(0.2)

    def worker_count(self) -> int:
        import distributed

        make: Any = distributed.Client
        with make(self.address, timeout=10, set_as_default=False) as client:
            return len(client.nthreads())

    def _start(self, command: list[str], name: str,
               environment: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        with (self.directory / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       env=environment or self.environment, cwd=self.directory)
        self.processes.append(process)
        return process


def _waited_for(path: Path) -> Path:
    deadline = time.monotonic() + 60
    while not (path.exists() and path.stat().st_size):
        assert time.monotonic() < deadline, f"{path} was not written"
        time.sleep(0.2)
    time.sleep(0.2)  # written whole
    return path


@pytest.fixture(scope="module")
def dask_cluster(s3_server: MotoServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    directory = tmp_path_factory.mktemp("dask")
    with fault_proxy(s3_server.url) as proxy:
        environment = aws_environment(dict(os.environ), proxy.url, directory)
        cluster = Cluster(directory, environment, proxy)
        try:
            cluster.start_scheduler()
            cluster.start_worker()
            cluster.start_worker()
            yield cluster
        finally:
            for process in reversed(cluster.processes):
                cluster.stop(process)


@pytest.fixture
def fleet(s3_server: MotoServer, bucket: str, tmp_path: Path) -> tuple[str, Path]:
    """Twelve instances' objects of real captured lines under a prefix, and the same files in a directory."""
    directory = tmp_path / "fleet"
    for name in write_fleet(directory, mixed(12)):
        s3_server.client().put_object(Bucket=bucket, Key=f"nightly/42/metrics/{name}.jsonl",
                                      Body=(directory / f"{name}.jsonl").read_bytes())
    return f"s3://{bucket}/nightly/42/", directory


def orca(arguments: list[str], environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ORCA, *arguments], capture_output=True, text=True, env=environment, timeout=120)


def gets(proxy: FaultProxy) -> list[str]:
    return [seen.path for seen in proxy.seen if seen.operation == "GetObject"]


def test_a_fleet_on_the_cluster_is_the_local_read(dask_cluster: Cluster, fleet: tuple[str, Path],
                                                  proxied_env: dict[str, str], proxy: FaultProxy,
                                                  tmp_path: Path) -> None:
    prefix, _ = fleet
    for arguments in (["--json"], [], ["--sort", "cpu", "--plot"]):
        local_plot, cluster_plot = tmp_path / "local.png", tmp_path / "cluster.png"
        plotted = arguments[-1:] == ["--plot"]
        here = orca([*arguments, *([str(local_plot)] if plotted else []), prefix], proxied_env)
        assert here.returncode == 0, here.stderr
        proxy.forget()
        dask_cluster.proxy.forget()
        there = orca([*arguments, *([str(cluster_plot)] if plotted else []), "--scheduler", dask_cluster.address,
                      prefix], proxied_env)
        assert there.returncode == 0, there.stderr
        assert (there.stdout, there.stderr.replace("cluster.png", "local.png")) == (here.stdout, here.stderr)
        if plotted:
            assert cluster_plot.read_bytes() == local_plot.read_bytes()
        # The client listed the prefix; every object was fetched by the workers, with their own endpoint setting.
        assert {seen.operation for seen in proxy.seen} == {"ListObjectsV2"}
        assert len(gets(dask_cluster.proxy)) == 12


def test_a_worker_lost_mid_read_changes_nothing(dask_cluster: Cluster, fleet: tuple[str, Path],
                                                s3_env: dict[str, str]) -> None:
    prefix, _ = fleet
    expected = orca(["--json", prefix], s3_env)
    assert expected.returncode == 0, expected.stderr
    dask_cluster.proxy.forget()
    dask_cluster.proxy.delay(lambda seen: seen.operation == "GetObject", 0.3, times=None)
    try:
        reading = subprocess.Popen([*ORCA, "--json", "--scheduler", dask_cluster.address, prefix],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=s3_env)
        deadline = time.monotonic() + 60
        while len(gets(dask_cluster.proxy)) < 3:  # both workers at work
            assert reading.poll() is None and time.monotonic() < deadline, reading.stderr
            time.sleep(0.05)
        dask_cluster.stop(dask_cluster.workers[0])
        out, err = reading.communicate(timeout=120)
    finally:
        dask_cluster.proxy.heal()
    assert (reading.returncode, out, err) == (0, expected.stdout, expected.stderr)
    assert len(gets(dask_cluster.proxy)) > 12  # the lost worker's objects fetched again by the other


def test_an_object_a_worker_cannot_read_is_a_row_of_no_lines(dask_cluster: Cluster, fleet: tuple[str, Path],
                                                             s3_env: dict[str, str]) -> None:
    prefix, _ = fleet
    gone = "nightly/42/metrics/worker-005.jsonl"
    dask_cluster.proxy.answer(lambda seen: seen.operation == "GetObject" and seen.path.endswith(gone), 403,
                              "AccessDenied", times=None)  # the workers' role may not read it
    try:
        done = orca(["--scheduler", dask_cluster.address, prefix], s3_env)
    finally:
        dask_cluster.proxy.heal()
    assert done.returncode == 1
    (message,) = done.stderr.splitlines()
    assert message == f"orca metrics: {prefix.removesuffix('nightly/42/')}{gone}: AccessDenied", message
    assert "no lines (1):\n  worker-005  could not be read\n" in done.stdout
    assert done.stdout.splitlines()[13].startswith("total: 11 runs, ")


def test_workers_of_another_version_are_one_message_before_any_task(dask_cluster: Cluster,
                                                                    fleet: tuple[str, Path],
                                                                    s3_env: dict[str, str], tmp_path: Path) -> None:
    other = tmp_path / "other" / "orca_sample-9.9.9.dist-info"
    other.mkdir(parents=True)
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: orca-sample\nVersion: 9.9.9\n")
    # Found before the installed orca-sample on the worker's path: that worker says it has 9.9.9.
    worker = dask_cluster.start_worker(dask_cluster.environment | {"PYTHONPATH": str(other.parent)})
    try:
        dask_cluster.proxy.forget()
        done = orca(["--scheduler", dask_cluster.address, fleet[0]], s3_env)
        address = _worker_address(dask_cluster.directory / f"worker-{len(dask_cluster.processes) - 1}.log")
    finally:
        dask_cluster.stop(worker)
    assert done.returncode == 1 and done.stdout == ""
    (message,) = done.stderr.splitlines()
    version = message.split("orca-sample ", 1)[1].split(",", 1)[0]
    assert message.startswith("orca metrics: the Dask workers must run orca-sample ")
    assert message.endswith(f"do not: 9.9.9 on {address}"), message
    assert version != "9.9.9" and gets(dask_cluster.proxy) == []


def _worker_address(log: Path) -> str:
    for line in log.read_text().splitlines():
        if "Start worker at:" in line:
            return line.split("Start worker at:", 1)[1].strip()
    raise AssertionError(f"no address in {log}")


def test_an_unreachable_scheduler_is_one_message(fleet: tuple[str, Path], s3_env: dict[str, str],
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, not listening: refused
        port = closed.getsockname()[1]
        started = time.monotonic()
        done = orca(["--scheduler", f"tcp://127.0.0.1:{port}", fleet[0]], s3_env)
        assert time.monotonic() - started < 30
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"orca metrics: cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: "
                           "Connection refused\n")
    # One that takes the connection and says nothing: Dask's client would wait without end.
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1.0)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        assert metrics_main(["--scheduler", address, str(fleet[1])]) == 1
    assert capsys.readouterr() == ("", f"orca metrics: cannot reach the Dask scheduler at {address}: no answer "
                                       "within 1 s\n")


def test_a_scheduler_named_without_distributed(fleet: tuple[str, Path], monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as where the cluster extra is not installed
    install = extra_install("cluster", "distributed")
    assert install.endswith(("[cluster]'", "distributed")), install
    assert metrics_main(["--scheduler", "tcp://127.0.0.1:8786", str(fleet[1])]) == 2
    assert capsys.readouterr().err == ("orca metrics: --scheduler names a Dask scheduler (tcp://127.0.0.1:8786), "
                                       f"which needs distributed: {install}\n")
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:8786")
    assert metrics_main([str(fleet[1] / "worker-000.jsonl")]) == 2  # named, even for a file read here
    assert capsys.readouterr().err.startswith("orca metrics: DASK_SCHEDULER_ADDRESS names a Dask scheduler ")
    assert metrics_main(["--scheduler", "", str(fleet[1])]) == 0  # '': read here


def test_workers_of_other_versions_are_named_by_version_then_worker() -> None:
    class Client:
        def run(self, *args: Any, **kwargs: Any) -> dict[str, object]:
            return {"tcp://c": "2.0", "tcp://a": "1.0", "tcp://d": OSError("gone"), "tcp://b": "2.0", "tcp://e": "0.9"}

    with pytest.raises(cluster.ClusterError) as raised:
        cluster._same_version(Client(), "1.0")
    assert str(raised.value) == ("the Dask workers must run orca-sample 1.0, as here: 4 of 5 do not: "
                                 "0.9 on tcp://e; 2.0 on tcp://b, tcp://c; none on tcp://d")
