"""The sans-I/O boundary (docs/behaviour.md §7): nothing under parse/ or compute/ does I/O, so the whole line can be
tested from text and records."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.boundary import violations

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "orca" / "sample"
PURE_DIRS = ("parse", "compute")
PURE_FILES = sorted(path for directory in PURE_DIRS for path in (PACKAGE / directory).rglob("*.py"))


def test_pure_packages_exist() -> None:
    assert len(PURE_FILES) >= 10, PURE_FILES


@pytest.mark.parametrize("path", PURE_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_io_in_pure_code(path: Path) -> None:
    assert violations(path.read_text()) == []


@pytest.mark.parametrize(
    "source",
    ["import os", "import os.path", "from time import monotonic", "import boto3", "x = open('f')",
     "from orca.sample.shell.out.files import append_line", "import subprocess as sp", "from io import StringIO"],
)
def test_the_checker_catches_io(source: str) -> None:
    assert violations(source) != []
