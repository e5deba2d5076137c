"""orca.control's rules are pure, as orca.sample's parse/ and compute/ are: the same checker, over its pure modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.boundary import violations

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "orca" / "control"
PURE = ["rules.py", "members.py", "cgroup_text.py"]


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
    shell = ["__init__.py", "runs.py", "cap.py", "secrets.py", "procs.py", "cgroups.py", "ledger.py"]
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == sorted([*PURE, *shell])


def test_only_orca_samples_public_names_are_used() -> None:
    """orca.control builds on orca.sample as any other orca module does: through the names it exports."""
    import orca.sample

    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("orca.sample"):
                assert node.module == "orca.sample", f"{path.name} imports {node.module}"
                assert {alias.name for alias in node.names} <= set(orca.sample.__all__), path.name
            if isinstance(node, ast.Import):
                assert not any(alias.name.startswith("orca.sample") for alias in node.names), path.name
