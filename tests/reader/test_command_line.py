"""The `orca` command line as a person first meets it: the version, an unknown flag named before a missing one, and
help texts that end with an example (docs/behaviour.md §5, §11.3)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ORCA = Path(sys.executable).parent / "orca"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def orca(*args: str) -> subprocess.CompletedProcess[str]:
    """The `orca` console script, or the dispatcher it runs where the script is not installed beside Python."""
    command = [str(ORCA)] if ORCA.exists() else [
        sys.executable, "-c", "import sys; from orca.sample.shell.cli.main import console_main; console_main()"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_the_version_is_the_distributions(flag: str) -> None:
    expected = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    done = orca(flag)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"orca-sample {expected}\n", "")


@pytest.mark.parametrize("args", [
    ["metrics", "--bogus"],  # LOCATION is missing too
    ["metrics", "run.jsonl", "--bogus"],
    ["sample", "--bogus"],  # --out is missing too
    ["sample", "--bogus", "--count", "1"],
    ["sample", "--out", "-", "--bogus"],
])
def test_an_unknown_flag_is_named_before_a_missing_one(args: list[str]) -> None:
    done = orca(*args)
    assert done.returncode == 2
    first = done.stderr.splitlines()[0]
    assert first == f"orca {args[0]}: unrecognized arguments: --bogus"
    assert "required" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("args", "missing"), [(["metrics"], "LOCATION"), (["sample", "--count", "1"], "--out")])
def test_without_an_unknown_flag_the_missing_one_is_named(args: list[str], missing: str) -> None:
    done = orca(*args)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == f"orca {args[0]}: the following arguments are required: {missing}"


def test_a_bad_value_is_still_told_as_itself() -> None:
    """A flag's value that is wrong is the reason given, whatever else is wrong too."""
    done = orca("sample", "--seconds", "soon", "--bogus")
    assert done.returncode == 2
    assert done.stderr.startswith("orca sample: argument --seconds: not 0 (off) or from 0.001 to 1000000 seconds")


@pytest.mark.parametrize(("command", "example"), [
    ("sample", " sample --out run.jsonl --seconds 1 -- make -j4"),
    ("metrics", " metrics run.jsonl "),
])
def test_each_commands_help_ends_with_an_example(command: str, example: str) -> None:
    done = orca(command, "--help")
    assert done.returncode == 0
    tail = done.stdout.rstrip("\n").split("\n\n")[-1]
    assert tail.startswith("examples:\n") and example in tail


def test_orca_help_names_the_version_flag() -> None:
    done = orca("--help")
    assert done.returncode == 0 and "orca --version" in done.stdout
