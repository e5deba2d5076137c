"""The package as other orca modules import it (docs/behaviour.md §1.1, §1.4, §6), and the suite's own footing."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import orca.sample

CHECKOUT = Path(__file__).resolve().parents[1]
INIT = CHECKOUT / "src" / "orca" / "sample" / "__init__.py"
# The documented API as docs/api.md's table lists it (docs/behaviour.md §6).
DOCUMENTED = {
    "Sampler", "sample_main", "sample_seconds", "metrics_location", "machine_name", "stage_of", "default_dirs",
    "append_line", "alive", "tree_rss", "tree_usage", "parse_proc_stat", "parse_meminfo", "parse_diskstats",
    "parse_net_dev", "parse_pid_stat", "parse_pid_usage", "PidUsage", "cpu_share", "CpuShare", "fixed1",
    "container_mem", "container_name", "container_ids", "PREFIX",
    # What orca.control and other modules take from orca.sample (docs/api.md).
    "stage_root", "open_private", "aws_client", "process_stat", "process_stats", "read_newest_minute", "Now",
}


def test_the_suite_imports_this_checkouts_source() -> None:
    """An installed copy would let a broken source file pass: the package must be the one under src/ here."""
    assert Path(orca.sample.__file__).resolve() == INIT


def test_orca_is_a_namespace_package() -> None:
    """docs/behaviour.md §1.1: other distributions add their own orca.* modules."""
    assert not (CHECKOUT / "src" / "orca" / "__init__.py").exists()
    assert getattr(sys.modules["orca"], "__file__", None) is None


def test_the_documented_api_is_exported() -> None:
    assert set(orca.sample.__all__) >= DOCUMENTED


@pytest.mark.parametrize("name", orca.sample.__all__)
def test_every_exported_name_resolves_to_its_home(name: str) -> None:
    value = getattr(orca.sample, name)
    home = importlib.import_module(orca.sample._HOMES[name])
    assert value is getattr(home, name)
    assert name in dir(orca.sample)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="tree_rs"):
        _ = orca.sample.tree_rs  # type: ignore[attr-defined]
    assert not hasattr(orca.sample, "walk_tree")


def test_the_type_checkers_imports_are_the_exported_names() -> None:
    """The imports under TYPE_CHECKING give the type checker each name: they must name exactly `_HOMES`, each from
    its home and re-exported (`import x as x`), or a name would type-check as missing or as something else."""
    tree = ast.parse(INIT.read_text())
    guarded = next(
        node for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    )
    imported: dict[str, str] = {}
    for node in guarded.body:
        assert isinstance(node, ast.ImportFrom) and node.module is not None
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name} is not re-exported"
            imported[alias.name] = node.module
    assert imported == orca.sample._HOMES


def test_importing_the_package_loads_nothing_else() -> None:
    """docs/behaviour.md §1.4: names resolve on first use, so `import orca.sample` stays cheap."""
    program = "import sys, orca.sample; print(sorted(m for m in sys.modules if m.startswith('orca')))"
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(CHECKOUT / "src")},
    )
    assert result.stdout.split() == ["['orca',", "'orca.sample']"]


def test_no_file_is_imported_twice() -> None:
    """Each source and test file is one module (the suite's collection included): a second copy under another name
    would hold its own state and its own classes, so a test could pass against the copy and not the code."""
    by_file: dict[Path, set[str]] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and any(Path(path).resolve().is_relative_to(CHECKOUT / part) for part in ("src", "tests")):
            by_file.setdefault(Path(path).resolve(), set()).add(name)
    twice = {str(path): names for path, names in by_file.items() if len(names) > 1}
    assert twice == {}
    assert all(name.startswith(("orca.sample", "orca.control")) for path, names in by_file.items() for name in names
               if path.is_relative_to(CHECKOUT / "src"))


def test_ci_draws_the_same_examples_every_run_and_thorough_explores() -> None:
    """With CI set the property tests are derandomized; the `thorough` profile is the way to look further."""
    from hypothesis import settings

    assert settings.get_profile("ci").derandomize is True
    assert settings.get_profile("thorough").derandomize is False
    assert settings.get_profile("thorough").max_examples > settings.get_profile("ci").max_examples
    if os.environ.get("CI") and not os.environ.get("ORCA_HYPOTHESIS_PROFILE"):
        assert settings.default is not None and settings.default.derandomize is True
