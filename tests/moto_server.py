"""A real S3-compatible server for the tests: moto's server mode in a subprocess on 127.0.0.1 and a free port,
stopped at the end (or with pytest, if pytest dies first); and an environment that points AWS clients at it and at
nothing of the machine running the tests. Used by the S3 tests and by orca.control's secrets tests."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

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
        self._clients: dict[str, Any] = {}
        self._clients_lock = threading.Lock()

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

    @property
    def pid(self) -> int:
        """The server's process id, while it runs."""
        assert self._process is not None
        return self._process.pid

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
        """A boto3 client straight to this server, whatever endpoint, addressing, proxy or partition settings a
        test has put in the environment or the AWS config file for the client under test. Made once per service
        and kept, as a client is slow to make and safe to share between threads; it outlives a stop() and start(),
        which keep the port."""
        with self._clients_lock:
            if service not in self._clients:
                self._clients[service] = self._new_client(service)
            return self._clients[service]

    def _new_client(self, service: str) -> Any:
        import boto3
        from botocore.config import Config

        config = Config(
            s3={"addressing_style": "path", "use_accelerate_endpoint": False, "use_dualstack_endpoint": False},
            use_fips_endpoint=False,
            use_dualstack_endpoint=False,
            proxies={"http": "", "https": ""},
        )
        return boto3.session.Session().client(
            service,
            endpoint_url=self.url,
            aws_access_key_id=DUMMY_KEY_ID,
            aws_secret_access_key=DUMMY_SECRET,
            region_name=REGION,
            config=config,
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
