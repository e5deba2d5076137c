"""Runs told apart and the run in the summary (docs/behaviour.md §3.2, §3.12, §11.1): lines written by hand from the
line's declarations, every expected figure worked out by hand beside them, read by `orca metrics` as a user runs it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from orca.sample.line_format import RunSample, Sample
from orca.sample.readback.gather.fold import RunFold
from tests.reader.test_metrics_command import no_traceback, orca

GIB = 2**30
FIRST_START = 1796016000.0  # 2026-11-30T05:20:00Z
SECOND_START = 1796019600.0  # 2026-11-30T06:20:00Z, an hour later: the same file, the sampler started again


def line(start: float | None, t: float, dt: float, **sections: Any) -> str:
    document: dict[str, Any] = {"v": 1, "t": t, "dt": dt, "host": "vm", "cores": 4, **sections}
    if start is not None:
        document["start"] = start  # the last key, as the sampler writes it
    return json.dumps(document)


def cpu(busy: float) -> dict[str, float]:
    return {"user": busy, "system": 0.0, "iowait": 0.0, "steal": 0.0, "busiest": busy}


def mem(rss: int) -> dict[str, int]:
    return {"total": 8 * GIB, "used": GIB, "available": 7 * GIB, "cache": 0, "swap_total": 0, "swap_used": 0,
            "rss": rss}


def run_lines(start: float, code: int) -> list[str]:
    """A `-- COMMAND` of three lines at 0.2 s, then 5 s apart, that exits with `code`.

    The run's CPU, in percent of all 4 cores: 10.0, 25.0, 50.0, so 40, 100 and 200 % of one core, over 0.2, 5 and
    5 s: (8 + 500 + 1000) / 10.2 = 147.8 % of one core on average; at most 200.0 %. Processes 1, 3, 2: up to 3.
    """
    return [
        line(start, start + 0.2, 0.2, cpu=cpu(20.0), mem=mem(10 * 2**20),
             run={"cpu": 10.0, "procs": 1, "command": ["python3", "work.py", "--size", "500 MB"]}),
        line(start + 0.0, start + 5.2, 5.0, cpu=cpu(40.0), mem=mem(300 * 2**20), run={"cpu": 25.0, "procs": 3}),
        line(start, start + 10.2, 5.0, cpu=cpu(60.0), mem=mem(200 * 2**20),
             run={"cpu": 50.0, "procs": 2, "exit": {"code": code, "wall": 10.1, "user": 14.25, "system": 0.5,
                                                    "max_rss": 310 * 2**20}}),
    ]


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([*run_lines(FIRST_START, 0), *run_lines(SECOND_START, 3)]) + "\n")
    return path


def blocks(text: str) -> list[str]:
    return text.split("\n\n")


def summaries(stdout: str) -> list[dict[str, Any]]:
    """The runs' summaries of a source's `--json`: its one run's object, or each row's of the table of several."""
    documents = [json.loads(text) for text in stdout.splitlines()]
    if len(documents) == 1 and "rows" in documents[0]:
        return [row["summary"] for row in documents[0]["rows"]]
    return documents


def test_a_file_of_two_runs_is_a_table_of_two_rows(two_runs: Path) -> None:
    """As a fleet's: one row per run, labelled by its start (one host), then the totals and who stands out."""
    done = orca("metrics", str(two_runs))
    assert done.returncode == 0, done.stderr
    table, stand_out = blocks(done.stdout)
    assert stand_out.startswith("failed (1):\n  run 06:20:00  exit 3 after")  # the second ran with exit 3
    header, first, second, total, *_ = table.splitlines()
    assert header.split()[:3] == ["instance", "start", "span"]
    # Each run: a span of 10.0 s from its first line's t to its last's, 3 lines, the run's own CPU over its 10.2 s
    # (10 × 0.2 + 25 × 5 + 50 × 5) / 10.2 = 37.0 % of its cores, the exit of its COMMAND.
    assert first.split()[:7] == ["run", "05:20:00", "05:20:00", "10.0", "s", "3", "37.0"] and "exit 0" in first
    assert second.split()[:7] == ["run", "06:20:00", "06:20:00", "10.0", "s", "3", "37.0"] and "exit 3" in second
    assert total == "total: 2 runs, 0.00567 instance-hours from 2026-11-30T05:20:00Z to 2026-11-30T06:20:10Z"
    assert "command" not in done.stdout  # no run's block without --each
    document = json.loads(orca("metrics", "--json", str(two_runs)).stdout)
    assert [(row["label"], row["lines"]) for row in document["rows"]] == [("run 05:20:00", 3), ("run 06:20:00", 3)]
    assert document["totals"]["runs"] == 2


def test_a_file_of_two_runs_with_each_is_the_table_then_two_summaries(two_runs: Path) -> None:
    done = orca("metrics", "--each", str(two_runs))
    assert done.returncode == 0, done.stderr
    first, second, total = blocks(done.stdout)[-3:]
    assert first.startswith(f"{two_runs}  (host vm, 4 cores, run started 2026-11-30T05:20:00Z)\n")
    assert second.startswith(f"{two_runs}  (host vm, 4 cores, run started 2026-11-30T06:20:00Z)\n")
    for block, code, hour in ((first, 0, "05"), (second, 3, "06")):
        assert "  command        python3 work.py --size '500 MB'\n" in block
        assert (f"  exit           exit {code} after 10.1 s  (wait4: user 14.25 s, system 0.50 s, max rss 310.00 MiB)\n"
                in block)
        assert "  run cpu        mean 147.8%  max 200.0% of one core  processes up to 3\n" in block
        assert "  run memory     rss peak 300.00 MiB\n" in block
        # From the run's start (its first line's `t` less its `dt`) to its last line: 0.2 + 5 + 5 s.
        assert f"  time           2026-11-30T{hour}:20:00Z to 2026-11-30T{hour}:20:10Z  (10.2 s)\n" in block
        # Each run on its own: three lines 5 s apart after the first, no gap across the hour between the runs.
        assert "  lines          3, 0 gaps (median interval 5 s)\n" in block
        # The host's CPU: (20 + 40 + 60) / 3, in percent of all its 4 cores.
        assert "  host cpu       mean 40.0%  p95 60.0%  max 60.0% of all 4 cores  busiest core p95 60.0%\n" in block
        # The run's rss is in the run's row, not in the host's memory row.
        assert "  host memory    used peak 1.00 GiB (12.5% of 8.00 GiB)  swap peak 0 B\n" in block
    # The run's rows come first, before the file's time and lines.
    assert first.index("  command") < first.index("  exit") < first.index("  run cpu") < first.index("  time")
    assert total == "total: 2 runs, 6 lines, 2026-11-30T05:20:00Z to 2026-11-30T06:20:10Z (1h 00m 10s)\n"
    no_traceback(done.stderr)


def test_a_file_of_two_runs_is_two_json_documents(two_runs: Path) -> None:
    done = orca("metrics", "--json", str(two_runs))
    assert done.returncode == 0, done.stderr
    first, second = summaries(done.stdout)
    assert (first["start"], first["start_utc"]) == (FIRST_START, "2026-11-30T05:20:00Z")
    assert (second["start"], second["start_utc"]) == (SECOND_START, "2026-11-30T06:20:00Z")
    for document, code in ((first, 0), (second, 3)):
        assert (document["lines"], document["gaps"], document["duration"]) == (3, 0, 10.2)
        assert document["run"] == {
            "command": ["python3", "work.py", "--size", "500 MB"], "argc": None,
            "exit": {"code": code, "signal": None, "error": None, "wall": 10.1, "user": 14.25, "system": 0.5,
                     "max_rss": 310 * 2**20},
            "cpu_mean_core_percent": 147.8, "cpu_peak_core_percent": 200.0, "procs_peak": 3, "io": None,
            "io_lines": 3, "io_unknown_lines": 3,
        }
        assert document["cpu"] == {"mean_all_cores_percent": 40.0, "p95_all_cores_percent": 60.0,
                                   "max_all_cores_percent": 60.0, "busiest_core_p95_percent": 60.0}
        assert document["memory"]["rss_peak"] == 300 * 2**20
        assert document["cgroup"] is None


def test_runs_of_a_stream_are_told_apart_too(two_runs: Path) -> None:
    prefixed = "".join(f"orca-sample {text}\n" for text in two_runs.read_text().splitlines())
    done = orca("metrics", "--json", "-", stdin=prefixed.encode())
    assert done.returncode == 0, done.stderr
    assert [document["start"] for document in summaries(done.stdout)] == [FIRST_START, SECOND_START]


def test_lines_of_an_older_sampler_stay_one_instance_per_host(tmp_path: Path) -> None:
    """Lines without `start` (a sampler before it) are grouped by host as before; a newer sampler's lines appended
    to the same file are a run of their own."""
    path = tmp_path / "run.jsonl"
    old = [line(None, 100.0 + 5 * i, 5.0, cpu=cpu(10.0)) for i in range(3)]
    path.write_text("\n".join([*old, *run_lines(FIRST_START, 0)]) + "\n")
    done = orca("metrics", "--each", str(path))
    assert done.returncode == 0, done.stderr
    older, newer, total = blocks(done.stdout)[-3:]
    # The first line covers the 5 s before it: 95 to 110 s.
    assert older.startswith(f"{path}  (host vm, 4 cores)\n  time           1970-01-01T00:01:35Z to "
                            "1970-01-01T00:01:50Z  (15.0 s)\n")
    assert "  lines          3, 0 gaps" in older and "command" not in older and "  run " not in older
    assert newer.startswith(f"{path}  (host vm, 4 cores, run started 2026-11-30T05:20:00Z)\n")
    assert total.startswith("total: 2 runs, 6 lines")
    documents = summaries(orca("metrics", "--json", str(path)).stdout)
    assert [(document["start"], document["start_utc"], document["run"] is None) for document in documents] == [
        (None, None, True), (FIRST_START, "2026-11-30T05:20:00Z", False)]


def one_run(tmp_path: Path, last_run: dict[str, Any], *, first_run: dict[str, Any] | None = None) -> str:
    """The text summary of a run of two lines whose last line's `run` is `last_run`."""
    path = tmp_path / "run.jsonl"
    first = first_run or {"cpu": 5.0, "procs": 1, "command": ["sleep", "60"]}
    path.write_text(line(FIRST_START, FIRST_START + 0.2, 0.2, run=first) + "\n"
                    + line(FIRST_START, FIRST_START + 2.5, 2.3, run=last_run) + "\n")
    done = orca("metrics", str(path))
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_command_killed_by_a_signal(tmp_path: Path) -> None:
    text = one_run(tmp_path, {"cpu": 0.0, "procs": 1, "exit": {"signal": 9, "wall": 2.4, "user": 0.0, "system": 0.01,
                                                               "max_rss": 2**20}})
    assert "  command        sleep 60\n" in text
    assert ("  exit           killed by SIGKILL after 2.4 s  (wait4: user 0.00 s, system 0.01 s, max rss "
            "1.00 MiB)\n") in text


def test_a_signal_whose_number_differs_between_systems_is_a_number(tmp_path: Path) -> None:
    """10 is SIGUSR1 on Linux and SIGBUS on macOS: a line does not say which."""
    text = one_run(tmp_path, {"cpu": 0.0, "procs": 1, "exit": {"signal": 10, "wall": 2.4}})
    assert "  exit           killed by signal 10 after 2.4 s\n" in text


def test_a_command_that_never_started(tmp_path: Path) -> None:
    """One line, which is also the last: the command, its code and why (docs/behaviour.md §9.2)."""
    path = tmp_path / "run.jsonl"
    path.write_text(line(FIRST_START, FIRST_START + 0.2, 0.2, cpu=cpu(1.0), run={
        "cpu": 0.0, "procs": 0, "command": ["no-such-command", "--flag"],
        "exit": {"code": 127, "error": "No such file or directory"}}) + "\n")
    done = orca("metrics", str(path))
    assert done.returncode == 0, done.stderr
    assert "  command        no-such-command --flag\n" in done.stdout
    assert "  exit           could not start: No such file or directory (exit 127)\n" in done.stdout
    assert "  run " not in done.stdout  # it had no processes to speak of
    (document,) = [json.loads(text) for text in orca("metrics", "--json", str(path)).stdout.splitlines()]
    assert document["run"]["exit"] == {"code": 127, "signal": None, "error": "No such file or directory",
                                       "wall": None, "user": None, "system": None, "max_rss": None}


def test_a_command_cut_short_in_the_line_says_how_many_arguments_it_had(tmp_path: Path) -> None:
    text = one_run(tmp_path, {"cpu": 1.0, "procs": 1},
                   first_run={"cpu": 1.0, "procs": 1, "command": ["xargs", "-n1", "echo"], "argc": 40})
    assert "  command        xargs -n1 echo ... (40 arguments, 3 shown)\n" in text
    assert "  exit" not in text  # not ended yet, or its last line not written


def test_a_command_whose_arguments_would_drive_the_terminal_is_escaped(tmp_path: Path) -> None:
    text = one_run(tmp_path, {"cpu": 1.0, "procs": 1},
                   first_run={"cpu": 1.0, "procs": 1, "command": ["echo", "\x1b[2J\nexit      code 0"]})
    assert "  command        echo '\\x1b[2J\\nexit      code 0'\n" in text
    assert "\x1b" not in text


def test_a_pid_run_without_a_command(tmp_path: Path) -> None:
    """`--pid` or `--match`: the run's CPU and processes, no command and no end."""
    text = one_run(tmp_path, {"cpu": 12.5, "procs": 4}, first_run={"cpu": 2.5, "procs": 2})
    # (2.5 × 0.2 + 12.5 × 2.3) / 2.5 = 11.7 % of 4 cores: 46.8 % of one core; at most 12.5 %, 50.0 %.
    assert "  run cpu        mean 46.8%  max 50.0% of one core  processes up to 4\n" in text
    assert "command" not in text and "exit" not in text


def test_the_run_against_its_cgroups_limits(tmp_path: Path) -> None:
    """Three lines: 0.2 s, then 5 s and 5 s. CPU used: 0.2 × 0.5 + 5 × 1.0 + 5 × 0.94 = 9.8 CPU-seconds over 10.2 s,
    0.96 CPUs; throttled (0.2 × 0 + 5 × 60 + 5 × 22) / 10.2 = 40.2 %; memory at most 1932735283 of 2 GiB, 90 %; one
    OOM kill (0, 0, 1); pids at most 9 of 100."""
    def limited(t: float, dt: float, mem_: int, cpu_: float, throttled: float, oom: int, pids: int) -> str:
        return line(FIRST_START, t, dt, cgroup={"mem": mem_, "mem_max": 2 * GIB, "cpu": cpu_, "cpu_max": 1.0,
                                                "throttled": throttled, "oom_kill": oom, "pids": pids,
                                                "pids_max": 100})

    path = tmp_path / "pod.jsonl"
    path.write_text("\n".join([
        limited(FIRST_START + 0.2, 0.2, GIB, 50.0, 0.0, 0, 3),
        limited(FIRST_START + 5.2, 5.0, 1932735283, 100.0, 60.0, 0, 9),
        limited(FIRST_START + 10.2, 5.0, GIB, 94.0, 22.0, 1, 5),
    ]) + "\n")
    done = orca("metrics", str(path))
    assert done.returncode == 0, done.stderr
    assert ("  cgroup memory  peak 1.80 GiB of 2.00 GiB limit (90%), 1 OOM kill\n"
            "  cgroup cpu     0.96 of 1.0 cores, throttled 40% of periods\n"
            "  cgroup pids    peak 9 of 100 limit\n") in done.stdout
    (document,) = [json.loads(text) for text in orca("metrics", "--json", str(path)).stdout.splitlines()]
    assert document["cgroup"] == {"mem_peak": 1932735283, "mem_max": 2 * GIB, "cpu_cores": 0.961, "cpu_max": 1.0,
                                  "throttled": 40.2, "oom_kills": 1, "pids_peak": 9, "pids_max": 100}


def test_a_line_too_short_to_say_does_not_make_the_peak(tmp_path: Path) -> None:
    """The line written as COMMAND ends 26 ms after the one before holds a few clock ticks: 78.3 % of all cores
    there is noise. Its share counts in the mean by its `dt`: (20 × 0.2 + 50 × 1 + 78.3 × 0.026) / 1.226 = 45.71 %,
    182.8 % of one core (4 cores); the peak is the 1 s line's, 50 %, 200.0 % of one core."""
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([
        line(FIRST_START, FIRST_START + 0.2, 0.2, run={"cpu": 20.0, "procs": 1}),
        line(FIRST_START, FIRST_START + 1.2, 1.0, run={"cpu": 50.0, "procs": 1}),
        line(FIRST_START, FIRST_START + 1.226, 0.026, run={"cpu": 78.3, "procs": 0, "exit": {"code": 0}}),
    ]) + "\n")
    done = orca("metrics", str(path))
    assert "  run cpu        mean 182.8%  max 200.0% of one core  processes up to 1\n" in done.stdout
    # Lines that all cover less (--seconds 0.05): the peak is theirs.
    path.write_text("\n".join([
        line(FIRST_START, FIRST_START + 0.05, 0.05, run={"cpu": 30.0, "procs": 1}),
        line(FIRST_START, FIRST_START + 0.1, 0.05, run={"cpu": 60.0, "procs": 1}),
    ]) + "\n")
    short = orca("metrics", str(path)).stdout
    assert "  run cpu        mean 180.0%  max 240.0% of one core  processes up to 1\n" in short


METRICS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def keys_of(value: object, into: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            into.add(key)
            keys_of(item, into)
    elif isinstance(value, list):
        for item in value:
            keys_of(item, into)
    return into


def test_every_key_of_json_is_in_the_docs_table(tmp_path: Path) -> None:
    """A summary with every section (a run of a COMMAND under a cgroup's limits, with disks, io, net, pressure and a
    container): each of its keys, at any depth, is named in docs/metrics.md's table of `--json` keys, in the order the
    table gives the top level's."""
    path = tmp_path / "everything.jsonl"
    section = {"cgroup": {"mem": 1, "mem_max": 2, "cpu": 1.0, "cpu_max": 1.0, "throttled": 0.0, "oom_kill": 0,
                          "pids": 1, "pids_max": 2},
               "disk": [{"path": "/", "total": 2, "used": 1, "free": 1}], "io": {"read": 1, "write": 1},
               "net": {"in": 1, "out": 1}, "pressure": {"cpu": 1.0, "memory": 1.0, "io": 1.0},
               "containers": [{"name": "db", "mem": 1, "cpu": 0.0, "mem_nocache": 1, "throttled": 1.0, "pids": 1,
                               "mem_max": 2, "oom_kill": 0}], "self_cpu": 0.1, "cpu": cpu(1.0), "mem": mem(1)}
    path.write_text("\n".join([
        line(FIRST_START, FIRST_START + 0.2, 0.2, **section, run={"cpu": 1.0, "procs": 1, "command": ["x"]}),
        line(FIRST_START, FIRST_START + 1.2, 1.0, **section,
             run={"cpu": 1.0, "procs": 1, "exit": {"code": 0, "wall": 1.0, "user": 0.1, "system": 0.0, "max_rss": 1}}),
    ]) + "\n")
    done = orca("metrics", "--json", str(path))
    (document,) = [json.loads(text) for text in done.stdout.splitlines()]
    text = METRICS_PAGE.read_text()
    table = text[text.index("`--json` prints the summary of a source"):]
    table = table[:table.index("\n\n", table.index("| key | what it holds |"))]
    named = set(re.findall(r"`([a-z_0-9]+)`", table))
    assert keys_of(document, set()) - named == set()
    rows = [row.split("|")[1] for row in table.splitlines() if row.startswith("| `")]
    in_table = [key for row in rows for key in re.findall(r"`([a-z_0-9]+)`", row)]
    assert in_table == list(document)


def test_a_run_busy_throughout_has_a_mean_of_its_share_not_an_ulp_over() -> None:
    # 200 * 0.013 / 0.013 is 200.00000000000003 in floats: a dt-weighted mean is never over its highest term.
    fold = RunFold()
    fold.add([Sample(v=1, t=1.0, dt=0.013, host="h", cores=2, run=RunSample(cpu=100.0, procs=1))])
    summary = fold.summary("x")
    assert summary is not None and summary.run is not None
    assert summary.run.cpu_mean_core_percent == 200.0


@pytest.mark.parametrize(("times", "time_row", "lines_row", "last_t", "duration"), [
    # Five lines a second apart, the clock stepped back an hour before the fourth (an NTP step, a VM restored): the
    # run lasted its five `dt`s, 5 s, placed before its last line's 04:20:05.
    ([FIRST_START + 1, FIRST_START + 2, FIRST_START + 3, FIRST_START - 3600 + 4, FIRST_START - 3600 + 5],
     "2026-11-30T04:20:00Z to 2026-11-30T04:20:05Z  (5.0 s)", "5, 0 gaps", FIRST_START - 3600 + 5, 5.0),
    # Ten lines, lines 5 to 7 written while the wall clock was an hour back (stepped back, then forward again): the
    # run lasted its ten `dt`s, 10 s, from 05:20:00 to its last line's 05:20:10.
    ([FIRST_START + n - (3600 if 5 <= n <= 7 else 0) for n in range(1, 11)],
     "2026-11-30T05:20:00Z to 2026-11-30T05:20:10Z  (10.0 s)", "10, 0 gaps", FIRST_START + 10, 10.0),
])
def test_a_clock_stepped_inside_a_run_is_neither_an_hour_nor_a_gap(
        tmp_path: Path, times: list[float], time_row: str, lines_row: str, last_t: float, duration: float) -> None:
    """Lines a second apart by the sampler's monotonic clock (every `dt` 1 s), whatever the wall clock said: the run
    lasted the sum of its `dt`s, no interval is a gap, and the first and last line's `t` are as written."""
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(line(FIRST_START, t, 1.0, cpu=cpu(10.0)) for t in times) + "\n")
    done = orca("metrics", str(path))
    assert done.returncode == 0, done.stderr
    assert f"  time           {time_row}\n" in done.stdout
    assert f"  lines          {lines_row} (median interval 1 s)\n" in done.stdout
    (document,) = [json.loads(text) for text in orca("metrics", "--json", str(path)).stdout.splitlines()]
    assert (document["first_t"], document["last_t"], document["duration"], document["gaps"]) == (
        FIRST_START + 1, last_t, duration, 0)


def test_a_sampler_stopped_is_a_gap_by_its_dt(tmp_path: Path) -> None:
    """Lines 5 s apart, the sampler stopped for a minute before the fourth (SIGSTOP): that line's `dt` is 65 s by the
    monotonic clock, over twice the median of 5 s, so one gap, and the run lasted 5 × 3 + 65 + 5 = 85 s."""
    path = tmp_path / "run.jsonl"
    dts = [5.0, 5.0, 5.0, 65.0, 5.0]
    ends = [FIRST_START + sum(dts[:n + 1]) for n in range(len(dts))]
    path.write_text("\n".join(line(FIRST_START, t, dt) for t, dt in zip(ends, dts, strict=True)) + "\n")
    (document,) = [json.loads(text) for text in orca("metrics", "--json", str(path)).stdout.splitlines()]
    assert (document["duration"], document["gaps"], document["median_dt"]) == (85.0, 1, 5.0)


def test_a_run_shorter_than_a_second_has_no_overhead_share(tmp_path: Path) -> None:
    """One line 0.2 s after the start, the sampler's 0.1 s of CPU mostly its own start: not said as 50 % of a core."""
    path = tmp_path / "run.jsonl"
    path.write_text(line(FIRST_START, FIRST_START + 0.2, 0.2, self_cpu=0.1, run={"cpu": 1.0, "procs": 0}) + "\n")
    done = orca("metrics", str(path))
    assert "  sampler        0.10 s of CPU\n" in done.stdout
    (document,) = [json.loads(text) for text in orca("metrics", "--json", str(path)).stdout.splitlines()]
    assert (document["self_cpu_seconds"], document["overhead_percent"]) == (0.1, None)
