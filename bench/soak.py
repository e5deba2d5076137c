"""A soak: `orca sample` run as a user runs it, at an accelerated interval, while the store fails, the sampler is
killed and restarted, `--keep` rewrites the file under a reader, the run's processes churn, the staging file system
fills and the wall clock steps. It checks, every few minutes and at the end, that nothing was lost or torn, that
the objects equal their staging files, and that the sampler's memory, descriptors and CPU per line stay flat.

    python -m bench.soak --minutes 120 --seconds 0.05 --report soak.md

What runs (each started in a process group of its own, ended by its id in a `finally` and on SIGTERM, SIGINT or
SIGHUP to the harness):
- moto's S3 server on 127.0.0.1 behind the tests' fault proxy (in a thread of this process);
- two run processes that fork short-lived children: one sampled by `--pid`, one found by `--match` (its argv[0]);
- sampler A: `--out s3://BUCKET/appended.jsonl --pid --match`, its staging directory on a small tmpfs of its own
  (mounted by the harness as root; without root that fault is skipped, and said so). A is killed and restarted;
- sampler B: `--out s3://BUCKET/kept.jsonl --keep N --pid --match`, never restarted: the subject of the memory,
  descriptor and CPU-per-line slopes, its staging file read all along by `orca metrics` and `read_newest_minute`;
- sampler C, a few times: `orca sample -- COMMAND` of a command that forks and burns CPU, whose lines' integrated
  run CPU is held against `wait4`'s.

The schedule (printed at the start) repeats one cycle of faults, each once: 503s, reset connections, stalled
answers, A SIGKILLed and restarted, A SIGTERMed during an upload, a burst of churn, the staging file system full,
lines whose `t` steps fed to the reader, a `wait4` run. The store heals between faults.

Lost lines are found without timing: within one sampler (one `start`), a line's `t` minus the previous line's `t`
equals its own `dt` (both from the same readings, rounded to 3 decimals), so a line missing between two shows as a
step larger than `dt`. Only the full file system may drop lines; each such drop and each restart is said once on
standard error.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import itertools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.moto_server import MotoServer, aws_environment
from tests.s3.proxy import FaultProxy, Seen

ORCA = str(Path(sys.executable).with_name("orca"))
PYTHON = sys.executable
MATCH_ARGV0 = "soak-match"
STEP_TOLERANCE = 0.004
"""`t`, the previous `t` and `dt` are each rounded to 3 decimals: a step off `dt` by more than this is a lost line."""

# A run process: forks children that burn a little CPU and exit, `rate` a second, ten times as many while
# SIGUSR1 has switched a burst on (SIGUSR2 off); writes how many it forked to `count_file` every hundred and at
# SIGTERM.
CHURN = r"""
import os, signal, sys, time
rate, count_file = float(sys.argv[1]), sys.argv[2]
state = {"burst": False, "n": 0}
def save():
    with open(count_file + ".tmp", "w") as f:
        f.write(str(state["n"]))
    os.replace(count_file + ".tmp", count_file)
def end(*_):
    save()
    os._exit(0)
signal.signal(signal.SIGUSR1, lambda *_: state.update(burst=True))
signal.signal(signal.SIGUSR2, lambda *_: state.update(burst=False))
signal.signal(signal.SIGTERM, end)
while True:
    pid = os.fork()
    if pid == 0:
        sum(i * i for i in range(2000))
        os._exit(0)
    state["n"] += 1
    if state["n"] % 100 == 0:
        save()
    while True:
        try:
            done, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if done == 0:
            break
    time.sleep(1 / (rate * (10 if state["burst"] else 1)))
"""

# The command of a `wait4` run: 200 children each burning a little, then the parent burning about a second.
WAIT4_COMMAND = r"""
import os
for _ in range(200):
    if os.fork() == 0:
        sum(i * i for i in range(20000))
        os._exit(0)
    os.wait()
sum(i * i for i in range(3_000_000))
"""


def _die_with_parent() -> None:
    # Linux: a child gets SIGKILL if the harness dies without its `finally` (SIGKILL to the harness); its own
    # session makes its group (its children included) one id to end.
    os.setsid()
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@dataclass
class Config:
    minutes: float
    seconds: float
    """The samplers' interval."""
    cycle_seconds: float
    """One cycle of the schedule: each fault once."""
    fault_seconds: float
    """How long a store fault or a full file system lasts."""
    check_seconds: float
    """Checks and intermediate figures this often."""
    upload_seconds: float
    keep: int
    churn_rate: float
    stage_mib: int
    warm_up_seconds: float
    read_seconds: float
    """The reader reads B's file this often."""
    work: Path
    report: Path | None


@dataclass
class Sampler:
    name: str
    argv: list[str]
    env: dict[str, str]
    stage: Path
    key: str
    stderr: Path
    process: subprocess.Popen[bytes] | None = None
    started: int = 0

    def start(self, started: Callable[[int], None]) -> None:
        with self.stderr.open("ab") as err:
            self.process = subprocess.Popen(
                self.argv, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                preexec_fn=_die_with_parent,
            )
        self.started += 1
        started(self.process.pid)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid


@dataclass
class Probe:
    at: float
    """Seconds since the soak started."""
    rss_kib: int
    fds: int
    """Its descriptors but those of processes' files in /proc, which it keeps for each process it reads (up to
    a bound), so that they rise and fall with the run's processes."""
    proc_fds: int
    cpu_seconds: float
    lines: int
    """Lines B wrote so far (counted from its `t`s, as `--keep` rewrites the file)."""
    machine_procs: int
    """Processes on the machine: `--match` reads each one's `comm` every line, so CPU per line follows them (on a
    shared machine, other work's too)."""


@dataclass
class Window:
    """Wall-clock seconds in which lines may be dropped (a full file system) or a sampler is absent (a restart)."""

    kind: str
    start: float
    end: float


@dataclass
class Findings:
    faults: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    torn: int = 0
    lost: int = 0
    dropped_full: int = 0
    t_off: int = 0
    """Lines whose `t` was off the moment their `dt` counts to by more than `STEP_TOLERANCE`."""
    t_off_max: float = 0.0
    restarts_gap_max: float = 0.0
    late_max: float = 0.0
    reader_runs: int = 0
    reader_failures: int = 0
    keep_rewrites: int = 0
    churned: int = 0
    wait4: list[tuple[float, float]] = field(default_factory=list)
    duckdb_checks: int = 0
    clock_steps: int = 0
    object_checks: int = 0
    skipped: list[str] = field(default_factory=list)

    def fail(self, what: str) -> None:
        self.failures.append(what)
        print(f"soak: FAIL {what}", file=sys.stderr, flush=True)

    def say(self, what: str) -> None:
        self.said.append(what)
        print(f"soak: {what}", file=sys.stderr, flush=True)

    def count(self, fault: str) -> None:
        self.faults[fault] = self.faults.get(fault, 0) + 1


def slope_per_hour(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of (seconds, value), per hour; 0 with fewer than 3 points."""
    if len(points) < 3:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx * 3600


class LineCheck:
    """Reads an append-only file as it grows: every line whole and parsing, and no line lost within a sampler.

    A line whose `t` steps by other than its `dt` is judged with the next one: when the next steps the other way by
    as much, that `t` was off its readings' moment (the clocks read apart), not a line lost."""

    def __init__(self, path: Path, findings: Findings, name: str, excused: Callable[[float, float], str | None]):
        self.path, self.findings, self.name, self.excused = path, findings, name, excused
        self.offset = 0
        self.lines = 0
        self.previous: dict[str, Any] | None = None
        self.pending: tuple[float, float, float, float] | None = None
        """An off step waiting for the next line: (step - dt, previous t, t, dt)."""

    def advance(self) -> None:
        try:
            with self.path.open("rb") as file:
                file.seek(self.offset)
                data = file.read()
        except FileNotFoundError:
            return
        whole = data[: data.rfind(b"\n") + 1]
        for raw in whole.splitlines(keepends=True):
            self._line(raw)
        self.offset += len(whole)

    def close(self) -> None:
        """The file's end: an off step still waiting is judged alone."""
        self._judge()

    def _judge(self) -> None:
        if self.pending is None:
            return
        off, before, after, dt = self.pending
        self.pending = None
        why = self.excused(before, after)
        if why == "full" and off > 0:
            self.findings.dropped_full += 1
            self.findings.say(f"{self.name}: lines dropped from t={before:.3f} to {after:.3f} "
                              f"({after - before:.3f} s) while its file system was full")
        else:
            self.findings.lost += 1
            self.findings.fail(f"{self.name}: a line lost between t={before:.3f} and {after:.3f}: "
                               f"step {after - before:.3f} s, dt {dt:.3f} s")

    def _line(self, raw: bytes) -> None:
        try:
            line = json.loads(raw)
            t, dt, start = float(line["t"]), float(line["dt"]), float(line["start"])
        except (ValueError, KeyError, TypeError):
            self.findings.torn += 1
            self.findings.fail(f"{self.name}: line {self.lines + 1} is torn or does not parse: {raw[:120]!r}")
            return
        self.lines += 1
        previous = self.previous
        if previous is not None and previous["start"] == start:
            off = (t - previous["t"]) - dt
            self.findings.late_max = max(self.findings.late_max, dt)
            if self.pending is not None and abs(self.pending[0] + off) <= STEP_TOLERANCE:
                self.findings.t_off += 1
                self.findings.t_off_max = max(self.findings.t_off_max, abs(off))
                self.findings.fail(f"{self.name}: t={previous['t']:.3f} is {self.pending[0] * 1000:+.0f} ms off "
                                   "the moment its dt counts to (the next line's step makes up for it)")
                self.pending = None
            else:
                self._judge()
                if abs(off) > STEP_TOLERANCE:
                    self.pending = (off, previous["t"], t, dt)
        elif previous is not None:
            self._judge()
            gap = t - previous["t"]
            self.findings.restarts_gap_max = max(self.findings.restarts_gap_max, gap)
            why = self.excused(previous["t"], t)
            if why is None:
                self.findings.fail(f"{self.name}: a new sampler's lines at t={t:.3f} without a restart there")
            else:
                self.findings.say(f"{self.name}: {gap:.3f} s without lines around a restart at t={previous['t']:.3f}")
        self.previous = {"t": t, "start": start}


class Soak:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.findings = Findings()
        self.windows: list[Window] = []
        self.windows_lock = threading.Lock()
        self.probes: list[Probe] = []
        self.groups: list[subprocess.Popen[bytes]] = []
        self.server: MotoServer | None = None
        self.proxy: FaultProxy | None = None
        self.mount: Path | None = None
        self.stop_event = threading.Event()
        self.began = time.monotonic()
        self.began_wall = time.time()
        self.schedule = self._schedule()

    # -- the schedule -------------------------------------------------------------------------------------------
    def _schedule(self) -> list[tuple[float, str]]:
        faults = ["503", "reset", "stall", "kill", "wait4", "term", "churn", "full", "clock"]
        step = self.config.cycle_seconds / len(faults)
        plan: list[tuple[float, str]] = []
        cycle = 0
        end = self.config.minutes * 60
        while True:
            for index, fault in enumerate(faults):
                at = self.config.warm_up_seconds + cycle * self.config.cycle_seconds + index * step
                if at + self.config.fault_seconds > end:
                    return plan
                plan.append((at, fault))
            cycle += 1

    def print_schedule(self) -> None:
        c = self.config
        print(f"soak: {c.minutes:g} min, lines every {c.seconds:g} s, uploads every {c.upload_seconds:g} s, "
              f"--keep {c.keep}, churn {c.churn_rate:g}/s per run process, checks every {c.check_seconds:g} s; "
              f"work in {c.work}", file=sys.stderr)
        cycles = max(1, len(self.schedule) // 9)
        print(f"soak: schedule ({len(self.schedule)} faults, {cycles} cycle(s) of {c.cycle_seconds:g} s, "
              f"each store fault and the full file system lasting {c.fault_seconds:g} s):", file=sys.stderr)
        for at, fault in self.schedule[:9]:
            print(f"  +{at:7.1f} s  {DESCRIBE[fault]}", file=sys.stderr)
        if len(self.schedule) > 9:
            print(f"  ... then every {c.cycle_seconds:g} s again", file=sys.stderr)
        sys.stderr.flush()

    # -- starting -----------------------------------------------------------------------------------------------
    def _spawn(self, argv: list[str], env: dict[str, str] | None = None,
               executable: str | None = None) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(argv, executable=executable, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        self.groups.append(process)
        self.record_pid(process.pid)
        return process

    def record_pid(self, pid: int) -> None:
        """Every process the harness starts, in `pids` of its work directory: what a test checks is gone."""
        with (self.config.work / "pids").open("a") as pids:
            pids.write(f"{pid}\n")

    def start(self) -> None:
        work = self.config.work
        work.mkdir(parents=True, exist_ok=True)
        self.server = MotoServer(work)
        self.server.start()
        self.record_pid(self.server.pid)
        self.bucket = self.server.new_bucket()
        self.proxy = FaultProxy(self.server.url)
        self.stage_a = work / "stage-a"
        self.stage_a.mkdir(exist_ok=True)
        self._mount(self.stage_a)
        self.churn_pid = self._spawn([PYTHON, "-c", CHURN, str(self.config.churn_rate), str(work / "churn-pid.count")])
        self.churn_match = self._spawn([MATCH_ARGV0, "-c", CHURN, str(self.config.churn_rate),
                                        str(work / "churn-match.count")], executable=PYTHON)
        common = ["--seconds", str(self.config.seconds), "--pid", str(self.churn_pid.pid), "--match", MATCH_ARGV0]
        base = aws_environment(dict(os.environ), self.proxy.url, work)
        base["ORCA_SAMPLE_UPLOAD_SECONDS"] = str(self.config.upload_seconds)
        self.a = Sampler("A", [ORCA, "sample", "--out", f"s3://{self.bucket}/appended.jsonl", *common],
                         base | {"ORCA_LOG_STAGE": str(self.stage_a)}, self.stage_a / self.bucket / "appended.jsonl",
                         "appended.jsonl", work / "sampler-a.stderr")
        self.b = Sampler("B", [ORCA, "sample", "--out", f"s3://{self.bucket}/kept.jsonl", "--keep",
                               str(self.config.keep), *common],
                         base | {"ORCA_LOG_STAGE": str(work / "stage-b")},
                         work / "stage-b" / self.bucket / "kept.jsonl",
                         "kept.jsonl", work / "sampler-b.stderr")
        self.a.start(self.record_pid)
        self.b.start(self.record_pid)
        self.check_a = LineCheck(self.a.stage, self.findings, "A", self.excused)

    def _mount(self, where: Path) -> None:
        if os.geteuid() != 0:
            self.findings.skipped.append("full file system: not root, so no tmpfs of its own")
            return
        size = f"size={self.config.stage_mib}m"
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"{size},mode=0700", "soak-stage", str(where)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            self.findings.skipped.append(f"full file system: mount failed: {done.stderr.strip()}")
            return
        self.mount = where

    # -- ending -------------------------------------------------------------------------------------------------
    def end_all(self) -> None:
        """Everything started, ended by its id: the samplers' and run processes' groups, moto, the proxy, the
        mount. Safe to call twice."""
        self.stop_event.set()
        for sampler in (getattr(self, "a", None), getattr(self, "b", None)):
            if sampler is not None and sampler.process is not None and sampler.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(sampler.pid, signal.SIGKILL)
                sampler.process.wait()
        for process in self.groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                process.wait(timeout=10)
        if self.proxy is not None:
            self.proxy.stop()
            self.proxy = None
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.mount is not None:
            subprocess.run(["umount", "-l", str(self.mount)], check=False, capture_output=True)
            self.mount = None

    # -- windows in which a gap is expected ---------------------------------------------------------------------
    def open_window(self, kind: str) -> Window:
        window = Window(kind, time.time(), float("inf"))
        with self.windows_lock:
            self.windows.append(window)
        return window

    def close_window(self, window: Window) -> None:
        window.end = time.time() + 2 * self.config.seconds + 1.0

    def excused(self, before: float, after: float) -> str | None:
        with self.windows_lock:
            for window in self.windows:
                if before <= window.end and after >= window.start:
                    return window.kind
        return None

    # -- faults -------------------------------------------------------------------------------------------------
    def fault(self, name: str) -> None:
        assert self.proxy is not None
        proxy = self.proxy
        d = self.config.fault_seconds
        every: Callable[[Seen], bool] = lambda _: True  # noqa: E731
        if name == "503":
            hit = proxy.answer(every, 503, "SlowDown", times=None)
            self._sleep(d)
            proxy.heal()
            self._fired(name, hit.hits)
        elif name == "reset":
            hit = proxy.drop(every, times=None)
            self._sleep(d)
            proxy.heal()
            self._fired(name, hit.hits)
        elif name == "stall":
            hit = proxy.stall(every, after=0, seconds=min(d, 15.0), times=None)
            self._sleep(d)
            proxy.heal()
            self._fired(name, hit.hits)
        elif name == "kill":
            window = self.open_window("restart")
            assert self.a.process is not None
            os.kill(self.a.pid, signal.SIGKILL)
            self.a.process.wait()
            self._sleep(1.0)
            self.a.start(self.record_pid)
            self._await_lines(self.a.stage)
            self.close_window(window)
            self._fired(name, 1)
        elif name == "term":
            self._term_during_upload()
        elif name == "churn":
            for run in (self.churn_pid, self.churn_match):
                os.kill(run.pid, signal.SIGUSR1)
            self._sleep(d)
            for run in (self.churn_pid, self.churn_match):
                os.kill(run.pid, signal.SIGUSR2)
            self._fired(name, 1)
        elif name == "full":
            self._fill()
        elif name == "clock":
            self._clock_step()
        elif name == "wait4":
            self._wait4_run()

    def _fired(self, name: str, hits: int) -> None:
        if hits:
            self.findings.count(name)
        else:
            self.findings.fail(f"the fault {name} never fired (no request reached it)")

    def _sleep(self, seconds: float) -> None:
        if self.stop_event.wait(seconds):
            raise Interrupted

    def _await_lines(self, stage: Path) -> None:
        size = stage.stat().st_size if stage.exists() else 0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if stage.exists() and stage.stat().st_size > size:
                return
            self._sleep(0.1)

    def _term_during_upload(self) -> None:
        assert self.proxy is not None and self.a.process is not None
        key = "/" + self.bucket + "/" + self.a.key
        held = self.proxy.delay(lambda seen: seen.method in ("PUT", "POST") and seen.path == key,
                                seconds=2.0, times=1)
        deadline = time.monotonic() + 10 * self.config.upload_seconds + 30
        while held.hits == 0 and time.monotonic() < deadline:
            self._sleep(0.05)
        if held.hits == 0:
            self.proxy.heal()
            self.findings.fail("SIGTERM during an upload: no upload of A's came")
            return
        window = self.open_window("restart")
        self._sleep(0.3)
        since = _size(self.a.stderr)
        os.kill(self.a.pid, signal.SIGTERM)
        try:
            code = self.a.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.findings.fail("A did not exit within 60 s of SIGTERM")
            os.killpg(self.a.pid, signal.SIGKILL)
            code = self.a.process.wait()
        if code != 0:
            self.findings.fail(f"A exited {code} at SIGTERM")
        self.proxy.heal()
        self.object_against_file(self.a, final=True, since=since)
        self.a.start(self.record_pid)
        self._await_lines(self.a.stage)
        self.close_window(window)
        self.findings.count("term")

    def _fill(self) -> None:
        if self.mount is None:
            return
        window = self.open_window("full")
        filler = self.mount / "filler"
        try:
            with filler.open("wb", buffering=0) as file:
                # Down to the last bytes, so that not even a line fits.
                for chunk in (1 << 20, 4096, 64):
                    with contextlib.suppress(OSError):
                        while True:
                            file.write(b"\0" * chunk)
            self.findings.count("full")
            self._sleep(self.config.fault_seconds)
        finally:
            filler.unlink(missing_ok=True)
            self.close_window(window)

    def _clock_step(self) -> None:
        """A's newest lines with their `t` stepped back an hour in the middle and forward a day in the last third,
        read by `orca metrics` and `read_newest_minute`; the reader must keep every line and agree with DuckDB."""
        from orca.sample import read_newest_minute

        raw = _tail_lines(self.a.stage, 3000)
        if len(raw) < 30:
            return
        lines = [json.loads(r) for r in raw]
        third = len(lines) // 3
        for index, line in enumerate(lines):
            if third <= index < 2 * third:
                line["t"] = round(line["t"] - 3600, 3)
            elif index >= 2 * third:
                line["t"] = round(line["t"] + 86400, 3)
        stepped = self.config.work / "stepped.jsonl"
        stepped.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
        self.reader_equals_duckdb(stepped, "stepped clock")
        newest = read_newest_minute(str(stepped))
        if newest is None or abs(newest.t - lines[-1]["t"]) > 0.001:
            self.findings.fail(f"stepped clock: read_newest_minute gave {newest and newest.t}, "
                               f"the newest line's t is {lines[-1]['t']}")
        self.findings.count("clock")
        self.findings.clock_steps += 1

    def _wait4_run(self) -> None:
        out = self.config.work / f"wait4-{len(self.findings.wait4)}.jsonl"
        done = self.run_ended([ORCA, "sample", "--out", str(out), "--seconds", str(self.config.seconds), "--",
                               PYTHON, "-c", WAIT4_COMMAND])
        if done.returncode != 0:
            self.findings.fail(f"the wait4 run exited {done.returncode}: {done.stderr[-300:]}")
            return
        lines = [json.loads(r) for r in out.read_bytes().splitlines()]
        integrated = sum(line["run"]["cpu"] / 100 * line["cores"] * line["dt"]
                         for line in lines if line.get("run", {}).get("cpu") is not None)
        exit_ = lines[-1]["run"].get("exit", {})
        waited = float(exit_.get("user", 0)) + float(exit_.get("system", 0))
        self.findings.wait4.append((integrated, waited))
        # Per line, `run.cpu` is rounded to 0.1 % of all cores; over the lines that is far below this bound.
        if abs(integrated - waited) > 0.05 * waited + 0.05 * len(lines) * self.config.seconds + 0.05:
            self.findings.fail(f"wait4 run: lines integrate to {integrated:.2f} CPU-s, wait4 says {waited:.2f}")
        self.findings.count("wait4")

    # -- checks -------------------------------------------------------------------------------------------------
    def object_against_file(self, sampler: Sampler, final: bool, since: int = 0) -> None:
        """After a final upload the object equals the staging file; after a failed one, or at any moment of an
        append-only file, it is a prefix of it. Never anything else."""
        assert self.server is not None
        body = self.server.read(self.bucket, sampler.key) or b""
        data = sampler.stage.read_bytes() if sampler.stage.exists() else b""
        whole = data[: data.rfind(b"\n") + 1]
        self.findings.object_checks += 1
        if body == whole:
            return
        if whole.startswith(body):
            if final and not _said_upload_failed(sampler.stderr, since):
                self.findings.fail(f"{sampler.name}: the object is a prefix of the staging file "
                                   f"({len(body)} of {len(whole)} bytes) after a final upload that said no failure")
            elif final:
                self.findings.say(f"{sampler.name}: the final upload failed, the object is a prefix "
                                  f"({len(body)} of {len(whole)} bytes)")
            return
        self.findings.fail(f"{sampler.name}: the object ({len(body)} bytes) is neither the staging file "
                           f"({len(whole)} bytes) nor a prefix of it")

    def run_ended(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        """`argv` to its end, in a group of its own ended by its id, also when the harness is stopped meanwhile."""
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, preexec_fn=_die_with_parent)
        self.record_pid(process.pid)
        try:
            out, err = process.communicate(timeout=600)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    def reader_equals_duckdb(self, path: Path, what: str) -> None:
        """`orca metrics --json` against DuckDB over the same file, run by run: lines, first and last `t`, the
        peaks of `mem.used` and `mem.rss`, the sampler's CPU."""
        import duckdb

        done = self.run_ended([ORCA, "metrics", "--json", str(path)])
        if done.returncode != 0:
            self.findings.fail(f"{what}: orca metrics exited {done.returncode}: {done.stderr[-300:]}")
            return
        text = done.stdout.strip()
        documents = [json.loads(r) for r in text.splitlines()]
        # A file of several runs is a table whose rows carry each run's summary (docs/metrics.md); one run, its own.
        runs = [row["summary"] for d in documents for row in d["rows"]] if "rows" in documents[0] else documents
        ours = {round(r["start"], 3): (r["lines"], r["first_t"], r["last_t"], r["memory"]["used_peak"],
                                       r["memory"]["rss_peak"], r["self_cpu_seconds"]) for r in runs}
        con = duckdb.connect()
        quoted = str(path).replace("'", "''")
        # In the file's order, as the reader takes a run's first and last lines (a stepped clock makes them
        # other than the least and largest `t`): one thread keeps the rows in order.
        con.execute("SET threads = 1")
        rows = con.execute(
            "SELECT round(start, 3), count(*), arg_min(t, n), arg_max(t, n), max(mem.used), max(mem.rss), "
            "max(self_cpu) FROM (SELECT *, row_number() OVER () AS n "
            f"FROM read_ndjson('{quoted}', columns={{start: 'DOUBLE', t: 'DOUBLE', self_cpu: 'DOUBLE', "
            "mem: 'STRUCT(used BIGINT, rss BIGINT)'})) GROUP BY 1").fetchall()
        con.close()
        theirs = {round(row[0], 3): (row[1], row[2], row[3], row[4], row[5], row[6]) for row in rows}
        self.findings.duckdb_checks += 1
        if set(ours) != set(theirs):
            self.findings.fail(f"{what}: orca metrics found runs {sorted(ours)}, DuckDB {sorted(theirs)}")
            return
        for start, figures in ours.items():
            other = theirs[start]
            if figures[0] != other[0] or any(abs(a - b) > 0.0011 for a, b in zip(figures[1:], other[1:], strict=True)
                                             if a is not None and b is not None):
                self.findings.fail(f"{what}: run {start}: orca metrics {figures}, DuckDB {other}")

    def probe(self) -> None:
        """B's resident memory, descriptors and CPU; its lines counted from the `t`s of its kept file."""
        pid = self.b.pid
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            links = []
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    links.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return
        rss = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
        proc_fds = sum(1 for link in links if link.startswith("/proc/") and not link.startswith(f"/proc/{pid}/"))
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        newest = self._b_newest
        count = self._b_lines
        for raw in _tail_lines(self.b.stage, self.config.keep):
            with contextlib.suppress(ValueError, KeyError):
                t = float(json.loads(raw)["t"])
                if t > newest:
                    newest, count = t, count + 1
        self._b_newest, self._b_lines = newest, count
        machine = sum(1 for name in os.listdir("/proc") if name.isdigit())
        probe = Probe(time.monotonic() - self.began, rss, len(links) - proc_fds, proc_fds, cpu, count, machine)
        self.probes.append(probe)
        with (self.config.work / "probes.csv").open("a") as csv:
            csv.write(f"{probe.at:.1f},{probe.rss_kib},{probe.fds},{probe.proc_fds},{probe.cpu_seconds:.2f},"
                      f"{probe.lines},{probe.machine_procs}\n")

    def probe_loop(self) -> None:
        while not self.stop_event.wait(2.0):
            self.probe()

    _b_newest = 0.0
    _b_lines = 0

    def reader_loop(self) -> None:
        """`orca metrics` and `read_newest_minute` read B's file all along, as `--keep` rewrites it."""
        from orca.sample import read_newest_minute

        inode = 0
        while not self.stop_event.wait(self.config.read_seconds):
            with contextlib.suppress(FileNotFoundError):
                now = self.b.stage.stat().st_ino
                if inode and now != inode:
                    self.findings.keep_rewrites += 1
                inode = now
            if not self.b.stage.exists():
                continue
            done = self.run_ended([ORCA, "metrics", str(self.b.stage)])
            newest = read_newest_minute(str(self.b.stage))
            self.findings.reader_runs += 1
            if done.returncode != 0 or newest is None:
                self.findings.reader_failures += 1
                self.findings.fail(f"the reader of B's file: orca metrics exited {done.returncode} "
                                   f"({done.stderr[-200:]}), read_newest_minute gave {newest}")

    def checkpoint(self, final: bool = False) -> None:
        self.check_a.advance()
        self.findings.lines["A"] = self.check_a.lines
        if not final:
            self.object_against_file(self.a, final=False)
        snapshot = self.config.work / "kept-snapshot.jsonl"
        with contextlib.suppress(FileNotFoundError):
            shutil.copyfile(self.b.stage, snapshot)
            for raw in snapshot.read_bytes().splitlines(keepends=True):
                try:
                    json.loads(raw)
                    if not raw.endswith(b"\n"):
                        raise ValueError
                except ValueError:
                    self.findings.torn += 1
                    self.findings.fail(f"B: a torn line in its kept file: {raw[:120]!r}")
            self.reader_equals_duckdb(snapshot, "B's kept file")
        self.findings.churned = sum(_count(self.config.work / f"churn-{n}.count") for n in ("pid", "match"))
        if self.config.report is not None:
            self.config.report.write_text(self.figures(final))

    # -- figures ------------------------------------------------------------------------------------------------
    def slopes(self) -> dict[str, Any]:
        warm = [p for p in self.probes if p.at >= self.config.warm_up_seconds]
        per_line = []
        for before, after in itertools.pairwise(warm):
            if after.lines > before.lines:
                per_line.append((after.at, (after.cpu_seconds - before.cpu_seconds) / (after.lines - before.lines)))
        half = max(1, len(per_line) // 10)
        procs = [p.machine_procs for p in warm]
        tenth = max(1, len(procs) // 10)
        return {
            "rss": (warm[0].rss_kib, warm[-1].rss_kib, slope_per_hour([(p.at, p.rss_kib) for p in warm]))
            if warm else None,
            "fds": (warm[0].fds, warm[-1].fds, slope_per_hour([(p.at, p.fds) for p in warm])) if warm else None,
            "proc_fds": max(p.proc_fds for p in warm) if warm else 0,
            "cpu_per_line_ms": (
                statistics.fmean(v for _, v in per_line[:half]) * 1000,
                statistics.fmean(v for _, v in per_line[-half:]) * 1000,
                slope_per_hour([(at, v * 1000) for at, v in per_line]),
            ) if per_line else None,
            "b_lines": warm[-1].lines if warm else 0,
            "machine_procs": (statistics.fmean(procs[:tenth]), statistics.fmean(procs[-tenth:]), max(procs))
            if procs else None,
        }

    def figures(self, final: bool) -> str:
        f, c = self.findings, self.config
        elapsed = time.monotonic() - self.began
        s = self.slopes()
        out = [f"### The soak ({'final' if final else 'intermediate'}, after {elapsed / 60:.1f} of "
               f"{c.minutes:g} minutes)", "",
               "```", f"python -m bench.soak --minutes {c.minutes:g} --seconds {c.seconds:g} "
               f"--cycle {c.cycle_seconds:g} --fault {c.fault_seconds:g} --upload {c.upload_seconds:g} "
               f"--keep {c.keep} --churn {c.churn_rate:g} --check {c.check_seconds:g} --warm-up {c.warm_up_seconds:g} "
               f"--read {c.read_seconds:g}", "```", "",
               "| figure | value |", "| --- | --- |",
               f"| lines written | A (appended, restarted): {f.lines.get('A', 0)}; B (`--keep {c.keep}`): "
               f"{s['b_lines']} |",
               f"| lines lost / torn | {f.lost} / {f.torn} |",
               f"| lines whose `t` was off their `dt` (most) | {f.t_off} ({f.t_off_max * 1000:.0f} ms) |",
               f"| lines dropped while the file system was full | {f.dropped_full} gap(s) |",
               "| faults thrown | " + ", ".join(f"{k} {v}" for k, v in sorted(f.faults.items())) + " |",
               f"| children forked by the run processes | {f.churned} |",
               f"| `--keep` rewrites seen by the reader; reader runs (failures) | {f.keep_rewrites}; "
               f"{f.reader_runs} ({f.reader_failures}) |",
               f"| objects checked against staging files | {f.object_checks} |",
               f"| reader against DuckDB | {f.duckdb_checks} files |",
               f"| longest `dt`; longest gap at a restart | {f.late_max:.3f} s; {f.restarts_gap_max:.3f} s |"]
        if f.wait4:
            worst = max(f.wait4, key=lambda pair: abs(pair[0] - pair[1]))
            out.append(f"| `wait4` runs: lines' CPU against `wait4` (worst) | {len(f.wait4)}: "
                       f"{worst[0]:.2f} s against {worst[1]:.2f} s |")
        if s["rss"]:
            out.append(f"| B's RSS after warm-up, at the end; slope | {s['rss'][0]} KiB, {s['rss'][1]} KiB; "
                       f"{s['rss'][2]:+.0f} KiB/hour |")
            out.append(f"| B's descriptors (but kept /proc files) after warm-up, at the end; slope | "
                       f"{s['fds'][0]}, {s['fds'][1]}; {s['fds'][2]:+.1f}/hour |")
            out.append(f"| B's kept /proc descriptors, most | {s['proc_fds']} |")
        if s["cpu_per_line_ms"]:
            a, b, slope = s["cpu_per_line_ms"]
            out.append(f"| B's CPU per line, first and last tenth; slope | {a:.3f} ms, {b:.3f} ms; "
                       f"{slope:+.3f} ms/hour |")
        if s["machine_procs"]:
            a, b, most = s["machine_procs"]
            out.append(f"| processes on the machine (`--match` reads each), first and last tenth; most | "
                       f"{a:.0f}, {b:.0f}; {most} |")
        if final:
            out.append(f"| multipart uploads left open | {self.open_uploads} |")
        for skipped in f.skipped:
            out.append(f"| skipped | {skipped} |")
        out.append(f"| failures | {len(f.failures)}{': ' + '; '.join(f.failures[:5]) if f.failures else ''} |")
        return "\n".join(out) + "\n"

    open_uploads = -1

    # -- the whole ----------------------------------------------------------------------------------------------
    def run(self) -> Findings:
        self.print_schedule()
        self.start()
        reader = threading.Thread(target=self.reader_loop, name="soak-reader", daemon=True)
        reader.start()
        prober = threading.Thread(target=self.probe_loop, name="soak-probe", daemon=True)
        prober.start()
        end = self.config.minutes * 60
        next_check = self.config.check_seconds
        plan = list(self.schedule)
        while True:
            now = time.monotonic() - self.began
            if now >= end:
                break
            if now >= next_check:
                self.checkpoint()
                next_check = now + self.config.check_seconds
            if plan and now >= plan[0][0]:
                _, fault = plan.pop(0)
                print(f"soak: +{now:7.1f} s  {fault}", file=sys.stderr, flush=True)
                self.fault(fault)
                continue
            self._sleep(0.2)
        self.probe()
        self.finish()
        self.stop_event.set()
        reader.join(timeout=60)
        prober.join(timeout=60)
        return self.findings

    def finish(self) -> None:
        assert self.proxy is not None and self.server is not None
        self.proxy.heal()
        for sampler in (self.a, self.b):
            assert sampler.process is not None
            since = _size(sampler.stderr)
            os.kill(sampler.pid, signal.SIGTERM)
            try:
                code = sampler.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.findings.fail(f"{sampler.name} did not exit within 60 s of SIGTERM")
                os.killpg(sampler.pid, signal.SIGKILL)
                code = sampler.process.wait()
            if code != 0:
                self.findings.fail(f"{sampler.name} exited {code} at SIGTERM")
            self.object_against_file(sampler, final=True, since=since)
        uploads = self.server.client().list_multipart_uploads(Bucket=self.bucket).get("Uploads", [])
        self.open_uploads = len(uploads)
        if uploads:
            self.findings.fail(f"{len(uploads)} multipart upload(s) left open: {[u['Key'] for u in uploads]}")
        self.reader_equals_duckdb(self.a.stage, "A's appended file")
        fired = set(self.findings.faults)
        planned = {fault for _, fault in self.schedule} - {"full"} if self.mount is None else \
            {fault for _, fault in self.schedule}
        if planned - fired:
            self.findings.fail(f"faults planned that never happened: {sorted(planned - fired)}")
        self.check_a.advance()
        self.check_a.close()
        self.checkpoint(final=True)
        print(self.figures(final=True), flush=True)


DESCRIBE = {
    "503": "the store answers 503 SlowDown to every request",
    "reset": "the store resets every connection",
    "stall": "the store stalls every answer",
    "kill": "sampler A SIGKILLed and started again with the same --out",
    "wait4": "a command sampled to its end: its lines' CPU against wait4",
    "term": "sampler A SIGTERMed during an upload, then started again",
    "churn": "the run processes fork ten times as fast",
    "full": "A's staging file system filled, then emptied",
    "clock": "A's newest lines with t stepped back an hour, then forward a day, read by the reader",
}


class Interrupted(Exception):
    """The harness was told to stop (a signal)."""


def _tail_lines(path: Path, count: int) -> list[bytes]:
    """The last `count` whole lines of `path` (read from its end)."""
    try:
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            block = min(size, count * 4096)
            file.seek(size - block)
            data = file.read()
    except FileNotFoundError:
        return []
    whole = data[: data.rfind(b"\n") + 1].splitlines()
    return whole[1:][-count:] if block < size else whole[-count:]


def _said_upload_failed(stderr: Path, since: int) -> bool:
    """Whether the sampler said, after byte `since` of its standard error, that an upload failed (the final
    upload's message, which the 5 s bound's cut included)."""
    try:
        with stderr.open("rb") as file:
            file.seek(since)
            return b"cannot upload" in file.read()
    except FileNotFoundError:
        return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _count(path: Path) -> int:
    try:
        return int(path.read_text() or 0)
    except (OSError, ValueError):
        return 0


@contextlib.contextmanager
def ended_on_signals(soak: Soak) -> Iterator[None]:
    """SIGTERM, SIGINT and SIGHUP to the harness stop the soak; its `finally` ends everything it started."""
    def stop(signum: int, _frame: object) -> None:
        soak.stop_event.set()
        raise Interrupted(signal.Signals(signum).name)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def soak(config: Config) -> Findings:
    runner = Soak(config)
    try:
        with ended_on_signals(runner):
            return runner.run()
    except Interrupted:
        runner.findings.fail("interrupted")
        if config.report is not None:
            with contextlib.suppress(Exception):
                config.report.write_text(runner.figures(final=False))
        return runner.findings
    finally:
        runner.end_all()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=0.02, help="the samplers' interval")
    parser.add_argument("--cycle", type=float, default=90.0, help="seconds of one cycle of faults")
    parser.add_argument("--fault", type=float, default=6.0, help="seconds a store fault or a full disk lasts")
    parser.add_argument("--check", type=float, default=30.0, help="seconds between checks")
    parser.add_argument("--upload", type=float, default=2.0, help="ORCA_SAMPLE_UPLOAD_SECONDS")
    parser.add_argument("--keep", type=int, default=2000)
    parser.add_argument("--churn", type=float, default=20.0, help="children forked a second per run process")
    parser.add_argument("--stage-mib", type=int, default=0, help="the staging tmpfs (default: from the length)")
    parser.add_argument("--warm-up", type=float, default=20.0)
    parser.add_argument("--read", type=float, default=1.0, help="seconds between the reader's reads of B's file")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--report", type=Path, default=None, help="figures as markdown, rewritten at each check")
    args = parser.parse_args(argv)
    # A line is about 750 bytes with the run's processes: room for twice A's lines, at least 32 MiB.
    stage_mib = args.stage_mib or max(32, int(args.minutes * 60 / args.seconds * 1500 / (1 << 20)) + 16)
    work = args.work or Path(tempfile.mkdtemp(prefix="orca-soak-"))
    config = Config(args.minutes, args.seconds, args.cycle, args.fault, args.check, args.upload, args.keep,
                    args.churn, stage_mib, args.warm_up, args.read, work, args.report)
    findings = soak(config)
    print(f"soak: {'FAILED: ' + str(len(findings.failures)) + ' failure(s)' if findings.failures else 'passed'}",
          file=sys.stderr)
    return 1 if findings.failures else 0


if __name__ == "__main__":
    sys.exit(main())
