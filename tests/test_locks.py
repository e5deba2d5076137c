"""The locks in requirements/ against pyproject.toml (docs/architecture.md, "What a fresh clone installs"): each
requirement of a set-up is pinned in its lock, to a version its range allows, with the files' hashes; the locks held
to test.txt pin what they share with it at its versions. A range changed in pyproject.toml without `python3 dev.py
lock` fails here, by name, rather than installing something else or nothing."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

CHECKOUT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())
LOCKS = {"run.txt": [], "test.txt": ["test"], "bench.txt": ["test", "bench"]}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def pins(name: str) -> dict[str, tuple[Version, int]]:
    """Each package the lock installs on this interpreter: its version and how many hashes it names."""
    found: dict[str, tuple[Version, int]] = {}
    current = ""
    for line in (CHECKOUT / "requirements" / name).read_text().splitlines():
        pin = PIN.match(line)
        if pin is not None:
            package, version, marker = pin.groups()
            applies = marker is None or Requirement(f"x; {marker}").marker.evaluate()  # type: ignore[union-attr]
            current = canonicalize_name(package) if applies else ""
            if current:
                assert current not in found, f"{name}: {package} pinned twice for this interpreter"
                found[current] = (Version(version), 0)
        elif current and line.strip().startswith("--hash=sha256:"):
            version, hashes = found[current]
            found[current] = (version, hashes + 1)
    return found


def required(extras: list[str]) -> list[Requirement]:
    texts = list(PROJECT["project"]["dependencies"]) + list(PROJECT["build-system"]["requires"])
    for extra in extras:
        texts += PROJECT["project"]["optional-dependencies"][extra]
    return [Requirement(text) for text in texts]


@pytest.mark.parametrize("lock", LOCKS)
def test_each_requirement_is_pinned_within_its_range_with_hashes(lock: str) -> None:
    pinned = pins(lock)
    for requirement in required(LOCKS[lock]):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement} is not in requirements/{lock}: run python3 dev.py lock"
        version, _ = pinned[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"requirements/{lock} pins {name} {version}, outside {requirement}: run python3 dev.py lock"
        )
    assert all(hashes > 0 for _, hashes in pinned.values()), lock


@pytest.mark.parametrize("lock", ["run.txt", "bench.txt"])
def test_the_other_locks_install_the_tested_versions(lock: str) -> None:
    tested = pins("test.txt")
    for name, (version, _) in pins(lock).items():
        if name in tested:
            assert version == tested[name][0], f"requirements/{lock}: {name} {version}, tested with {tested[name][0]}"


def test_the_pin_reader_reads_what_uv_writes() -> None:
    # The shapes of uv's lines: a plain pin, one with a marker, and a continuation (hashes on the next lines).
    assert PIN.match("moto==5.2.6 \\").groups() == ("moto", "5.2.6", None)  # type: ignore[union-attr]
    marked = PIN.match("numpy==2.5.5 ; python_full_version >= '3.12' \\")
    assert marked is not None and marked.groups() == ("numpy", "2.5.5", "python_full_version >= '3.12'")
    assert PIN.match("    --hash=sha256:00") is None and PIN.match("    # via moto") is None
