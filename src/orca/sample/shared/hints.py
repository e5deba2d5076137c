"""Hints that work as typed: `orca` named as this person can run it, and an install of an extra (`plot`, `cluster`)
that works from where orca-sample was installed (docs/metrics.md)."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable

COMMAND = "orca"


def which(name: str) -> str | None:
    """The file `name` is when typed: the first executable of that name on PATH (what `shutil.which` gives, without
    loading shutil into a help's start)."""
    for directory in os.get_exec_path():
        path = os.path.join(directory, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def orca_command(argv0: str | None = None, python: str | None = None,
                 which: Callable[[str], str | None] = which) -> str:
    """How to type `orca` here: `orca` when that is what `PATH` finds (the script this process was started as, or
    another install's when this one was started as a module), else the path it was started by (`.venv/bin/orca`),
    else this interpreter with `-m orca.sample`.

    >>> orca_command("orca", which=lambda name: "/usr/bin/orca"), orca_command(".venv/bin/orca", which=lambda _: None)
    ('orca', '.venv/bin/orca')
    >>> orca_command("/x/orca/sample/__main__.py", python="/v/bin/python3", which=lambda _: None)
    '/v/bin/python3 -m orca.sample'
    """
    argv0 = sys.argv[0] if argv0 is None else argv0
    found = which(COMMAND)
    if os.path.basename(argv0) == COMMAND:
        if os.sep not in argv0 or (found is not None and _same(found, argv0)):
            return COMMAND
        return shlex.quote(argv0)
    if found is not None:
        return COMMAND
    return f"{shlex.quote(sys.executable if python is None else python)} -m orca.sample"


def metrics_command(argv0: str | None = None) -> str:
    """`orca metrics` as this person can type it (`orca_command`); `python -m orca.sample` takes `metrics` too."""
    return f"{orca_command(argv0)} metrics"


def plot_install(python: str | None = None) -> str:
    """The command that installs what `--plot` needs (`extra_install` of the `plot` extra)."""
    return extra_install("plot", "matplotlib", python)


def extra_install(extra: str, package: str, python: str | None = None) -> str:
    """The command that installs the extra `extra` into the environment orca-sample runs in: pip of its own
    interpreter, from the directory it was installed from (as editable when it was), else `package` as the extra
    asks for it (an install from a package index)."""
    from importlib.metadata import distributions  # here: only a missing package asks

    pip = f"{shlex.quote(sys.executable if python is None else python)} -m pip install"
    # Every record of it on the path: a checkout's src/ can hold a stale `orca_sample.egg-info` from a build, which
    # says nothing of where it was installed from, ahead of the install's own.
    found = list(distributions(name="orca-sample"))
    for installed in found:
        origin = _installed_from(installed.read_text("direct_url.json"))
        if origin is not None:
            path, editable = origin
            return f"{pip} {'-e ' if editable else ''}{shlex.quote(f'{path}[{extra}]')}"
    if not found:  # run from a checkout's src/ that was never installed
        return f"{pip} {package}"
    wanted = [requirement.split(";")[0].strip() for requirement in found[0].requires or ()
              if "extra" in requirement and extra in requirement.split(";", 1)[-1]]
    return f"{pip} {shlex.quote(wanted[0] if wanted else package)}"


def _installed_from(direct_url: str | None) -> tuple[str, bool] | None:
    """The directory a distribution was installed from and whether as editable (PEP 610's `direct_url.json`), None
    when it came from a package index or an archive.

    >>> _installed_from('{"dir_info": {"editable": true}, "url": "file:///home/me/orca%20sample"}')
    ('/home/me/orca sample', True)
    >>> _installed_from(None), _installed_from('{"archive_info": {}, "url": "file:///tmp/x.whl"}')
    (None, None)
    """
    import json
    from urllib.parse import unquote, urlparse

    if not direct_url:
        return None
    try:
        data = json.loads(direct_url)
        url = urlparse(data["url"])
    except (ValueError, KeyError, TypeError):
        return None
    if url.scheme != "file" or not isinstance(data.get("dir_info"), dict):
        return None
    return unquote(url.path), bool(data["dir_info"].get("editable"))


def _same(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False
