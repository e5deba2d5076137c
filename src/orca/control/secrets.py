"""A run's secrets, read when the scheduler starts it: `ORCA_SECRET_FETCH <id>`, else Secrets Manager's API.

Every failure is a `SecretError` whose message names the secret's id and the reason, and never a value: not what a
fetch command printed, not what Secrets Manager returned. boto3 is imported only by `get_secret_value`, so a
scheduler that fetches with a command never loads it.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping
from typing import Any

from orca.control import procs
from orca.control.members import Members, ProcId, joined, run_members

FETCH_VARIABLE = "ORCA_SECRET_FETCH"
ENDPOINT_VARIABLE = "ORCA_SECRETS_ENDPOINT"
FETCH_SECONDS = 30.0
"""How long a fetch command may run before it is killed and the fetch fails."""
FETCH_LIMIT = 1 << 20
"""The most a fetch command may print, in bytes (Secrets Manager's largest secret is 64 KiB)."""
_POLL_SECONDS = 0.05
"""Where the kernel has no pidfds, how often a fetch command's exit is looked for while its output stays open."""
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
    standard error is the scheduler's. The command's own exit, with what it printed read, ends the fetch: whatever
    it left running (in its session or process group, or holding its output) is killed then. A non-zero exit, a
    signal, more than `timeout_seconds` or more than `FETCH_LIMIT` bytes printed is a SecretError naming the id
    and the reason, never the output.
    """
    command = environ.get(FETCH_VARIABLE, "")
    if not command:
        return get_secret_value(secret_id)
    words = _words(secret_id, command)
    if isinstance(words, SecretError):
        raise words
    if not words:
        raise SecretError(secret_id, f"{FETCH_VARIABLE} names no command")
    text = _utf8(_run_fetch([*words, secret_id], secret_id, timeout_seconds))
    if text is None:
        # The decoder's message quotes a byte of the value: it is not passed on, nor chained.
        raise SecretError(secret_id, f"{FETCH_VARIABLE} printed bytes that are not UTF-8")
    return text.rstrip("\n")


# A SecretError is raised outside any `except`, so that neither `__cause__` nor `__context__` leads from it to the
# exception it replaces, which may hold a value (a decoder's bytes, a timeout's output).


def _words(secret_id: str, command: str) -> list[str] | SecretError:
    try:
        return shlex.split(command)
    except ValueError as error:
        return SecretError(secret_id, f"{FETCH_VARIABLE} does not split into words: {error}")


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _run_fetch(argv: list[str], secret_id: str, timeout_seconds: float) -> bytes:
    """The standard output of `argv`, run as the leader of a session of its own: once it has exited (or run out of
    time, or printed too much), every process it left is killed, and then it is waited for."""
    started = _start(argv)
    if isinstance(started, str):
        raise SecretError(secret_id, f"{FETCH_VARIABLE}: cannot run {argv[0]!r}: {started}")
    with started as process:
        output, ended = _output(process, timeout_seconds)
        status = process.wait()
    if ended == "time":
        raise SecretError(secret_id, f"{FETCH_VARIABLE} did not finish within {timeout_seconds:g} s and was killed")
    if ended == "size":
        raise SecretError(secret_id, f"{FETCH_VARIABLE} printed more than {FETCH_LIMIT} bytes and was killed")
    if status < 0:
        raise SecretError(secret_id, f"{FETCH_VARIABLE} was killed by signal {-status}")
    if status != 0:
        raise SecretError(secret_id, f"{FETCH_VARIABLE} exited with status {status}")
    return output


def _start(argv: list[str]) -> subprocess.Popen[bytes] | str:
    """The fetch command started, or why it could not be (`strerror`)."""
    try:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True, close_fds=True
        )
    except OSError as error:
        return error.strerror or type(error).__name__


def _output(process: subprocess.Popen[bytes], timeout_seconds: float) -> tuple[bytes, str]:
    """What `process` printed until it exited (`"exit"`), ran out of time (`"time"`) or printed more than
    `FETCH_LIMIT` (`"size"`); then every process it left is killed (`_end_left`), it too if still running.

    Its exit is watched beside its output, so a child that keeps the output open does not hold the fetch: what the
    command printed is in the pipe by the time its exit is seen, and is read then."""
    assert process.stdout is not None
    out = process.stdout.fileno()
    os.set_blocking(out, False)
    start, inode = procs.start_of(process.pid), os.fstat(out).st_ino
    exit_fd = _pidfd(process.pid)
    deadline = time.monotonic() + timeout_seconds
    chunks: list[bytes] = []
    at_end, ended = False, ""
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            if exit_fd >= 0:
                selector.register(exit_fd, selectors.EVENT_READ)
            while not ended:
                exited = _exited(process.pid)
                if not at_end:
                    at_end = _read_available(out, chunks)
                    if at_end:
                        selector.unregister(out)
                if sum(map(len, chunks)) > FETCH_LIMIT:
                    ended = "size"
                elif exited:
                    ended = "exit"
                elif (left := deadline - time.monotonic()) <= 0:
                    ended = "time"
                else:
                    selector.select(left if exit_fd >= 0 else min(left, _POLL_SECONDS))
    finally:  # whatever ended the wait, nothing the command started outlives the fetch
        if exit_fd >= 0:
            os.close(exit_fd)
        _end_left(process.pid, start, frozenset() if at_end else procs.pipe_holders(inode, writing=True))
    return b"".join(chunks), ended


def _read_available(descriptor: int, chunks: list[bytes]) -> bool:
    """Appends what can be read from `descriptor` now; True at its end (every writer has closed it)."""
    while True:
        try:
            chunk = os.read(descriptor, 1 << 16)
        except BlockingIOError:
            return False
        if not chunk:
            return True
        chunks.append(chunk)


def _exited(pid: int) -> bool:
    """Whether our child `pid` has exited, without waiting for it: unwaited, its pid, group and session stay its own."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _pidfd(pid: int) -> int:
    """A descriptor that reads as ready when `pid` exits (Linux 5.3+), else -1 (its exit is then looked for)."""
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return -1


def _end_left(pid: int, start: int | None, holders: frozenset[int]) -> None:
    """Kills what the fetch command `pid` (started at `start`) left: its session's and process group's processes
    and their descendants, and any process holding its output open (a child that left with `setsid`) with its
    own; then the command's group once more, which also reaches it where there is no /proc."""

    def find(table: Mapping[int, ProcId]) -> Members:
        kept = [h for h in holders if h in table and (start is None or table[h].start >= start)]
        return joined([run_members(table, pid, start), *(run_members(table, h, None) for h in kept)])

    procs.end_all(find)
    # Not yet waited for, so the group's id is still the command's.
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


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
    reason = ""
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
        reason = "no AWS credentials (AWS_* environment, profile or instance role)"
    except NoRegionError:
        reason = "no AWS region (set AWS_REGION or AWS_DEFAULT_REGION)"
    except ClientError as error:
        details = error.response.get("Error", {})
        code, message = details.get("Code", "an error"), details.get("Message", "")
        reason = f"Secrets Manager answered {code}{f': {message}' if message else ''}"
    except BotoCoreError as error:
        # Connection refused, timeouts, a malformed endpoint: botocore's messages name the endpoint, not values.
        reason = f"Secrets Manager could not be reached: {error}"
    except ValueError as error:
        # botocore's "Invalid endpoint: ..." for an endpoint that is not a URL.
        reason = f"{ENDPOINT_VARIABLE} {endpoint!r} cannot be used: {error}"
    except Exception as error:  # every failure is a SecretError; this message may hold anything, so it is not shown
        reason = f"Secrets Manager failed ({type(error).__name__})"
    if reason:
        raise SecretError(secret_id, reason)
    return _value_of(secret_id, response)


def _value_of(secret_id: str, response: Mapping[str, Any]) -> str:
    text = response.get("SecretString")
    if isinstance(text, str):
        return text
    binary = response.get("SecretBinary")
    if isinstance(binary, bytes | bytearray):
        decoded = _utf8(bytes(binary))
        if decoded is None:
            raise SecretError(secret_id, "its SecretBinary is not UTF-8 text")
        return decoded
    raise SecretError(secret_id, "Secrets Manager returned neither SecretString nor SecretBinary")
