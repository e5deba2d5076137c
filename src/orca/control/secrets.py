"""A run's secrets, read when the scheduler starts it: `ORCA_SECRET_FETCH <id>`, else Secrets Manager's API.

Every failure is a `SecretError` whose message names the secret's id and the reason, and never a value: not what a
fetch command printed, not what Secrets Manager returned. boto3 is imported only by `get_secret_value`, so a
scheduler that fetches with a command never loads it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from collections.abc import Mapping
from typing import Any

FETCH_VARIABLE = "ORCA_SECRET_FETCH"
ENDPOINT_VARIABLE = "ORCA_SECRETS_ENDPOINT"
FETCH_SECONDS = 30.0
"""How long a fetch command may run before it is killed and the fetch fails."""
# Secrets Manager: an endpoint that does not answer fails the start within about
# MAX_ATTEMPTS × (CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS), never hangs the scheduler's tick.
CONNECT_TIMEOUT_SECONDS = 5.0
READ_TIMEOUT_SECONDS = 10.0
MAX_ATTEMPTS = 2


class SecretError(Exception):
    """A secret that could not be read: `id` names it, `reason` says why; neither ever holds its value."""

    def __init__(self, secret_id: str, reason: str) -> None:
        super().__init__(f"secret {secret_id!r}: {reason}")
        self.id = secret_id
        self.reason = reason


def fetch_secret(
    secret_id: str, *, environ: Mapping[str, str] = os.environ, timeout_seconds: float = FETCH_SECONDS
) -> str:
    """The value of the secret `secret_id`: with `ORCA_SECRET_FETCH` set (and not empty), what
    `ORCA_SECRET_FETCH <id>` prints, as the instances' scripts read it; else `get_secret_value(secret_id)`.

    The variable is split into words as a shell splits them (quotes and backslashes), but no shell runs; the id is
    one more argument, whatever it holds. Trailing newlines are dropped, as `$(...)` drops them. The command's
    standard error is the scheduler's. A non-zero exit, a signal, or more than `timeout_seconds` is a
    SecretError naming the id and the exit status, never the output.
    """
    command = environ.get(FETCH_VARIABLE, "")
    if not command:
        return get_secret_value(secret_id)
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise SecretError(secret_id, f"{FETCH_VARIABLE} does not split into words: {error}") from None
    if not words:
        raise SecretError(secret_id, f"{FETCH_VARIABLE} names no command")
    output = _run_fetch([*words, secret_id], secret_id, timeout_seconds)
    try:
        return output.decode("utf-8").rstrip("\n")
    except UnicodeDecodeError:
        # The decoder's own message quotes a byte of the value: it is not passed on.
        raise SecretError(secret_id, f"{FETCH_VARIABLE} printed bytes that are not UTF-8") from None


def _run_fetch(argv: list[str], secret_id: str, timeout_seconds: float) -> bytes:
    """The standard output of `argv`, run in a process group of its own so that a timeout kills all of it (a
    script's `sleep` too, which would otherwise hold the output pipe open)."""
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, process_group=0, close_fds=True
        )
    except OSError as error:
        raise SecretError(secret_id, f"{FETCH_VARIABLE}: cannot run {argv[0]!r}: {error.strerror}") from None
    with process:
        try:
            output, _ = process.communicate(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            # The group is still ours: its leader is our child and not yet waited for, so its id is not reused.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise SecretError(
                secret_id, f"{FETCH_VARIABLE} did not finish within {timeout_seconds:g} s and was killed"
            ) from None
    status = process.returncode
    if status < 0:
        raise SecretError(secret_id, f"{FETCH_VARIABLE} was killed by signal {-status}")
    if status != 0:
        raise SecretError(secret_id, f"{FETCH_VARIABLE} exited with status {status}")
    return output


def get_secret_value(secret_id: str) -> str:
    """Secrets Manager's `GetSecretValue` of `secret_id`: its `SecretString`, or its `SecretBinary` decoded as
    UTF-8.

    Credentials are boto3's chain (the `AWS_*` environment, a profile, the instance role); `ORCA_SECRETS_ENDPOINT`,
    when set, is the endpoint (an S3-compatible test server, a VPC endpoint). An endpoint that does not answer
    fails within the bounds above. Every failure is a SecretError.
    """
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

    from orca.sample import aws_client

    endpoint = os.environ.get(ENDPOINT_VARIABLE, "") or None
    try:
        client: Any = aws_client(
            "secretsmanager",
            connect_seconds=CONNECT_TIMEOUT_SECONDS,
            read_seconds=READ_TIMEOUT_SECONDS,
            attempts=MAX_ATTEMPTS,
            endpoint_url=endpoint,
        )
        response: Mapping[str, Any] = client.get_secret_value(SecretId=secret_id)
    except NoCredentialsError:
        raise SecretError(secret_id, "no AWS credentials (AWS_* environment, profile or instance role)") from None
    except NoRegionError:
        raise SecretError(secret_id, "no AWS region (set AWS_REGION or AWS_DEFAULT_REGION)") from None
    except ClientError as error:
        details = error.response.get("Error", {})
        code, message = details.get("Code", "an error"), details.get("Message", "")
        raise SecretError(secret_id, f"Secrets Manager answered {code}{f': {message}' if message else ''}") from None
    except BotoCoreError as error:
        # Connection refused, timeouts, a malformed endpoint: botocore's messages name the endpoint, not values.
        raise SecretError(secret_id, f"Secrets Manager could not be reached: {error}") from None
    return _value_of(secret_id, response)


def _value_of(secret_id: str, response: Mapping[str, Any]) -> str:
    text = response.get("SecretString")
    if isinstance(text, str):
        return text
    binary = response.get("SecretBinary")
    if isinstance(binary, bytes | bytearray):
        try:
            return bytes(binary).decode("utf-8")
        except UnicodeDecodeError:
            raise SecretError(secret_id, "its SecretBinary is not UTF-8 text") from None
    raise SecretError(secret_id, "Secrets Manager returned neither SecretString nor SecretBinary")
