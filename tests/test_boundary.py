"""The sans-I/O boundary (docs/behaviour.md §7): nothing under parse/, compute/ or the read side's pure part
(readback/ but its shell/) does I/O or reads the clock, so the whole line, and all a summary or a chart computes, can
be tested from text and records."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.boundary import violations

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "orca" / "sample"
PURE_DIRS = ("parse", "compute", "readback")
SHELL_DIRS = (PACKAGE / "readback" / "shell",)
PURE_FILES = sorted(path for directory in PURE_DIRS for path in (PACKAGE / directory).rglob("*.py")
                    if not any(shell in path.parents for shell in SHELL_DIRS))


def test_pure_packages_exist() -> None:
    assert len(PURE_FILES) >= 10, PURE_FILES
    assert any(path.parent.name == "readback" for path in PURE_FILES)


@pytest.mark.parametrize("path", PURE_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_io_in_pure_code(path: Path) -> None:
    assert violations(path.read_text()) == []


@pytest.mark.parametrize(
    "source",
    ["import os", "import os.path", "from time import monotonic", "import time as clock\nclock.monotonic()",
     "import boto3", "x = open('f')", "from orca.sample.shell.out.files import append_line",
     "from orca.sample.readback.shell.sources import sources", "import subprocess as sp",
     "import io\nio.open('f')", "from io import FileIO", "from datetime import datetime\ndatetime.now()",
     "import datetime\ndatetime.date.today()"],
)
def test_the_checker_catches_io(source: str) -> None:
    assert violations(source) != []


@pytest.mark.parametrize(
    "source",
    ["from io import BytesIO\nBytesIO(b'a').readlines()", "import time\ntime.strftime('%Y', (2026,) + (0,) * 8)",
     "from datetime import UTC, datetime\ndatetime.fromtimestamp(0, UTC).isoformat()"],
)
def test_what_is_pure_of_a_module_passes(source: str) -> None:
    """Memory streams and a given time formatted are not I/O."""
    assert violations(source) == []
