"""The line as text, from the real command on each reader: keys and their order, decimals, nulls, the prefix and
the newline. docs/line.md is the reference."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.shell.run import no_traceback, run

pytestmark = pytest.mark.usefixtures("sample_reader")

KEYS = ["v", "t", "dt", "host", "cores", "cpu", "mem", "disk", "io", "net", "containers", "self_cpu"]
PERCENT_KEYS = ("user", "system", "iowait", "steal", "busiest")
MEM_KEYS = ["total", "used", "available", "cache", "swap_total", "swap_used", "rss"]


def decimals(raw: str, key: str) -> list[str]:
    """The fraction digits of every number written after `"key":` in the raw line ("" for a whole number)."""
    return [fraction or "" for fraction in re.findall(rf'"{key}":-?\d+(?:\.(\d+))?(?=[,}}])', raw)]


def test_keys_order_decimals_and_nulls(tmp_path: Path, sample_reader: str) -> None:
    """`--cgroup` at an empty directory: the /proc reader lists no container (`[]`); the psutil reader has no cgroup
    source, so `null`. `pressure` only from the /proc reader, on a kernel with PSI."""
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    done = run("--out", "-", "--count", "3", "--seconds", "0.2", "--cgroup", str(cgroup), "--dirs", str(tmp_path))
    assert done.returncode == 0
    no_traceback(done.stderr)
    assert done.stderr == b""
    text = done.stdout.decode()
    assert text.endswith("\n")
    raws = text.splitlines()
    assert len(raws) == 3
    for prefixed in raws:
        assert prefixed.startswith("orca-sample {")
        raw = prefixed.removeprefix("orca-sample ")
        line = json.loads(raw)
        pressure = ["pressure"] if "pressure" in line else []
        assert list(line) == [*KEYS, *pressure, "start"]
        assert not pressure or sample_reader == "proc"
        assert line["containers"] == ([] if sample_reader == "proc" else None)
        assert line["v"] == 1 and isinstance(line["cores"], int) and line["cores"] >= 1
        assert list(line["cpu"]) == list(PERCENT_KEYS)
        for key in PERCENT_KEYS:
            assert [len(fraction) for fraction in decimals(raw, key)] == [1], (key, raw)
            assert 0.0 <= line["cpu"][key] <= 100.0
        assert list(line["mem"]) == MEM_KEYS
        assert all(isinstance(value, int) and value >= 0 for value in line["mem"].values())
        assert line["mem"]["used"] == line["mem"]["total"] - line["mem"]["available"]
        assert [disk["path"] for disk in line["disk"]] == [str(tmp_path)]
        assert list(line["io"]) == ["read", "write"] and list(line["net"]) == ["in", "out"]
        assert all(isinstance(value, int) for value in (*line["io"].values(), *line["net"].values()))
        assert all(len(fraction) <= 3 for key in ("t", "dt", "start") for fraction in decimals(raw, key))
        assert all(len(fraction) <= 2 for fraction in decimals(raw, "self_cpu"))
        assert not re.search(r"\d[eE][-+]?\d|NaN|Infinity", raw)
