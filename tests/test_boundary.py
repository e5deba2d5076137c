"""The sans-I/O boundary (docs/behaviour.md §7): nothing under parse/, compute/ or the read side's pure part
(readback/ but its shell/) does I/O or reads the clock, so the whole line, and all a summary or a chart computes, can
be tested from text and records."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.boundary import circles, imported, inside, violations

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


# The rooms (docs/architecture.md): the sampler's shell and the read side each stand on what is below both (the pure
# core, `line_format.py` and `shared/`), and neither reaches into the other; `orca`'s one entry point hands
# `orca metrics` to the read side.
MODULES = {
    ".".join(path.relative_to(PACKAGE.parents[1]).with_suffix("").parts).removesuffix(".__init__"): path
    for path in PACKAGE.rglob("*.py")
}
ENTRY_POINTS = {"orca.sample", "orca.sample.__main__", "orca.sample.shell.cli.main"}


def reaching(package: str, into: tuple[str, ...]) -> list[str]:
    return sorted(f"{module} imports {target}" for module, path in MODULES.items() if inside(module, package)
                  for target in imported(path.read_text()) if any(inside(target, other) for other in into))


def test_the_rooms_exist() -> None:
    assert {"orca.sample.shared.aws", "orca.sample.readback.shell.cli.metrics",
            "orca.sample.readback.sample_line"} <= set(MODULES)


def test_the_read_side_reaches_not_into_the_samplers_shell() -> None:
    assert reaching("orca.sample.readback", ("orca.sample.shell",)) == []


def test_what_both_sides_share_is_below_both() -> None:
    assert reaching("orca.sample.shared", ("orca.sample.shell", "orca.sample.readback")) == []


def test_the_core_reaches_into_no_shell_and_not_into_the_read_side() -> None:
    into = ("orca.sample.shell", "orca.sample.readback", "orca.sample.shared")
    assert reaching("orca.sample.parse", into) == reaching("orca.sample.compute", into) == []


def test_the_samplers_shell_reaches_the_read_side_only_from_the_entry_point() -> None:
    found = reaching("orca.sample.shell", ("orca.sample.readback",))
    assert found and all(line.split()[0] in ENTRY_POINTS for line in found), found


def test_the_read_sides_rooms_import_each_other_in_one_direction() -> None:
    """Folder by folder (`gather/`, `summary/`, `chart/`, `fleet/`, `shell/`, and each module beside them), no
    circle: the gather makes the records and series that the summary, the chart and the fleet say."""

    def room(module: str) -> str:
        return ".".join(module.split(".")[:4])

    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        if inside(module, "orca.sample.readback") and module != "orca.sample.readback":
            targets = {room(target) for target in imported(path.read_text())
                       if inside(target, "orca.sample.readback") and target != "orca.sample.readback"}
            edges.setdefault(room(module), set()).update(targets - {room(module)})
    assert circles(edges) == []


@pytest.mark.parametrize(("edges", "circle"), [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, False), ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, True),
    ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, False),
])
def test_the_circle_finder(edges: dict[str, set[str]], circle: bool) -> None:
    assert bool(circles(edges)) is circle
