#!/usr/bin/env python3
"""Set-up and entry point for a fresh clone: needs nothing but python3 3.11+.

    python3 dev.py sample --out - --count 3    set up .venv, then run `orca sample ...`
    python3 dev.py test                        set up .venv with the test tools, then ruff, mypy --strict, pytest
    python3 dev.py bench                       set up .venv with the test and bench tools (pandas), then bench/

The virtual environment is `.venv` beside this file; it is (re)installed only when pyproject.toml changed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv"
BIN = VENV / "bin"


def _stamp(extra: str) -> str:
    digest = hashlib.sha256((HERE / "pyproject.toml").read_bytes()).hexdigest()[:16]
    return f"{digest}:{extra}"


def ensure_venv(extra: str) -> None:
    """Create .venv and install the project (editable) with `extra`, unless the stamp says it is there."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may be run by an older python3
        sys.exit(f"orca-sample needs Python 3.11 or newer, this is {sys.version.split()[0]}")
    stamp_file = VENV / ".orca-sample-installed"
    wanted = {_stamp(""), _stamp(extra)} if extra else {_stamp("")}
    have = set(stamp_file.read_text().split()) if stamp_file.exists() else set()
    if wanted <= have:
        return
    if not (BIN / "python").exists():
        print(f"dev.py: creating {VENV}", file=sys.stderr, flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    target = f".[{extra}]" if extra else "."
    print(f"dev.py: installing orca-sample{f'[{extra}]' if extra else ''} into {VENV}", file=sys.stderr, flush=True)
    subprocess.run(
        [str(BIN / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", target],
        cwd=HERE,
        check=True,
    )
    stamp_file.write_text(" ".join(sorted(have | wanted)) + "\n")


def compile_sources() -> None:
    """Byte-compile src/ ahead of use, as a wheel install does (only changed files are compiled again).

    An editable install imports src/ directly; where PYTHONDONTWRITEBYTECODE is set (CI images often set it) no
    .pyc is ever written, and every start of the sampler, in the tests and the benchmarks too, compiles each module
    again, a cost large beside the 0.2 s to the first line (docs/behaviour.md §2.2). Python still reads .pyc files it
    finds."""
    subprocess.run([str(BIN / "python"), "-m", "compileall", "-q", str(HERE / "src")], cwd=HERE, check=True)


def run_checks(pytest_args: list[str]) -> int:
    """ruff, mypy --strict and the whole pytest suite; the first failure's status is returned."""
    steps = [
        [str(BIN / "ruff"), "check", "."],
        [str(BIN / "mypy")],
        [str(BIN / "python"), "-m", "pytest", *pytest_args],
    ]
    for step in steps:
        print(f"dev.py: {' '.join(Path(step[0]).name if i == 0 else a for i, a in enumerate(step))}", flush=True)
        status = subprocess.run(step, cwd=HERE).returncode
        if status != 0:
            return status
    return 0


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    try:
        if command == "sample":
            ensure_venv("")
            compile_sources()
            os.execv(str(BIN / "orca"), [str(BIN / "orca"), "sample", *rest])
        if command == "test":
            ensure_venv("test")
            compile_sources()
            return run_checks(rest)
        if command == "bench":
            ensure_venv("test,bench")
            compile_sources()
            return subprocess.run([str(BIN / "python"), "-m", "bench.run", *rest], cwd=HERE).returncode
    except subprocess.CalledProcessError as error:
        print(f"dev.py: set-up failed: {error}", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
