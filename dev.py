#!/usr/bin/env python3
"""Set-up and entry point for a fresh clone: needs nothing but python3 3.11+.

    python3 dev.py sample --out run.jsonl -- COMMAND
                                               set up .venv, then run `orca sample ...` (here: sample COMMAND; then
                                               `.venv/bin/orca metrics run.jsonl` to look at it)
    python3 dev.py test [PYTEST ARGS]          set up the test tools, then ruff, mypy --strict, and pytest on each
                                               supported Python found (this one in .venv, the others in .venv-3.X),
                                               on two pytest workers a core (`-n 0` among the arguments: one)
    python3 dev.py bench                       set up .venv with the test and bench tools (pandas, duckdb), then bench/
    python3 dev.py lock [--upgrade]            resolve the locks in requirements/ again from pyproject.toml (what it
                                               adds or drops; --upgrade: everything at the newest its range allows),
                                               then run the whole suite with them

The virtual environments are beside this file. Each installs the exact versions, with their hashes, of a lock in
requirements/ (docs/architecture.md, "What a fresh clone installs"), then the project itself; it is installed again
only when pyproject.toml or that lock changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv"
BIN = VENV / "bin"
SUPPORTED = ("3.11", "3.12", "3.13")
"""The Pythons the suite runs on: the one running dev.py always (in `.venv`), each other one where it is found (in
`.venv-3.X`)."""
_PROBE = "import ensurepip, sys, venv; print('%d.%d' % sys.version_info[:2])"
"""Prints an interpreter's version, and fails where it cannot make a virtual environment with pip (a Debian python3.X
without its python3.X-venv package)."""


LOCKS = HERE / "requirements"
LOCKED = {"": "run.txt", "test": "test.txt", "test,bench": "bench.txt"}
"""The lock of each set-up, by the extras it installs: the sampler alone (`dev.py sample`), the test tools, and those
with the bench's. `test.txt` is resolved first; the others are held to its versions, so that every package they
share is the one the suite passed with."""
UV = "uv==0.13.9"
"""The resolver `dev.py lock` uses (in `.venv-lock`); installing from a lock needs only pip."""


def this_version() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def _extras(extra: str) -> set[str]:
    return {one for one in extra.split(",") if one}


def _stamp(extra: str) -> str:
    digest = hashlib.sha256((HERE / "pyproject.toml").read_bytes() + (LOCKS / LOCKED[extra]).read_bytes())
    return f"{digest.hexdigest()[:16]}:{extra}"


def _venv_version(venv: Path) -> str:
    """The `X.Y` of the Python a virtual environment was made with ("" when it has none)."""
    try:
        config = (venv / "pyvenv.cfg").read_text()
    except OSError:
        return ""
    found = re.search(r"^version(?:_info)?\s*=\s*(\d+\.\d+)", config, re.MULTILINE)
    return found.group(1) if found and (venv / "bin" / "python").exists() else ""


def ensure_venv(extra: str, venv: Path = VENV, python: str = sys.executable, version: str = "") -> None:
    """Create `venv` with `python` (of `version`, X.Y; this one by default), install the lock of `extra` and then the
    project (editable), unless its stamp says it is there."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may be run by an older python3
        sys.exit(f"orca-sample needs Python 3.11 or newer, this is {sys.version.split()[0]}")
    version = version or this_version()
    stamp_file = venv / ".orca-sample-installed"
    wanted = _stamp(extra)
    made = _venv_version(venv) == version  # not one another Python made (or whose Python is gone)
    have = set(stamp_file.read_text().split()) if made and stamp_file.exists() else set()
    # A lock that holds more, at the same versions (test.txt beside run.txt, bench.txt beside both), serves too.
    if any(_stamp(larger) in have for larger in LOCKED if _extras(extra) <= _extras(larger)):
        return
    if not made:
        print(f"dev.py: creating {venv} (Python {version}: {python})", file=sys.stderr, flush=True)
        subprocess.run([python, "-m", "venv", "--clear", str(venv)], cwd=HERE, check=True)
    lock = LOCKS / LOCKED[extra]
    print(f"dev.py: installing {lock.relative_to(HERE)} and orca-sample into {venv}", file=sys.stderr, flush=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # Every package at its locked version and hash; then the project alone, built by the locked setuptools.
    subprocess.run([*pip, "--require-hashes", "-r", str(lock)], cwd=HERE, check=True)
    subprocess.run([*pip, "--no-deps", "--no-build-isolation", "-e", "."], cwd=HERE, check=True)
    stamp_file.write_text(" ".join(sorted(have | {wanted})) + "\n")


def resolve_locks(upgrade: bool) -> None:
    """Resolve requirements/ again with uv: `test.txt` from pyproject.toml (keeping the versions it holds unless
    `upgrade`), then the others held to it. Every lock is universal (any platform, Python 3.11 and newer) and names
    each file's hash; the build requirement (setuptools) is in each."""
    import tomllib

    tool = HERE / ".venv-lock"
    if not (tool / "bin" / "uv").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(tool)], cwd=HERE, check=True)
        subprocess.run([str(tool / "bin" / "python"), "-m", "pip", "install", "--quiet", UV], cwd=HERE, check=True)
    build = "\n".join(tomllib.loads((HERE / "pyproject.toml").read_text())["build-system"]["requires"]) + "\n"
    LOCKS.mkdir(exist_ok=True)
    for extra, name in sorted(LOCKED.items(), key=lambda item: item[0] != "test"):  # test.txt first
        command = [str(tool / "bin" / "uv"), "pip", "compile", "pyproject.toml", "-", "--universal", "--python-version",
                   SUPPORTED[0], "--generate-hashes", "--custom-compile-command", "python3 dev.py lock", "--quiet",
                   "-o", str(LOCKS / name)]
        command += [f"--extra={one}" for one in sorted(_extras(extra))]
        if extra != "test":
            command += ["--constraint", str(LOCKS / LOCKED["test"])]
        elif upgrade:
            command.append("--upgrade")
        print(f"dev.py: resolving requirements/{name}", flush=True)
        subprocess.run(command, input=build, text=True, cwd=HERE, check=True)


def lock(upgrade: bool) -> int:
    """The locks resolved again, then the whole suite run with them: a lock is committed once it has passed."""
    resolve_locks(upgrade)
    ensure_venv("test")
    return run_checks([])


def compile_sources(venv: Path = VENV) -> None:
    """Byte-compile src/ ahead of use, as a wheel install does (only changed files are compiled again).

    An editable install imports src/ directly; where PYTHONDONTWRITEBYTECODE is set (CI images often set it) no
    .pyc is ever written, and every start of the sampler, in the tests and the benchmarks too, compiles each module
    again, a cost large beside the 0.2 s to the first line (docs/behaviour.md §2.2). Python still reads .pyc files it
    finds."""
    subprocess.run([str(venv / "bin" / "python"), "-m", "compileall", "-q", str(HERE / "src")], cwd=HERE, check=True)


def pyenv_root() -> Path | None:
    """pyenv's root: `PYENV_ROOT`, else what `pyenv root` prints, else `~/.pyenv`; None when it is no directory."""
    root = os.environ.get("PYENV_ROOT", "")
    if not root and shutil.which("pyenv"):
        try:
            root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=60).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            root = ""
    path = Path(root) if root else Path.home() / ".pyenv"
    return path if path.is_dir() else None


def find_python(version: str) -> str | None:
    """An interpreter of `version` (X.Y) that can make a virtual environment: the newest X.Y.Z under pyenv's root
    (`$(pyenv root)/versions/X.Y.Z/bin/pythonX.Y`), else `pythonX.Y` on PATH (a pyenv shim there runs only when
    pyenv has that version selected: it is tried, like any other); None when neither is found."""
    candidates: list[Path] = []
    root = pyenv_root()
    if root is not None:
        # Releases only (3.12.1, not 3.12-dev or 3.12.1t), the newest first.
        patches = {path: path.name[len(version) + 1 :] for path in (root / "versions").glob(f"{version}.*")}
        releases = sorted((int(patch), path) for path, patch in patches.items() if patch.isdigit())
        candidates += [path / "bin" / f"python{version}" for _, path in reversed(releases)]
    on_path = shutil.which(f"python{version}")
    if on_path is not None:
        candidates.append(Path(on_path))
    for candidate in candidates:
        try:
            probe = subprocess.run([str(candidate), "-c", _PROBE], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return str(candidate)
    return None


def other_pythons() -> list[tuple[str, str]]:
    """(X.Y, interpreter) of each supported Python other than this one that is found; each one missing is said once,
    on standard error."""
    found: list[tuple[str, str]] = []
    for version in SUPPORTED:
        if version == this_version():
            continue
        python = find_python(version)
        if python is None:
            print(
                f"dev.py: Python {version} not found (looked under $(pyenv root)/versions and for python{version} on "
                "PATH): the suite runs without it",
                file=sys.stderr,
                flush=True,
            )
        else:
            found.append((version, python))
    return found


def _run(title: str, step: list[str]) -> int:
    print(f"dev.py: {title}", flush=True)
    return subprocess.run(step, cwd=HERE).returncode


def test_workers() -> int:
    """pytest-xdist's workers: two a core, at most 8. Much of the suite's time is waiting (on the live processes,
    servers and timeouts its tests watch), which other tests can use; the live comparisons hold under that load."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(8, 2 * cores)


def run_checks(pytest_args: list[str]) -> int:
    """ruff and mypy --strict once, then the whole pytest suite on this Python and on each other supported one
    found; every step runs, and the first failure's status is returned."""
    others = other_pythons()
    failed: list[tuple[str, int]] = []
    for title, step in (("ruff check .", [str(BIN / "ruff"), "check", "."]), ("mypy", [str(BIN / "mypy")])):
        status = _run(title, step)
        if status != 0:
            failed.append((title, status))
    pythons = [(this_version(), VENV, sys.executable)]
    pythons += [(version, HERE / f".venv-{version}", python) for version, python in others]
    for version, venv, python in pythons:
        title = " ".join(["pytest", *pytest_args, f"on Python {version} ({venv.name})"])
        try:
            ensure_venv("test", venv, python, version)
            compile_sources(venv)
        except subprocess.CalledProcessError as error:
            print(f"dev.py: set-up of {venv.name} failed: {error}", file=sys.stderr, flush=True)
            failed.append((f"the set-up of Python {version}", 1))
            continue
        # The arguments given come after the workers, so `-n 0` runs the tests in one process.
        workers = ["-n", str(test_workers()), "--dist", "worksteal"]
        status = _run(title, [str(venv / "bin" / "python"), "-m", "pytest", *workers, *pytest_args])
        if status != 0:
            failed.append((f"pytest on Python {version}", status))
    passed_on = ", ".join(version for version, _, _ in pythons)
    if failed:
        print(f"dev.py: failed: {', '.join(title for title, _ in failed)}", flush=True)
        return failed[0][1]
    print(f"dev.py: ruff, mypy and pytest on Python {passed_on} passed", flush=True)
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
            return run_checks(rest)
        if command == "bench":
            ensure_venv("test,bench")
            compile_sources()
            return subprocess.run([str(BIN / "python"), "-m", "bench.run", *rest], cwd=HERE).returncode
        if command == "lock" and rest in ([], ["--upgrade"]):
            return lock(upgrade=bool(rest))
    except subprocess.CalledProcessError as error:
        print(f"dev.py: set-up failed: {error}", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
