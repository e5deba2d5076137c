"""A real S3-compatible server for the tests: moto's server mode in a subprocess on 127.0.0.1 and a free
port, started by the fixtures themselves and stopped at the end (or with pytest, if pytest dies first)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MOTO_SERVER = Path(sys.executable).with_name("moto_server")
DUMMY_KEY_ID = "testing-key-id"
DUMMY_SECRET = "testing-secret"
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _die_with_parent() -> None:
    # Linux: the server gets SIGTERM when pytest ends, however it ends, so no server outlives the tests.
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class MotoServer:
    """One `moto_server` on 127.0.0.1:port; stop() and start() again reuse the port (moto keeps its state in
    memory, so a restarted server starts empty)."""

    def __init__(self, log_dir: Path, environment: dict[str, str] | None = None) -> None:
        self._environment = {**os.environ, **(environment or {})}
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log_dir = log_dir
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert self._process is None
        log = (self._log_dir / f"moto-{self.port}.log").open("ab")
        self._process = subprocess.Popen(
            [str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self._environment,
            preexec_fn=_die_with_parent,
        )
        log.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"moto_server exited with {self._process.returncode}, see {self._log_dir}")
            try:
                with urllib.request.urlopen(self.url + "/moto-api/", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto_server did not answer on {self.url} within 20 s")

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def client(self, service: str = "s3") -> Any:
        import boto3

        return boto3.session.Session().client(
            service,
            endpoint_url=self.url,
            aws_access_key_id=DUMMY_KEY_ID,
            aws_secret_access_key=DUMMY_SECRET,
            region_name=REGION,
        )

    def new_bucket(self) -> str:
        name = f"orca-test-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def read(self, bucket: str, key: str) -> bytes | None:
        """The object's bytes, or None while it does not exist."""
        from botocore.exceptions import ClientError

        try:
            body: bytes = self.client().get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        return body


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


def aws_environment(base: dict[str, str], endpoint: str, tmp_path: Path, credentials: bool = True) -> dict[str, str]:
    """`base` without the host's AWS settings, pointed at `endpoint`; dummy credentials unless `credentials` is
    False. No profile files and no instance metadata: nothing of the machine running the tests leaks in."""
    env = {name: value for name, value in base.items() if not name.startswith("AWS_")}
    env |= {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "ORCA_LOG_STAGE": str(tmp_path / "stage"),
    }
    if credentials:
        env |= {"AWS_ACCESS_KEY_ID": DUMMY_KEY_ID, "AWS_SECRET_ACCESS_KEY": DUMMY_SECRET}
    return env


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
