"""The sans-I/O boundary (docs/behaviour.md §7): nothing under parse/ or compute/ does I/O, so the whole line can be
tested from text and records."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "orca" / "sample"
PURE_DIRS = ("parse", "compute")
# Modules whose import alone means files, processes, clocks, the network or signals.
FORBIDDEN_MODULES = {
    "os", "io", "time", "boto3", "botocore", "subprocess", "socket", "shutil", "pathlib", "signal",
    "threading", "select", "tempfile", "glob", "resource", "sys", "urllib", "http", "datetime",
}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "__import__"}

PURE_FILES = sorted(path for directory in PURE_DIRS for path in (PACKAGE / directory).rglob("*.py"))


def violations(source: str) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom):
            root = (node.module or "").split(".")[0]
            if node.level == 0 and root in FORBIDDEN_MODULES:
                found.append(f"from {node.module} import ...")
            if node.module == "orca.sample.shell" or (node.module or "").startswith("orca.sample.shell."):
                found.append(f"from {node.module} import ... (the shell)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            found.append(f"{node.func.id}() at line {node.lineno}")
    return found


def test_pure_packages_exist() -> None:
    assert len(PURE_FILES) >= 10, PURE_FILES


@pytest.mark.parametrize("path", PURE_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_io_in_pure_code(path: Path) -> None:
    assert violations(path.read_text()) == []


@pytest.mark.parametrize(
    "source",
    ["import os", "import os.path", "from time import monotonic", "import boto3", "x = open('f')",
     "from orca.sample.shell.files import append_line", "import subprocess as sp", "from io import StringIO"],
)
def test_the_checker_catches_io(source: str) -> None:
    assert violations(source) != []
