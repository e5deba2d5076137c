"""The pressure hold end to end: sample files (real `orca sample` output edited by hand, see samples/README.md) read
back through the sampler's own reader, then `pressure_reason`."""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.control import pressure_reason
from orca.sample import read_newest_minute

SAMPLES = Path(__file__).with_name("samples")
# Ten seconds after the capture's last line (t 1796032069.833): its newest minute is fresh.
NOW = 1796032079.833


def _reason(name: str) -> str:
    return pressure_reason(read_newest_minute(str(SAMPLES / name), now=NOW))


def test_the_real_capture_holds_nothing() -> None:
    # Memory 1,263,824,896 .. 1,404,387,328 of 25,276,510,208 bytes is 5-6%; /tmp 27,010,351,104 / (27,010,351,104 +
    # 81,933,942,784) is 24.8%.
    minute = read_newest_minute(str(SAMPLES / "capture.linux-6.18.44-fc-v657.x86_64-2cores.jsonl"), now=NOW)
    assert minute is not None and minute.lines == 3
    assert _reason("capture.linux-6.18.44-fc-v657.x86_64-2cores.jsonl") == ""


def test_memory_at_84_percent_lets_a_run_start() -> None:
    # (83 + 84 + 85) / 3 = 84% over the newest minute; the 99% line 100 s earlier is outside it. /tmp: 84 / (84 + 16).
    minute = read_newest_minute(str(SAMPLES / "memory-84.jsonl"), now=NOW)
    assert minute is not None
    assert minute.lines == 3
    assert minute.memory_percent == pytest.approx(84.0)
    assert minute.disk_percent == pytest.approx(84.0)
    assert _reason("memory-84.jsonl") == ""


def test_memory_at_86_percent_holds_runs() -> None:
    # (85 + 86 + 87) / 3 = 86%, from the prefixed lines of a pod's log; the cut-off 99% line is not read.
    assert _reason("memory-86.log") == "control instance: memory 86% over 85%"


def test_the_fullest_disk_at_90_percent_holds_runs() -> None:
    # /data: 90,000,000,000 / (90,000,000,000 + 10,000,000,000) = 90% (of `total` it would be 85.7%); memory 50%.
    assert _reason("disk-90.jsonl") == "control instance: disk /data 90% over 85%"


def test_old_samples_hold_nothing() -> None:
    # Newest line at 1796031769.833: 310 s before NOW. At 99% memory and disk, they would hold if they were fresh.
    assert read_newest_minute(str(SAMPLES / "old.jsonl"), now=NOW) is None
    assert _reason("old.jsonl") == ""
    assert pressure_reason(read_newest_minute(str(SAMPLES / "old.jsonl"), now=1796031769.833 + 10)) == (
        "control instance: memory 99% over 85%, disk /tmp 99% over 85%"
    )


def test_missing_samples_hold_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    for path in (tmp_path / "no-such-file.jsonl", tmp_path / "empty.jsonl"):
        assert read_newest_minute(str(path), now=NOW) is None
        assert pressure_reason(read_newest_minute(str(path), now=NOW)) == ""
