"""Whole lines with containers and pressure, through the real Sampler and the real command (docs/behaviour.md
§3.1, §3.8, §3.9).

dt comes from the clock, so every rate is checked against the line's own `dt`: that is printed to 3 decimals
(docs/behaviour.md §3.2), so the true dt lies within ±0.0005 s of it and the printed rate (one decimal, §3.1's
fixed1) between the rates those two ends give, rounded the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orca.sample.shell.sampler import Sampler

from . import fixtures

MIB = 1 << 20
REPO = Path(__file__).resolve().parents[2]
PRINTED_DT_HALF_WIDTH = 0.0005


def rate_bounds(delta_usec: int, printed_dt: float) -> tuple[float, float]:
    """The one-decimal values a rate of `delta_usec` per dt can print, given dt as the line printed it."""
    low = 100.0 * delta_usec / ((printed_dt + PRINTED_DT_HALF_WIDTH) * 1e6)
    high = 100.0 * delta_usec / ((printed_dt - PRINTED_DT_HALF_WIDTH) * 1e6)
    return float(f"{low:.1f}"), float(f"{high:.1f}")


def assert_rate(printed: float, delta_usec: int, printed_dt: float) -> None:
    low, high = rate_bounds(delta_usec, printed_dt)
    assert low <= printed <= high, (printed, delta_usec, printed_dt)


def by_name(line: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in line["containers"]}


POSTGRES_MEM = 400 * MIB - 50 * MIB  # memory.current − inactive_file
POSTGRES_NOCACHE = 400 * MIB - 30 * MIB - 50 * MIB  # also − active_file


def postgres(usage_usec: int, oom_kill: int) -> fixtures.CgroupFiles:
    return fixtures.CgroupFiles(400 * MIB, 30 * MIB, 50 * MIB, oom_kill=oom_kill, usage_usec=usage_usec)


def ui(usage_usec: int) -> fixtures.CgroupFiles:
    # No memory.events: oom_kill is left out of its entry.
    return fixtures.CgroupFiles(
        64 * MIB, active_file=4 * MIB, inactive_file=8 * MIB, oom_kill=None, usage_usec=usage_usec
    )


@pytest.mark.timeout(60)
def test_two_lines_over_a_changing_tree(tmp_path: Path) -> None:
    """docs/behaviour.md §3.8, §3.9: cpu.stat, memory.events and /proc/pressure change between lines; a container is
    removed and another appears. Worked by hand (µs): postgres usage 1 000 000 → 1 060 000 → 1 150 000
    (Δ 60 000, 90 000), oom_kill 0 → 2 → 3; ui usage 5 000 000 → 5 015 000 (Δ 15 000), then its directory is
    removed; scheduler appears in line 2 (cpu 0.0: no previous reading). Pressure `some` totals: cpu 10 000 000 →
    +30 000 → +45 000; memory 2 000 000 → +0, then its file is gone (left out); io 50 000 000 → +12 000 → +3 000."""
    cgroup, names, proc, dirs = tmp_path / "cgroup", tmp_path / "names", tmp_path / "proc", tmp_path / "dirs"
    dirs.mkdir()
    fixtures.host_cgroup_noise(cgroup)
    fixtures.write_cgroup(fixtures.systemd_dir(cgroup, fixtures.ID_POSTGRES), postgres(1_000_000, 0))
    fixtures.write_cgroup(fixtures.cgroupfs_dir(cgroup, fixtures.ID_UI), ui(5_000_000))
    fixtures.write_config(names, fixtures.ID_POSTGRES, fixtures.config_v2("postgres"))
    fixtures.write_config(names, fixtures.ID_SCHEDULER, fixtures.config_v2("scheduler"))
    fixtures.write_pressure(proc, cpu=10_000_000, memory=2_000_000, io=50_000_000)

    sampler = Sampler(0, "", [str(dirs)], cgroup=str(cgroup), names=str(names), proc=str(proc))
    time.sleep(0.3)  # so the deltas are a small share of dt: pressure stays far from its 100 % clamp
    fixtures.write_cgroup(fixtures.systemd_dir(cgroup, fixtures.ID_POSTGRES), postgres(1_060_000, 2))
    fixtures.write_cgroup(fixtures.cgroupfs_dir(cgroup, fixtures.ID_UI), ui(5_015_000))
    fixtures.write_pressure(proc, cpu=10_030_000, memory=2_000_000, io=50_012_000)
    first = json.loads(sampler.line())

    fixtures.write_cgroup(fixtures.systemd_dir(cgroup, fixtures.ID_POSTGRES), postgres(1_150_000, 3))
    shutil.rmtree(fixtures.cgroupfs_dir(cgroup, fixtures.ID_UI))
    fixtures.write_cgroup(fixtures.cgroupfs_dir(cgroup, fixtures.ID_SCHEDULER), postgres(77_000_000, 0))
    fixtures.write_pressure(proc, cpu=10_075_000, memory=None, io=50_015_000)
    time.sleep(0.3)
    second = json.loads(sampler.line())

    # docs/behaviour.md §3.1 (pressure after self_cpu); the fixture proc has no stat/meminfo/...: those are null.
    keys = ["v", "t", "dt", "host", "cores", "cpu", "mem", "disk", "io", "net", "containers", "self_cpu", "pressure"]
    keys.append("start")
    assert list(first) == list(second) == keys

    assert [entry["name"] for entry in first["containers"]] == [fixtures.ID_UI[:12], "postgres"]
    pg, ui_entry = by_name(first)["postgres"], by_name(first)[fixtures.ID_UI[:12]]
    # The fixture's cpu.stat has the cpu controller's counters, no period elapsed (no limit): throttled is 0.0.
    # It has no memory.max, pids.current or io.stat, and no process: those fields are absent.
    assert list(pg) == ["name", "mem", "cpu", "mem_nocache", "oom_kill", "throttled"]
    assert pg["throttled"] == 0.0
    assert (pg["mem"], pg["mem_nocache"], pg["oom_kill"]) == (POSTGRES_MEM, POSTGRES_NOCACHE, 2)
    assert_rate(pg["cpu"], 60_000, first["dt"])
    assert "oom_kill" not in ui_entry
    assert (ui_entry["mem"], ui_entry["mem_nocache"]) == (56 * MIB, 52 * MIB)
    assert_rate(ui_entry["cpu"], 15_000, first["dt"])
    assert list(first["pressure"]) == ["cpu", "memory", "io"]
    assert_rate(first["pressure"]["cpu"], 30_000, first["dt"])
    assert first["pressure"]["memory"] == 0.0
    assert_rate(first["pressure"]["io"], 12_000, first["dt"])

    assert [entry["name"] for entry in second["containers"]] == ["postgres", "scheduler"]
    pg, scheduler = by_name(second)["postgres"], by_name(second)["scheduler"]
    assert pg["oom_kill"] == 3
    assert_rate(pg["cpu"], 90_000, second["dt"])
    assert (scheduler["cpu"], scheduler["oom_kill"]) == (0.0, 0)
    assert second["pressure"].keys() == {"cpu", "io"}
    assert_rate(second["pressure"]["cpu"], 45_000, second["dt"])
    assert_rate(second["pressure"]["io"], 3_000, second["dt"])


def test_the_bounds_helper_is_not_vacuous() -> None:
    """The checks above would pass anything if the bounds were wide. By hand: 6 / 0.3005 = 19.97 and 6 / 0.2995 =
    20.03, both 20.0; 3 / 0.3005 = 9.98 and 3 / 0.2995 = 10.02, both 10.0: at dt 0.3 the value is pinned."""
    assert rate_bounds(60_000, 0.3) == (20.0, 20.0)
    assert rate_bounds(30_000, 0.3) == (10.0, 10.0)


def test_without_cgroup_no_containers_key_and_without_psi_no_pressure_key(tmp_path: Path) -> None:
    """docs/behaviour.md §3.1: `containers` only with --cgroup; §3.9: no `pressure` key on a kernel without PSI."""
    (tmp_path / "proc").mkdir()
    line = json.loads(Sampler(0, "", [str(tmp_path)], proc=str(tmp_path / "proc")).line())
    assert "containers" not in line and "pressure" not in line


def test_an_unlistable_cgroup_root_is_null(tmp_path: Path) -> None:
    """docs/behaviour.md §3.10: the containers section is null when its root cannot be read; the line is still
    written."""
    line = json.loads(Sampler(0, "", [str(tmp_path)], cgroup=str(tmp_path / "gone"), proc=str(tmp_path)).line())
    assert line["containers"] is None


@pytest.mark.skipif(not os.path.isdir("/proc/pressure"), reason="this kernel has no PSI")
def test_the_live_line_has_three_pressure_values(tmp_path: Path) -> None:
    """docs/behaviour.md §3.9 on this machine's own kernel, when it has /proc/pressure."""
    sampler = Sampler(0, "", [str(tmp_path)])
    time.sleep(0.2)
    line = json.loads(sampler.line())
    assert list(line)[-3:] == ["self_cpu", "pressure", "start"]
    assert list(line["pressure"]) == ["cpu", "memory", "io"]
    assert all(0.0 <= value <= 100.0 for value in line["pressure"].values())


@pytest.mark.timeout(120)
@pytest.mark.requires_proc  # containers are read by the /proc readers only
def test_the_command_never_shows_a_secret(tmp_path: Path) -> None:
    """docs/behaviour.md §3.8 through the real command: every kind of names file at once; the secrets in a container's
    Env appear in no line, on neither stream; the huge file and the /dev/zero link cost nothing but a fallback."""
    cgroup, names = tmp_path / "cgroup", tmp_path / "containers"
    fixtures.tree_for_names(cgroup)
    fixtures.names_directory(names)
    command = [sys.executable, "-m", "orca.sample", "--out", "-", "--count", "2", "--seconds", "0.2",
               "--cgroup", str(cgroup), "--names", str(names), "--dirs", str(tmp_path)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=90, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert fixtures.SECRET_VALUE not in done.stdout and fixtures.SECRET_VALUE not in done.stderr
    assert "AKIA" not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("orca-sample ") for line in lines)
    for text in lines:
        line = json.loads(text.removeprefix("orca-sample "))
        assert [entry["name"] for entry in line["containers"]] == sorted(
            ["postgres", "vault", fixtures.ID_UI[:12], fixtures.ID_MALFORMED[:12], fixtures.ID_HUGE[:12],
             fixtures.ID_ZERO[:12]]
        )
