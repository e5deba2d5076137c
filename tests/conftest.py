"""Shared test settings: hypothesis's profile (`tests/examples.py`), one loader of AWS's service descriptions, the
signals the tests' processes start with, and the two sources of readings."""

from __future__ import annotations

import functools
import signal
from collections.abc import Iterator

import pytest

from orca.sample.shell.machine.choice import READER_VARIABLE, proc_stat_readable, psutil_installed
from tests import examples

examples.load_profile()


@pytest.fixture(autouse=True, scope="session")
def _one_loader_of_aws_service_descriptions() -> Iterator[None]:
    """Every boto3 session of the test process (the code under test makes one per client it needs) shares one
    botocore loader of the service descriptions and endpoint rules, which are the same for every session: parsing
    them again, tens of JSON files, was most of the time an S3 test took. Everything else of a session (its
    environment, config files, credentials, endpoint and settings) is still its own."""
    import botocore.loaders
    import botocore.session

    patch = pytest.MonkeyPatch()
    patch.setattr(botocore.session, "create_loader", functools.cache(botocore.loaders.create_loader))
    yield
    patch.undo()


def pytest_configure(config: pytest.Config) -> None:
    """The processes the tests start, the signal tests' among them, begin with SIGHUP, SIGINT, SIGQUIT and SIGTERM at
    their defaults: a suite run under `nohup` (or as a shell's background job, SIGINT and SIGQUIT ignored) would
    otherwise hand them on ignored, and a sampler leaves a signal ignored at its start ignored (docs/behaviour.md
    §2.4, §9.3)."""
    for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT):
        if signal.getsignal(signum) == signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# --- the two sources of readings ------------------------------------------------------------------------------------

HAS_PROC = proc_stat_readable()
"""This machine has a Linux /proc: the tests that read it, or compare with it, run only then."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_PROC:
        return
    skip = pytest.mark.skip(reason="reads this machine's /proc, which it does not have")
    for item in items:
        if "requires_proc" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_reader_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader forced in the environment the tests run in does not leak into them; `sample_reader` sets one."""
    monkeypatch.delenv(READER_VARIABLE, raising=False)


@pytest.fixture(params=["proc", "psutil"])
def sample_reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test once per reader, forced through ORCA_SAMPLE_READER (inherited by the samplers it starts);
    each is skipped where it cannot run (no /proc; psutil not installed)."""
    reader = str(request.param)
    if reader == "proc" and not HAS_PROC:
        pytest.skip("no /proc on this machine")
    if reader == "psutil" and not psutil_installed():
        pytest.skip("psutil is not installed")
    monkeypatch.setenv(READER_VARIABLE, reader)
    return reader
