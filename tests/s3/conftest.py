"""A real S3-compatible server for the tests: moto's server mode in a subprocess on 127.0.0.1 and a free
port, started by the fixtures themselves and stopped at the end (or with pytest, if pytest dies first)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.moto_server import MotoServer, aws_environment
from tests.s3.proxy import Authority, FaultProxy, fault_proxy


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoServer]:
    server = MotoServer(tmp_path_factory.mktemp("moto"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def restartable_server(tmp_path: Path) -> Iterator[MotoServer]:
    """A server of this test's own, which the test may stop and start again."""
    server = MotoServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def authorizing_server(tmp_path: Path) -> Iterator[MotoServer]:
    """A server that checks IAM permissions after its first three requests (moto's INITIAL_NO_AUTH_ACTION_COUNT):
    enough to make a bucket and a user without permissions, whose key then gets AccessDenied."""
    server = MotoServer(tmp_path, {"INITIAL_NO_AUTH_ACTION_COUNT": "3"})
    server.start()
    yield server
    server.stop()


@pytest.fixture
def bucket(s3_server: MotoServer) -> str:
    return s3_server.new_bucket()


@pytest.fixture
def s3_env(s3_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """This process's environment set for the session server (for in-process S3Sink tests); also returned, for
    subprocesses."""
    env = aws_environment(dict(os.environ), s3_server.url, tmp_path)
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ORCA_SAMPLE_UPLOAD_SECONDS", raising=False)
    return env


@pytest.fixture
def authority(tmp_path: Path) -> Authority:
    """A certificate authority of this test's own: `authority.bundle` is what a CA bundle setting must name."""
    return Authority(tmp_path)


@pytest.fixture
def proxy(s3_server: MotoServer, authority: Authority) -> Iterator[FaultProxy]:
    """A fault-injecting proxy in front of the session server, which can also answer TLS for AWS's host names."""
    with fault_proxy(s3_server.url, authority) as started:
        yield started


@pytest.fixture
def proxied_env(s3_env: dict[str, str], proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """`s3_env` with the proxy as the endpoint."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
    return s3_env | {"AWS_ENDPOINT_URL": proxy.url}
