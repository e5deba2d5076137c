"""orca.control's rules are pure, as orca.sample's parse/ and compute/ are: the same checker, over its pure modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tests.boundary import violations

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "orca" / "control"
PURE = ["rules.py", "members.py"]


@pytest.mark.parametrize("name", PURE)
def test_no_io_in_the_rules(name: str) -> None:
    found = violations((PACKAGE / name).read_text())
    if name == "rules.py":
        # The one exception: `ControlLimits.from_env`'s default mapping is the process's environment.
        assert found == ["from os import ..."]
        imported = [
            alias.name
            for node in ast.walk(ast.parse((PACKAGE / name).read_text()))
            if isinstance(node, ast.ImportFrom) and node.module == "os"
            for alias in node.names
        ]
        assert imported == ["environ"]
    else:
        assert found == []


def test_the_shell_modules_are_the_rest() -> None:
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == sorted([*PURE, "__init__.py", "runs.py", "secrets.py"])
