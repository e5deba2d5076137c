"""`orca metrics`: sources (file, directory, standard input, a pod's log), the summary as a person and a script see
it, and the messages for bad input. Run as a process, as a user runs it."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from importlib.metadata import distributions
from pathlib import Path
from typing import Any

import pytest

from orca.sample.readback.shell import parts
from orca.sample.readback.shell import sources as sources_module
from orca.sample.readback.shell.cli.metrics import metrics_main
from orca.sample.readback.shell.sources import SourceError, read_samples, sources
from orca.sample.readback.words import size, utc
from tests.reader.hand_worked import RUN, disk, locked, mem, sample

ORCA = Path(sys.executable).parent / "orca"
ROOT = Path(__file__).resolve().parents[2]


def orca(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "orca.sample", *args], input=stdin, capture_output=True, timeout=60)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def no_traceback(text: str) -> None:
    assert "Traceback" not in text, text


def test_a_file_summarised_for_a_person(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(RUN)
    done = orca("metrics", str(path))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    # The dts add up to 35 s, before the last line's t 130: from 95 (1970-01-01T00:01:35Z) to 130 (00:02:10Z).
    assert f"{path}  (host h, 2 cores)" in text
    assert "  time           1970-01-01T00:01:35Z to 1970-01-01T00:02:10Z  (35.0 s)\n" in text
    assert "  lines          5, 1 gap (median interval 5 s)\n" in text
    assert "  host cpu       mean 30.0%  p95 65.0%  max 65.0% of all 2 cores  busiest core p95 90.0%\n" in text
    # No `run` section: the run's resident memory (an older `--pid` sampler's) in a row of its own.
    assert "  run memory     rss peak 50 B\n" in text
    assert "  host memory    used peak 400 B (70.0% of 1000 B)  swap peak 7 B\n" in text
    assert "  host disk      fullest /b at 75.0%\n" in text
    assert "  host io        read 1.46 KiB (peak 200 B/s)  write 250 B (peak 50 B/s)\n" in text  # 1500 B = 1.46 KiB
    assert "  container      db: mem peak 300 B  oom kills 4\n" in text
    assert "  container      web: mem peak 50 B\n" in text
    assert "  host pressure  cpu 2.0%  memory 2.0%  io 4.0%" in text
    assert "  sampler        0.45 s of CPU, 1.29% of one core" in text  # 0.45 s over the 35 s of dt
    assert "total:" not in text  # one run: no total line
    # One line of the file is a sample gone bad (mem.total -1); the log line is not counted as bad.
    assert "1 line skipped (1 mem.total is not a whole number from 0 to 9,223,372,036,854,775,807)" in done.stderr
    no_traceback(done.stderr)


def test_numbers_no_sampler_writes_are_skipped_and_the_file_beside_is_summarised(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([
        sample(100.0, dt=1e308, io={"read": 5, "write": 1}),
        sample(1e12),
        sample(2.0**70),
        sample(105.0, cpu={"user": 1e308, "system": 0.0, "iowait": 0.0, "steal": 0.0, "busiest": 0.0}),
        sample(110.0, io={"read": 2**70, "write": 0}),
        sample(115.0, dt=1e300),
    ]) + "\n")
    good = tmp_path / "run.jsonl"
    good.write_text(RUN)
    for args in ([str(bad), str(good)], ["--json", str(bad), str(good)], [str(bad), str(good), "--plot",
                                                                           str(tmp_path / "run.png")]):
        done = orca("metrics", *args)
        assert done.returncode == 0, done.stderr
        no_traceback(done.stderr)
        assert (f"{bad}: 6 lines skipped (1 cpu.user is not a finite number from 0 to 1,000,000, 2 dt is not a "
                "finite number from 0 to 100,000,000, 1 io.read is not a whole number from 0 to "
                "9,223,372,036,854,775,807, 2 t is not a finite number from 0 to 10,000,000,000)") in done.stderr
        assert f"{bad}: no sample lines" in done.stderr
        # Two files are a fleet: the good one summarised, the bad one a row without lines.
        if "--json" in args:
            document = json.loads(done.stdout)
            assert [row["name"] for row in document["rows"]] == [str(bad), str(good)]
            assert document["rows"][1]["summary"]["lines"] == 5 and document["no_lines"] == ["bad"]
        else:
            assert "\nrun " in done.stdout and "no lines (1):\n  bad  no sample line\n" in done.stdout


def test_the_largest_numbers_a_sampler_writes_are_summarised(tmp_path: Path) -> None:
    """At the bounds (docs/metrics.md, "How lines are read"): bytes moved beyond 64 bits, a file system of 10^400
    bytes."""
    most = 2**63 - 1
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(
        sample(t, dt=1e8, io={"read": most, "write": most}, net={"in": most, "out": 0},
               mem=mem(most, most, most, most), disk=[disk("/efs", 10**400, 10**400)],
               cpu={"user": 1e6, "system": 1e6, "iowait": 1e6, "steal": 1e6, "busiest": 1e6}, self_cpu=1e9,
               containers=[{"name": "db", "mem": most, "cpu": 1e6, "mem_nocache": most, "oom_kill": most,
                            "throttled": 1e6, "mem_max": most, "pids": most}], pressure={"cpu": 1e6})
        for t in (1e10 - 1e8, 1e10)
    ) + "\n")
    done = orca("metrics", "--json", str(path))
    assert done.returncode == 0, done.stderr
    (document,) = [json.loads(line) for line in done.stdout.splitlines()]
    # Each line moved 2^63 - 1 bytes a second for 10^8 s.
    assert document["io"]["read"] == round(2 * (most * 1e8))
    assert document["disk"] == {"path": "/efs", "peak_percent": 50.0}
    for args in ([str(path)], [str(path), "--plot", str(tmp_path / "big.png")]):
        done = orca("metrics", *args)
        assert done.returncode == 0, done.stderr
        no_traceback(done.stderr)
    assert "2286-11-20T17:46:40Z" in done.stdout


def test_json_for_scripts(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(RUN)
    done = orca("metrics", "--json", str(path))
    assert done.returncode == 0, done.stderr
    (document,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert document["name"] == str(path)
    assert (document["lines"], document["gaps"], document["duration"]) == (5, 1, 35.0)
    assert document["cpu"] == {"mean_all_cores_percent": 30.0, "p95_all_cores_percent": 65.0,
                               "max_all_cores_percent": 65.0, "busiest_core_p95_percent": 90.0}
    assert document["memory"]["used_peak"] == 400
    assert document["containers"][0] == {"name": "db", "mem_peak": 300, "oom_kills": 4, "mem_max": None,
                                             "pids_peak": None, "throttled_mean": None}


def test_hosts_of_one_source_are_instances_and_json_is_at_the_lines_precision(tmp_path: Path) -> None:
    def line(host: str, t: float, user: float, used: int) -> str:
        return json.dumps({"v": 1, "t": t, "dt": 1.0, "host": host, "self_cpu": 0.01,
                           "cpu": {"user": user, "system": 0.0, "iowait": 0.0, "steal": 0.0, "busiest": user},
                           "mem": {"total": 3, "used": used, "available": 0, "cache": 0, "swap_total": 0,
                                   "swap_used": 0, "rss": 0},
                           "containers": [{"name": "db", "mem": 7, "cpu": 0.0, "mem_nocache": 7, "throttled": 12,
                                           "pids": 4, "mem_max": 1024}]})

    lines = [line("a", 1.0, 6.0, 1), line("b", 1.5, 1.0, 1), line("a", 2.0, 6.1, 1), line("a", 3.0, 6.02, 2)]
    path = tmp_path / "pods.log"
    path.write_text("\n".join(lines) + "\n")
    # Two runs (two hosts): the table a fleet gets, each row with its run's summary.
    documents = [row["summary"] for row in json.loads(orca("metrics", "--json", str(path)).stdout)["rows"]]
    assert [(document["name"], document["host"], document["lines"]) for document in documents] == [
        (str(path), "a", 3), (str(path), "b", 1)]
    a = documents[0]
    # (6.0 + 6.1 + 6.02) / 3 = 6.04 to one decimal; 2 of 3 bytes used is 66.7 %; a throttled written as the
    # integer 12 is the share 12.0.
    assert (a["cpu"]["mean_all_cores_percent"], a["memory"]["used_peak_percent"]) == (6.0, 66.7)
    assert a["containers"] == [{"name": "db", "mem_peak": 7, "oom_kills": 0, "mem_max": 1024, "pids_peak": 4,
                                "throttled_mean": 12.0}]
    text = orca("metrics", "--each", str(path)).stdout
    assert text.startswith("instance ")
    assert f"{path}  (host a)" in text and f"{path}  (host b)" in text
    assert "  container      db: mem peak 7 B of 1.00 KiB limit  throttled mean 12.0%  pids peak 4\n" in text
    assert "total: 2 runs, 4 lines" in text


def test_each_with_json_of_a_source_of_many_runs_is_the_json_alone(tmp_path: Path) -> None:
    """Each row of the object already holds its run's summary: `--each`'s blocks are for a person, not the JSON."""
    path = tmp_path / "pods.log"
    path.write_text(RUN + "\n" + sample(300.0).replace('"host": "h"', '"host": "g"') + "\n")
    alone = orca("metrics", "--json", str(path))
    each = orca("metrics", "--json", "--each", str(path))
    assert each.returncode == alone.returncode == 0, each.stderr
    assert each.stdout == alone.stdout
    assert [row["summary"]["host"] for row in json.loads(each.stdout)["rows"]] == ["g", "h"]


def test_a_directory_is_every_jsonl_under_it_then_a_total(tmp_path: Path) -> None:
    run = tmp_path / "pipeline" / "42" / "metrics"
    run.mkdir(parents=True)
    (run / "worker-a.jsonl").write_text(RUN)
    (run / "worker-b.jsonl").write_text(sample(200.0) + "\n" + sample(205.0) + "\n")
    (run / "notes.txt").write_text(sample(999.0) + "\n")  # not a *.jsonl: not read
    done = orca("metrics", "--json", str(tmp_path / "pipeline"))
    assert done.returncode == 0, done.stderr
    names = [row["name"] for row in json.loads(done.stdout)["rows"]]  # a fleet: a row per instance
    assert names == [str(run / "worker-a.jsonl"), str(run / "worker-b.jsonl")]
    text = orca("metrics", "--each", str(tmp_path / "pipeline")).stdout
    # 5 + 2 lines, from the first run's start (t 100 less its dt 5: 00:01:35) to t 205 (00:03:25): 1m 50s.
    assert "total: 2 runs, 7 lines, 1970-01-01T00:01:35Z to 1970-01-01T00:03:25Z (1m 50s)" in text


def test_standard_input_and_a_pod_log_with_the_runs_own_output(tmp_path: Path) -> None:
    pod_log = (
        "starting the run\n"
        f"orca-sample {sample(10.0, cpu={'user': 1.0, 'system': 1.0, 'iowait': 0.0, 'steal': 0.0, 'busiest': 2.0})}\n"
        "step 1 of 2 {\"not\": \"a sample\"}\n"
        f"orca-sample {sample(15.0, cpu={'user': 3.0, 'system': 1.0, 'iowait': 0.0, 'steal': 0.0, 'busiest': 4.0})}\n"
        "done\n"
        f"orca-sample {sample(20.0)}"  # cut off: no newline, not read
    )
    done = orca("metrics", "--json", "-", stdin=pod_log.encode())
    assert done.returncode == 0, done.stderr
    (document,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert (document["name"], document["lines"], document["last_t"]) == ("-", 2, 15.0)
    assert document["cpu"]["mean_all_cores_percent"] == 3.0  # (2 + 4) / 2
    assert "skipped" not in done.stderr  # the run's own lines are not bad samples
    (tmp_path / "pod.log").write_text(pod_log)
    assert [s.t for s in read_samples(str(tmp_path / "pod.log"))] == [10.0, 15.0]


def test_a_location_that_does_not_exist_is_one_message_and_exit_1(tmp_path: Path) -> None:
    done = orca("metrics", str(tmp_path / "absent.jsonl"))
    assert done.returncode == 1
    assert done.stderr.strip() == f"orca metrics: {tmp_path / 'absent.jsonl'}: No such file or directory"
    with pytest.raises(SourceError):
        sources(str(tmp_path / "absent.jsonl"))


def test_an_unreadable_file_is_exit_1(tmp_path: Path) -> None:
    path = locked(tmp_path / "locked.jsonl")
    done = orca("metrics", str(path))
    assert (done.returncode, done.stderr.strip()) == (1, f"orca metrics: {path}: Permission denied")


def test_files_without_samples_say_so(tmp_path: Path) -> None:
    (tmp_path / "log.jsonl").write_text("just a log\n")
    (tmp_path / "empty").mkdir()
    done = orca("metrics", str(tmp_path / "log.jsonl"))
    assert (done.returncode, done.stdout) == (1, "")
    assert f"{tmp_path / 'log.jsonl'}: no sample lines" in done.stderr
    done = orca("metrics", str(tmp_path / "empty"))
    assert (done.returncode, done.stderr.strip()) == (1, f"orca metrics: {tmp_path / 'empty'}: no *.jsonl file under "
                                                         "this directory")
    no_traceback(done.stderr)


@pytest.mark.parametrize("args", [[], ["--bogus", "x"], ["x", "--plot", "chart.gif"], ["x", "--plot"]])
def test_a_malformed_command_line_is_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert metrics_main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("orca metrics: ") and " metrics LOCATION... [--json]" in err.splitlines()[1]


def test_plot_without_matplotlib_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from orca.sample.readback.shell import plot

    monkeypatch.setattr(plot, "plotting_available", lambda: False)
    path = tmp_path / "run.jsonl"
    path.write_text(RUN)
    assert metrics_main([str(path), "--plot", str(tmp_path / "run.png")]) == 1
    err = capsys.readouterr().err
    # From the directory this checkout is installed from (editable, as `dev.py` installs it), by its own pip.
    assert f"--plot needs matplotlib: {shlex.quote(sys.executable)} -m pip install " in err
    records = [json.loads(found.read_text("direct_url.json") or "{}") for found in distributions(name="orca-sample")]
    if any(record.get("dir_info", {}).get("editable") for record in records):
        assert err.endswith(f"-e {shlex.quote(str(ROOT) + '[plot]')}\n")
    assert not (tmp_path / "run.png").exists()


def test_a_chart_matplotlib_cannot_draw_is_one_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from orca.sample.readback.shell import plot

    def refuse(*args: object) -> None:
        raise ValueError("Image size of 90000x900 pixels is too large.\nIt must be less than 2^16 in each direction.")

    monkeypatch.setattr(plot, "draw", refuse)
    path = tmp_path / "run.jsonl"
    path.write_text(RUN)
    chart = tmp_path / "run.png"
    assert metrics_main([str(path), "--plot", str(chart)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"orca metrics: {chart}: cannot draw the chart: ValueError: Image size of 90000x900 pixels is too large. It "
        "must be less than 2^16 in each direction.")


@pytest.mark.parametrize("files", [2, 6])  # the runs overlaid; the fleet's chart, a row per run
def test_a_fleets_chart_matplotlib_cannot_draw_is_one_message(files: int, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from orca.sample.readback.shell import fleet_plot, plot

    def refuse(*args: object) -> None:
        raise ValueError("Image size of 90000x900 pixels is too large.")

    monkeypatch.setattr(plot, "draw", refuse)
    monkeypatch.setattr(fleet_plot, "draw_fleet", refuse)
    for number in range(files):
        (tmp_path / f"worker-{number}.jsonl").write_text(RUN)
    chart = tmp_path / "fleet.png"
    assert metrics_main([str(tmp_path), "--plot", str(chart)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"orca metrics: {chart}: cannot draw the chart: ValueError: Image size of 90000x900 pixels is too large.")


def test_orca_help_lists_the_commands() -> None:
    if not ORCA.exists():
        pytest.skip("no console script beside this interpreter")
    done = subprocess.run([str(ORCA), "--help"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    assert "  sample " in done.stdout and "  metrics " in done.stdout
    alone = subprocess.run([str(ORCA)], capture_output=True, text=True, timeout=30)
    assert alone.returncode == 2 and "  metrics " in alone.stderr and "orca: no command" in alone.stderr
    metrics_help = subprocess.run([str(ORCA), "metrics", "--help"], capture_output=True, text=True, timeout=30)
    assert metrics_help.returncode == 0 and "--plot" in metrics_help.stdout
    assert metrics_help.stdout.count("usage:") == 1


def test_sizes_in_binary_units() -> None:
    assert size(1500) == "1.46 KiB"  # 1500 / 1024 = 1.4648
    assert size(3 * 2**30) == "3.00 GiB"


def test_times_are_printed_in_utc_to_the_second() -> None:
    assert utc(59.9999996) == "1970-01-01T00:01:00Z"  # to the microsecond first, as datetime rounds, then seconds
    assert (utc(951782400.0), utc(4102444799.9)) == ("2000-02-29T00:00:00Z", "2099-12-31T23:59:59Z")


def test_a_named_pipe_is_read_like_cat_reads_it(tmp_path: Path) -> None:
    """The reader or the writer may open the pipe first; either way every line written is read, once."""
    fifo = tmp_path / "run.fifo"
    for pause in (0.0, 0.3):
        os.mkfifo(fifo)
        reader = subprocess.Popen([sys.executable, "-m", "orca.sample", "metrics", "--json", str(fifo)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(pause)  # the writer first (no pause: the reader is still starting), then likely the reader
        with fifo.open("w") as out:  # waits for the reader, as the reader waits for it
            out.write(RUN)
        stdout, stderr = reader.communicate(timeout=60)
        assert reader.returncode == 0, stderr
        (document,) = [json.loads(line) for line in stdout.splitlines()]
        assert (document["lines"], document["gaps"]) == (5, 1)
        fifo.unlink()


def test_the_help_names_the_command_as_it_was_started_and_that_runs(tmp_path: Path) -> None:
    """Started by its path with no `orca` on `PATH` (after the Quick start: `.venv/bin/orca`), the help's examples
    name that path: typed as it is shown, the example runs."""
    if not ORCA.exists():
        pytest.skip("no console script beside this interpreter")
    path = tmp_path / "run.jsonl"
    path.write_text(RUN)
    bare = {**os.environ, "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(ORCA), "metrics", "--help"], capture_output=True, text=True, timeout=30, env=bare)
    example = next(row for row in done.stdout.splitlines() if row.endswith("the summary of each run in the file"))
    command = shlex.split(example)[:-8]  # the words before its explanation
    assert command == [str(ORCA), "metrics", "run.jsonl"]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60, env=bare, cwd=tmp_path)
    assert ran.returncode == 0 and ran.stdout.startswith("run.jsonl  (host h, 2 cores)")
    # With `orca` on `PATH` (this one), the help says `orca`.
    found = {**os.environ, "PATH": f"{ORCA.parent}:/usr/bin:/bin"}
    done = subprocess.run([str(ORCA), "metrics", "--help"], capture_output=True, text=True, timeout=30, env=found)
    assert "  orca metrics run.jsonl " in done.stdout


def test_the_plot_install_is_of_this_interpreter_from_where_it_was_installed() -> None:
    """The hint installs the `plot` extra with the pip of the interpreter orca runs in, from the project directory
    it was installed from (editable, as `dev.py` installs it): a directory that exists and declares the extra."""
    from orca.sample.shared.hints import plot_install

    words = shlex.split(plot_install())
    assert words[:4] == [sys.executable, "-m", "pip", "install"]
    records = [json.loads(found.read_text("direct_url.json") or "{}") for found in distributions(name="orca-sample")]
    if not any(record.get("dir_info", {}).get("editable") for record in records):
        pytest.skip("not installed as editable from a directory")
    assert words[4:] == ["-e", f"{ROOT}[plot]"]
    assert "\nplot = [" in (ROOT / "pyproject.toml").read_text()


def test_ctrl_c_on_a_stream_that_goes_on_shows_what_was_read() -> None:
    """docs/metrics.md: `-` reads until its stream ends; Ctrl-C before that summarises the lines read so far, as the
    same lines would be at their end, and exits 130 without a traceback."""
    ended = orca("metrics", "-", stdin=RUN.encode())
    assert ended.returncode == 0, ended.stderr
    reading = subprocess.Popen([sys.executable, "-m", "orca.sample", "metrics", "-"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert reading.stdin is not None
        reading.stdin.write(RUN)
        reading.stdin.flush()
        deadline = time.monotonic() + 30
        while _unread(reading.stdin.fileno()):  # taken from the pipe: the lines are in the reader's hands
            assert time.monotonic() < deadline, "the lines were not read"
            time.sleep(0.05)
        time.sleep(0.3)
        reading.send_signal(signal.SIGINT)
        out, err = reading.communicate(timeout=30)  # the stream has not ended: stdin is still open
    finally:
        if reading.poll() is None:
            reading.kill()
            reading.wait()
    assert (reading.returncode, out) == (130, ended.stdout)
    no_traceback(err)


def _unread(pipe: int) -> int:
    """Bytes in a pipe not yet read from it."""
    (count,) = struct.unpack("i", fcntl.ioctl(pipe, termios.FIONREAD, b"\0\0\0\0"))
    return int(count)


def test_a_file_truncated_while_it_is_read_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A file truncated while it is read (a rotation by copying, a `> file`): the runs of what it held as it was read
    are shown, and that it shrank is said with its sizes, not passed over in silence."""
    lines = [json.dumps({"v": 1, "t": 1796000000.0 + 60 * n, "dt": 1.0, "host": "h", "cores": 2, "self_cpu": 0.05,
                         "cpu": {"user": 10.0, "system": 1.0, "iowait": 0.0, "steal": 0.0, "busiest": 50.0},
                         "mem": {"total": 1000, "used": 100, "available": 900, "cache": 0, "swap_total": 0,
                                 "swap_used": 0, "rss": 0}, "start": 1796000000.0 + 60 * n - 1}) + "\n"
             for n in range(3000)]
    path = tmp_path / "cron.jsonl"
    path.write_text("".join(lines))
    size, kept = path.stat().st_size, sum(map(len, lines[:2000]))
    assert 256 * 1024 < kept < size  # past the first batch read (256 KiB), before the end
    batches = sources_module.descriptor_batches

    def truncated_after_the_first(*args: Any, **kwargs: Any) -> Iterator[Any]:
        read = batches(*args, **kwargs)
        yield next(read)
        os.truncate(path, kept)
        yield from read

    monkeypatch.setattr(parts, "descriptor_batches", truncated_after_the_first)
    assert metrics_main([str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == (f"orca metrics: {path}: shrank from {size:,} to {kept:,} bytes "
                   "while it was read (truncated): what it held as it was read is shown\n")
    assert "total: 2,000 runs" in out
