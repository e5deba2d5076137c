"""What `--out s3://` costs over a run's length: bytes uploaded and the uploading thread's CPU for simulated runs at
5 s lines with an upload every 30 s, the whole-file upload (how it was: a boto3 client, the file read whole and put)
beside the append (how it is: the object copied in the store plus the new lines), against a local moto server; the
peak resident memory of a sampler uploading a staging file of tens of MB, beside the same sampler writing to a
file; and `orca metrics s3://BUCKET/PREFIX/` over a run of 200 instance objects behind a loopback proxy that adds
50 ms to every request, its objects fetched several at once against one by one.

    .venv/bin/python -m bench.s3 [--hours 1,24,48] [--every N] [--skip-memory] [--skip-uploads] [--skip-fleet]

Lines are written to the staging file as fast as the disk takes them, not in real time; the upload rounds are made
one after the other in this process, and their CPU is this thread's (`time.thread_time`), so the server's is not
counted. The whole-file way uploads every round's whole file: at 48 h that is tens of GB through a local server,
so from 24 h on only every N-th of its rounds is made and timed, and its CPU is that times N (its bytes are exact:
the file's size at each round). The append way makes every round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
from tests.moto_server import MotoServer, aws_environment

from orca.sample.readback.shell.s3_objects import FETCHES, object_chunks
from orca.sample.readback.shell.sources import READ_BYTES
from orca.sample.shell.out.s3 import Uploader, stage_of

LINE_SECONDS = 5
UPLOAD_SECONDS = 30
LINES_PER_UPLOAD = UPLOAD_SECONDS // LINE_SECONDS


def real_line() -> bytes:
    """One line of `orca sample` on this host, newline included."""
    out = subprocess.run(
        [sys.executable, "-m", "orca.sample", "--out", "-", "--count", "2", "--seconds", "0.1"],
        check=True, capture_output=True,
    ).stdout
    return out.splitlines()[-1].removeprefix(b"orca-sample ") + b"\n"


@dataclass(frozen=True, slots=True)
class Cost:
    uploads: int
    sent: int
    cpu: float
    object_size: int


def whole_file_uploader(server: MotoServer, bucket: str, key: str, stage: Path) -> Callable[[], int]:
    """The upload as it was: a boto3 client, the file read whole (up to its last newline) and put in one request."""
    client = server.client()

    def upload() -> int:
        data = stage.read_bytes()
        body = data[: data.rfind(b"\n") + 1]
        client.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/x-ndjson")
        return len(body)

    return upload


def append_uploader(location: str, bucket: str, key: str, stage: Path) -> Callable[[], int]:
    """The upload as it is: the sampler's own uploader, one round at a time; the bytes of the request bodies it
    sends, counted on their way to urllib3."""
    uploader = Uploader(location, bucket, key, str(stage), UPLOAD_SECONDS)
    sent = [0]
    pool = urllib3.connectionpool.HTTPConnectionPool
    real_urlopen = pool.urlopen

    def counting(self: urllib3.connectionpool.HTTPConnectionPool, method: str, url: str, *args: Any, **kw: Any) -> Any:
        sent[0] += int((kw.get("headers") or {}).get("Content-Length", 0))
        return real_urlopen(self, method, url, *args, **kw)

    def upload() -> int:
        before = sent[0]
        with patched(pool, "urlopen", counting):
            uploader.upload_if_changed()
        return sent[0] - before

    return upload


@contextmanager
def patched(owner: type, name: str, value: object) -> Iterator[None]:
    real = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, real)


def whole_size(stage: Path) -> int:
    data_size = stage.stat().st_size
    with stage.open("rb") as staged:
        staged.seek(max(0, data_size - 4096))
        tail = staged.read()
    return data_size - len(tail) + tail.rfind(b"\n") + 1


def simulate(hours: float, line: bytes, upload: Callable[[], int], stage: Path, every: int) -> Cost:
    """Writes `hours` of lines to `stage`, calling `upload` every 30 s of simulated time (only every `every`-th
    round, timed and scaled up, when `every` > 1)."""
    rounds = int(hours * 3600) // UPLOAD_SECONDS
    sent = 0
    cpu = 0.0
    made = 0
    with stage.open("ab") as staged:
        for round_ in range(1, rounds + 1):
            staged.write(line * LINES_PER_UPLOAD)
            if round_ % every and round_ != rounds:
                sent += round_ * LINES_PER_UPLOAD * len(line)  # what the whole-file round would have sent
                continue
            staged.flush()
            started = time.thread_time()
            sent += upload()
            cpu += time.thread_time() - started
            made += 1
    scale = (rounds - 1) / (made - 1) if every > 1 and made > 1 else 1.0
    return Cost(rounds, sent, cpu * scale, whole_size(stage))


@contextmanager
def server_environment(tmp: Path) -> Iterator[MotoServer]:
    server = MotoServer(tmp)
    server.start()
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(aws_environment(saved, server.url, tmp))
        yield server
    finally:
        os.environ.clear()
        os.environ.update(saved)
        server.stop()


def upload_costs(hours_list: list[float], every: int) -> None:
    line = real_line()
    print(f"lines of {len(line)} bytes every {LINE_SECONDS} s, an upload every {UPLOAD_SECONDS} s of simulated time;"
          f" the whole-file way from 24 h on: every {every}th round timed, CPU x{every}", flush=True)
    print("| run | uploads | object | sent, whole file (before) | sent, append (after) | CPU, whole file (before) "
          "| CPU, append (after) | CPU per upload, after |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp_name, server_environment(Path(tmp_name)) as server:
        for hours in hours_list:
            bucket = server.new_bucket()
            costs: dict[str, Cost] = {}
            for way in ("whole", "append"):
                key = f"{way}/{hours:g}h.jsonl"
                location = f"s3://{bucket}/{key}"
                stage = Path(stage_of(location))
                stage.parent.mkdir(parents=True, exist_ok=True)
                upload = (
                    whole_file_uploader(server, bucket, key, stage) if way == "whole"
                    else append_uploader(location, bucket, key, stage)
                )
                costs[way] = simulate(hours, line, upload, stage, every if way == "whole" and hours >= 24 else 1)
                assert server.read(bucket, key) == stage.read_bytes(), f"{way} {hours} h: object != staging file"
                stage.unlink()
                server.client().delete_object(Bucket=bucket, Key=key)
            before, after = costs["whole"], costs["append"]
            print(f"| {hours:g} h | {after.uploads:,} | {mib(after.object_size)} | {gb(before.sent)} | "
                  f"{gb(after.sent)} | {before.cpu:.2f} s | {after.cpu:.2f} s | "
                  f"{after.cpu / after.uploads * 1e3:.1f} ms |", flush=True)


def mib(size: float) -> str:
    return f"{size / 2**20:.1f} MiB"


def gb(size: float) -> str:
    return f"{size / 1e9:.3f} GB" if size >= 1e8 else mib(size)


# VmHWM, not the parent's wait4: Linux carries ru_maxrss over from the memory the process had before exec, which
# for a child of this (large) process is this process's.
PEAK_PROBE = """
import sys
from orca.sample import sample_main
status = sample_main(["orca", "sample", "--out", sys.argv[1], "--count", "12", "--seconds", "0.25"])
with open("/proc/self/status") as status_file:
    peak = next(line.split()[1] for line in status_file if line.startswith("VmHWM:"))
print(status, "boto3" in sys.modules, peak)
"""
S3_BUDGET_MIB = 64


def probe_peak(python: str, location: str, env: dict[str, str]) -> tuple[float, str, str]:
    """The peak resident MiB of a sampler writing 12 lines to `location`, its exit status and whether it loaded
    boto3."""
    proc = subprocess.Popen([python, "-c", PEAK_PROBE, location], env=env, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    status, boto3_loaded, peak_kib = proc.stdout.read().split()
    proc.wait()
    return int(peak_kib) / 1024, status.decode(), boto3_loaded.decode()


def peak_rss(stage_mib: int, python: str) -> None:
    """Peak resident memory of a sampler whose s3:// staging file already holds `stage_mib` MiB (a restarted
    sampler: its first upload is the whole file), uploading every 0.5 s while it writes 12 lines; beside it, the same
    sampler writing to a file, and to s3:// with an empty staging file."""
    with tempfile.TemporaryDirectory() as tmp_name, server_environment(Path(tmp_name)) as server:
        bucket = server.new_bucket()
        env = dict(os.environ) | {"ORCA_SAMPLE_UPLOAD_SECONDS": "0.5"}
        line = real_line()
        for label, stage_bytes in ((f"a {stage_mib} MiB staging file", stage_mib * 2**20), ("a new staging file", 0)):
            location = f"s3://{bucket}/peak-{stage_bytes}.jsonl"
            stage = Path(stage_of(location))
            stage.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            stage.write_bytes(line * (stage_bytes // len(line)))
            peak, status, loaded = probe_peak(python, location, env)
            same = server.read(bucket, f"peak-{stage_bytes}.jsonl") == stage.read_bytes()
            print(f"| peak resident memory, --out s3:// with {label} | {peak:.1f} MiB | <= {S3_BUDGET_MIB} MiB | "
                  f"{'ok' if peak <= S3_BUDGET_MIB else 'OVER'} | exit {status}, boto3 loaded: {loaded}, object "
                  f"equals the staging file: {same} |", flush=True)
        peak, status, loaded = probe_peak(python, str(Path(tmp_name) / "lines.jsonl"), env)
        print(f"| peak resident memory, --out FILE, the same sampler | {peak:.1f} MiB | <= 25 MiB | "
              f"{'ok' if peak <= 25 else 'OVER'} | exit {status}, boto3 loaded: {loaded} |", flush=True)


def s3_sampler_peak() -> float:
    """For bench/run.py: the peak resident MiB of a sampler writing 12 lines to s3:// with an upload every 0.5 s."""
    with tempfile.TemporaryDirectory() as tmp_name, server_environment(Path(tmp_name)) as server:
        bucket = server.new_bucket()
        peak, _, _ = probe_peak(
            sys.executable, f"s3://{bucket}/peak.jsonl", dict(os.environ) | {"ORCA_SAMPLE_UPLOAD_SECONDS": "0.5"}
        )
        return peak


METRICS_PEAK_PROBE = """
import resource, sys
from orca.sample.readback.shell.cli.metrics import metrics_main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    status = metrics_main(["--json", sys.argv[1]])
print(status, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def fleet(objects: int, delay: float, repeats: int) -> None:
    """`orca metrics` over a prefix of `objects` instance objects of 120 real lines each, behind a proxy adding
    `delay` s to every request: the fetch of every object's bytes one by one against `FETCHES` at once (medians of
    `repeats`, interleaved), the whole command's wall time, and its peak memory beside the same over a tenth of the
    objects."""
    from tests.s3.proxy import FaultProxy

    from bench.population import python_with_its_own_peak

    line = real_line()
    with tempfile.TemporaryDirectory() as tmp_name, server_environment(Path(tmp_name)) as server:
        bucket = server.new_bucket()
        client = server.client()
        for index in range(objects):
            key = f"fleet/metrics/worker-{index:03}.jsonl"
            client.put_object(Bucket=bucket, Key=key, Body=line * 120)
        proxy = FaultProxy(server.url, delay_seconds=delay)
        os.environ["AWS_ENDPOINT_URL"] = proxy.url
        try:
            location = f"s3://{bucket}/fleet/"
            timings: dict[int, list[float]] = {1: [], FETCHES: []}
            for _ in range(repeats):
                for fetches in timings:
                    started = time.perf_counter()
                    total = sum(len(chunk) for _, _, chunks in object_chunks(location, READ_BYTES, fetches)
                                for chunk in chunks())
                    timings[fetches].append(time.perf_counter() - started)
                    assert total == objects * 120 * len(line)
            one, many = (statistics.median(timings[fetches]) for fetches in (1, FETCHES))
            print(f"| {objects} objects of {120 * len(line) / 1024:.0f} KiB, {delay * 1e3:.0f} ms per request | "
                  f"one by one {one:.2f} s | {FETCHES} at once {many:.2f} s | {one / many:.1f}x faster |", flush=True)
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", "--json", location],
                                  capture_output=True, text=True, check=True)
            wall = time.perf_counter() - started
            assert len(json.loads(done.stdout)["rows"]) == objects  # a fleet: one object, a row per instance
            peaks = {}
            for prefix, count in (("fleet/", objects), ("fleet/metrics/worker-00", min(objects, 10))):
                probe = python_with_its_own_peak(METRICS_PEAK_PROBE, f"s3://{bucket}/{prefix}")
                peaks[count] = int(probe.stdout.split()[-1]) / 1024
            print(f"| orca metrics --json over the {objects} objects | {wall:.2f} s wall | peak {peaks[objects]:.1f} "
                  f"MiB | over {min(objects, 10)} of them: {peaks[min(objects, 10)]:.1f} MiB |", flush=True)
        finally:
            del os.environ["AWS_ENDPOINT_URL"]
            proxy.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hours", default="1,24,48", help="simulated run lengths, comma-separated")
    parser.add_argument("--every", type=int, default=48, help="from 24 h, time every N-th whole-file round")
    parser.add_argument("--stage-mib", type=int, default=30, help="the staging file's size for the memory figure")
    parser.add_argument("--python", default=sys.executable, help="the interpreter (and so the checkout) of the "
                        "sampler whose memory is measured, e.g. another worktree's .venv/bin/python")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-uploads", action="store_true")
    parser.add_argument("--skip-fleet", action="store_true")
    parser.add_argument("--objects", type=int, default=200, help="the fleet's instance objects")
    parser.add_argument("--delay", type=float, default=0.05, help="seconds the proxy adds to each request")
    parser.add_argument("--repeats", type=int, default=3, help="fetches of the fleet each way; the median is printed")
    args: Any = parser.parse_args(argv)
    if not args.skip_uploads:
        upload_costs([float(hours) for hours in args.hours.split(",")], max(1, args.every))
    if not args.skip_memory:
        peak_rss(args.stage_mib, args.python)
    if not args.skip_fleet:
        fleet(args.objects, args.delay, max(1, args.repeats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
