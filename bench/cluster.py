"""A fleet read through the executors (docs/metrics.md, "A fleet at scale" and "On a cluster"): the same fleet of
day-long instances from files and from S3 (the moto server), read by one process, by the local executor over the
usable cores, and on a Dask cluster (a `dask scheduler` and one or two `dask worker` processes of one thread, on
127.0.0.1, started for each reading and ended by their ids), one run each. Printed: the wall time and its ratio to
one process, lines a second per worker, the client's merge time (the fleet's table and `--json` made from the folds
that came back) per instance, and the peak memory of the client and of its largest worker.

    .venv/bin/python -m bench.cluster [--instances 1000] [--lines 1728] [--only files,s3]

Each reading runs in a process of its own that goes through `orca metrics --json`'s steps timed apart (the listing,
`many.read_each` on the executor, `fleet_table` and `table_json`). The instances' files are one instance's lines with
the host and start changed (`bench/fleet.py`); the objects are the same bytes put under a prefix. The default is a
tenth of a day a instance (1,728 lines at 5 s): 1,000 day-long instances are 12.6 GiB, more than this shared machine's
moto server should hold in memory; bench/README.md scales the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.moto_server import MotoServer, aws_environment

from bench.fleet import write_big_fleet

DASK = Path(sys.executable).with_name("dask")

# `orca metrics --json LOCATION`'s steps, timed apart, in a process of their own: MODE is `one` (one process),
# `local` (the local executor) or `cluster` (on the scheduler at SCHEDULER).
DRIVER = r"""
import json, resource, sys, time
from functools import partial
from orca.sample.readback.fleet.as_json import table_json
from orca.sample.readback.fleet.table import fleet_table
from orca.sample.readback.summary.as_json import document, encoded
from orca.sample.readback.shell.fleet_read import SourceRuns, read_fleet_source
from orca.sample.readback.shell.many import read_each
from orca.sample.readback.shell.sources import sources

mode, location, scheduler = sys.argv[1:4]
started = time.perf_counter()
found = sources(location)
listed = time.perf_counter()
read = partial(read_fleet_source, drawn=0, buckets=False)
if mode == "cluster":
    from orca.sample.readback.shell.cluster import connected

    with connected(scheduler) as cluster:
        ready = time.perf_counter()
        outcomes = read_each(found, read, executor=cluster.executor, workers=cluster.threads)
        done = time.perf_counter()
    closed = time.perf_counter()
else:
    ready = listed
    outcomes = read_each(found, read, cores=1 if mode == "one" else None)
    done = closed = time.perf_counter()
runs = [run for outcome in outcomes if isinstance(outcome, SourceRuns) for run in outcome.runs]
lines = sum(outcome.tally.samples for outcome in outcomes if isinstance(outcome, SourceRuns))
text = "".join(table_json(fleet_table(runs), lambda index: encoded(document(runs[index].summary))))
merged = time.perf_counter()
peak = lambda who: resource.getrusage(who).ru_maxrss / 1024
print(json.dumps({"list": listed - started, "connect": ready - listed, "read": done - ready, "merge": merged - closed,
                  "wall": merged - started, "instances": len(runs), "lines": lines, "bytes": len(text),
                  "peak": peak(resource.RUSAGE_SELF), "children": peak(resource.RUSAGE_CHILDREN)}))
"""


def reading(mode: str, location: str, scheduler: str, environment: dict[str, str]) -> dict[str, float]:
    """One reading by the driver, in a process whose peak memory is its own (started by a shell that forks it)."""
    done = subprocess.run(["/bin/sh", "-c", '"$@"; exit $?', "sh", sys.executable, "-c", DRIVER, mode, location,
                           scheduler], capture_output=True, text=True, env=environment, timeout=3600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} {location}: {done.stderr}")
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


@contextmanager
def cluster(workers: int, environment: dict[str, str], directory: Path) -> Iterator[tuple[str, list[int]]]:
    """A scheduler and `workers` workers of one thread each: its address and the workers' pids; each process ended
    by its id."""
    processes: list[subprocess.Popen[bytes]] = []
    found = directory / f"scheduler-{time.monotonic_ns()}.json"

    def start(command: list[str]) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   stdin=subprocess.DEVNULL, env=environment)
        processes.append(process)
        return process

    try:
        start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", "127.0.0.1:0",
               "--scheduler-file", str(found), "--no-show"])
        deadline = time.monotonic() + 60
        while not (found.exists() and found.stat().st_size):
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.2)
        time.sleep(0.2)
        address = json.loads(found.read_text())["address"]
        pids = [start([str(DASK), "worker", address, "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1",
                       "--no-dashboard", "--memory-limit", "0"]).pid for _ in range(workers)]
        _joined(address, workers)
        yield address, pids
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            process.wait()


def _joined(address: str, workers: int) -> None:
    import distributed

    deadline = time.monotonic() + 120
    make: Any = distributed.Client  # untyped
    with make(address, timeout=30, set_as_default=False) as client:
        while len(client.nthreads()) < workers:
            assert time.monotonic() < deadline, "the workers did not join"
            time.sleep(0.2)


def peak_mib(pid: int) -> float:
    """A live process's peak resident memory (`VmHWM`), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def row(*cells: str) -> None:
    print("| " + " | ".join(cells) + " |", flush=True)


def measure(what: str, location: str, environment: dict[str, str], directory: Path) -> None:
    results: dict[str, tuple[dict[str, float], int, float]] = {}
    for mode, workers in (("one", 1), ("local", 2), ("cluster", 1), ("cluster", 2)):
        load = os.getloadavg()[0]
        if mode == "cluster":
            with cluster(workers, environment, directory) as (address, pids):
                figures = reading(mode, location, address, environment)
                worker_peak = max(peak_mib(pid) for pid in pids)
        else:
            figures = reading(mode, location, "", environment)
            worker_peak = figures["children"]
        name = {"one": "one process", "local": "the local executor, 2 processes"}.get(
            mode, f"a cluster of {workers} worker{'s' * (workers > 1)}")
        results[name] = (figures, workers, worker_peak)
        base = results["one process"][0]["wall"]
        row(f"{what}: {name}", f"{figures['wall']:.1f} s", f"{base / figures['wall']:.2f}x",
            f"{figures['lines'] / figures['read'] / workers:,.0f}",
            f"{figures['merge'] / figures['instances'] * 1e3:.2f} ms ({100 * figures['merge'] / figures['read']:.1f}%)",
            f"list {figures['list']:.2f} s, connect {figures['connect']:.2f} s, read {figures['read']:.1f} s",
            f"{figures['peak']:.0f} MiB, {worker_peak:.0f} MiB", f"{load:.1f}")
    local = results["the local executor, 2 processes"][0]["wall"]
    two = results["a cluster of 2 workers"][0]["wall"]
    row(f"{what}: two workers / the local executor", f"{two / local:.2f}", "", "", "", "<= 1.2", "", "")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=1728, help="each instance's lines (17,280: a day at 5 s)")
    parser.add_argument("--only", default="files,s3")
    args = parser.parse_args(argv)
    row("reading", "wall", "against one process", "lines/s per worker", "merge per instance (share of the read)",
        "steps", "peak: client, largest worker", "load")
    row(*["---"] * 8)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        fleet = write_big_fleet(base / "fleet", args.instances, args.lines)
        size = sum(path.stat().st_size for path in fleet.iterdir())
        what = f"{args.instances:,} x {args.lines:,} lines ({size / 2**30:.2f} GiB)"
        environment = dict(os.environ)
        if "files" in args.only:
            measure(f"files, {what}", str(fleet), environment, base)
        if "s3" in args.only:
            server = MotoServer(base)
            server.start()
            try:
                bucket = server.new_bucket()
                for path in sorted(fleet.iterdir()):
                    server.client().put_object(Bucket=bucket, Key=f"nightly/42/metrics/{path.name}",
                                               Body=path.read_bytes())
                measure(f"S3 (moto), {what}", f"s3://{bucket}/nightly/42/",
                        aws_environment(environment, server.url, base), base)
            finally:
                server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
