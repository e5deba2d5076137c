"""A proxy on 127.0.0.1 in front of the moto server, for the tests and the benchmark: it records every request it
passes on (method, host, path, query, headers) and injects faults into chosen ones.

It is reached two ways, as a client reaches a store:
- as the endpoint itself (`AWS_ENDPOINT_URL=proxy.url`): path-style requests, passed on to moto as they are;
- as an HTTPS proxy (`HTTPS_PROXY=proxy.url`) for requests to AWS's own host names: the client asks to `CONNECT`
  to `BUCKET.s3.REGION.amazonaws.com:443`, the proxy answers the TLS handshake itself with a certificate for that
  host signed by a certificate authority of the test's own (`Authority`), which the client trusts only when
  its CA bundle setting names it, reads the requests inside, and passes them on to moto with their host name (moto
  serves virtual-host and path-style requests alike). So the test sees which host and path the client chose.

A fault is matched against each request before it is passed on: answered with an S3 error instead, the connection
dropped without an answer, passed on and its answer lost, or passed on late. The server runs in a daemon thread of
the test's process and stops with `stop()`, or with the process.
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import io
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True, slots=True)
class Seen:
    """One request as the proxy received it."""

    method: str
    host: str
    """The host the client addressed: the `CONNECT` target's name, else the `Host` header's."""
    path: str
    """Percent-encoded, as sent."""
    query: dict[str, list[str]]
    headers: dict[str, str]
    """Lower-case names."""
    body_bytes: int

    @property
    def is_copy(self) -> bool:
        """An `UploadPartCopy` (or a `CopyObject`)."""
        return self.method == "PUT" and "x-amz-copy-source" in self.headers

    @property
    def part(self) -> int:
        """The part number of an `UploadPart` or `UploadPartCopy`, else 0."""
        return int(self.query.get("partNumber", ["0"])[0])

    @property
    def operation(self) -> str:
        """The S3 operation, for the few this project's clients make."""
        if self.method == "PUT":
            return "UploadPartCopy" if self.is_copy and self.part else "UploadPart" if self.part else "PutObject"
        if self.method == "POST":
            return "CreateMultipartUpload" if "uploads" in self.query else "CompleteMultipartUpload"
        if self.method == "DELETE":
            return "AbortMultipartUpload" if "uploadId" in self.query else "DeleteObject"
        if self.method == "HEAD":
            return "HeadObject"
        if "uploads" in self.query:
            return "ListMultipartUploads"
        return "ListObjectsV2" if "list-type" in self.query else "GetObject"


@dataclass(slots=True)
class Fault:
    """What to do to the requests `matches` picks, `times` of them (None: every one)."""

    matches: Callable[[Seen], bool]
    action: str
    """`answer` (an S3 error `status`/`code` instead of passing it on), `drop` (close the connection without an
    answer), `lose` (pass it on, then close without the answer), `delay` (pass it on `seconds` late), `stall` (pass
    it on, send the answer's first `after` bytes, then nothing for `seconds`, then close)."""
    status: int = 0
    code: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    after: int = 0
    times: int | None = 1
    hits: int = 0


def error_body(code: str, message: str = "") -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message or code}</Message>'
        "<RequestId>orca-test-proxy</RequestId></Error>"
    ).encode()


class Authority:
    """A certificate authority made for one test, and the certificates it signs for the host names asked for."""

    def __init__(self, directory: Path) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self._x509, self._hashes, self._serialization, self._ec = x509, hashes, serialization, ec
        self._directory = directory
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "orca test authority")])
        self._name = name
        self._cert = (
            self._builder(name, self._key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                    key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self._key, hashes.SHA256())
        )
        self.bundle = directory / "test-ca.pem"
        """The authority's certificate: what a client's CA bundle setting must name to trust the proxy."""
        self.bundle.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def _builder(self, subject: Any, public_key: Any) -> Any:
        now = datetime.datetime.now(datetime.UTC)
        return (
            self._x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._name)
            .public_key(public_key)
            .serial_number(self._x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
        )

    def context_for(self, host: str) -> ssl.SSLContext:
        """A server-side TLS context presenting a certificate for `host`."""
        with self._lock:
            context = self._contexts.get(host)
            if context is not None:
                return context
            x509, serialization = self._x509, self._serialization
            key = self._ec.generate_private_key(self._ec.SECP256R1())
            subject = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, host[:64])])
            cert = (
                self._builder(subject, key.public_key())
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
                .sign(self._key, self._hashes.SHA256())
            )
            stem = self._directory / f"leaf-{len(self._contexts)}"
            stem.with_suffix(".crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
            stem.with_suffix(".key").write_bytes(
                key.private_bytes(
                    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
                )
            )
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(stem.with_suffix(".crt"), stem.with_suffix(".key"))
            self._contexts[host] = context
            return context


@dataclass(slots=True)
class _State:
    upstream: tuple[str, int]
    authority: Authority | None
    delay_seconds: float
    seen: list[Seen] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    failing_from: Callable[[Seen], bool] | None = None
    failing: bool = False
    in_flight: dict[str, int] = field(default_factory=dict)
    most_in_flight: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @contextlib.contextmanager
    def flying(self, operation: str) -> Iterator[None]:
        with self.lock:
            now = self.in_flight[operation] = self.in_flight.get(operation, 0) + 1
            self.most_in_flight[operation] = max(now, self.most_in_flight.get(operation, 0))
        try:
            yield
        finally:
            with self.lock:
                self.in_flight[operation] -= 1

    def fault_for(self, request: Seen) -> Fault | None:
        with self.lock:
            self.seen.append(request)
            if self.failing_from is not None and (self.failing or self.failing_from(request)):
                self.failing = True
                return Fault(lambda _: True, "drop")
            for fault in self.faults:
                if (fault.times is None or fault.hits < fault.times) and fault.matches(request):
                    fault.hits += 1
                    return fault
        return None


class _Writer(io.RawIOBase):
    """Writes go out at once and whole (as the base class's own writer for a plain socket): a `100 Continue` must
    not wait in a buffer."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._sock.sendall(data)
        return len(data)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    tunnel_host = ""

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test's output is not the place for an access log

    def do_CONNECT(self) -> None:
        state = self.server.state
        host = self.path.rpartition(":")[0]
        if state.authority is None:
            self.send_error(501, "this proxy was started without a certificate authority")
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        try:
            tls = state.authority.context_for(host).wrap_socket(self.connection, server_side=True)
        except (ssl.SSLError, OSError):
            # The client refused our certificate (no CA bundle naming the test's authority): as it should.
            self.close_connection = True
            return
        # The base class goes on reading requests from these, now inside the tunnel.
        self.connection = tls
        self.rfile = tls.makefile("rb")
        self.wfile = cast(Any, _Writer(tls))
        self.tunnel_host = host
        self.close_connection = False  # http.client asks for the tunnel in HTTP/1.0, which would end it here

    def _body(self) -> tuple[bytes, int]:
        """The request's body as it came (chunked framing kept: botocore's `aws-chunked` bodies are framed that
        way, and moto reads them so), and the length of its content."""
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
            return body, len(body)
        raw, length = [], 0
        while True:
            line = self.rfile.readline()
            raw.append(line)
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            raw.append(self.rfile.read(size) + self.rfile.readline())
            length += size
        while True:  # the trailer, up to its blank line
            line = self.rfile.readline()
            raw.append(line)
            if line in (b"\r\n", b"\n", b""):
                break
        return b"".join(raw), length

    def _handle(self) -> None:
        state = self.server.state
        body, length = self._body()
        target = urlsplit(self.path)
        host = self.tunnel_host or target.hostname or self.headers.get("Host", "").rpartition(":")[0]
        path = target.path or "/"
        query = parse_qs(target.query, keep_blank_values=True)
        request = Seen(self.command, host, path, query, {k.lower(): v for k, v in self.headers.items()}, length)
        with state.flying(request.operation):
            self._handle_seen(request, state.fault_for(request), target.query, body)

    def _handle_seen(self, request: Seen, fault: Fault | None, query: str, body: bytes) -> None:
        state = self.server.state
        path = request.path
        if state.delay_seconds:
            time.sleep(state.delay_seconds)
        if fault is not None and fault.action == "drop":
            self._drop()
            return
        if fault is not None and fault.action == "answer":
            self._answer(fault.status, error_body(fault.code), fault.headers)
            return
        if fault is not None and fault.action == "delay":
            time.sleep(fault.seconds)
        status, headers, answer = self._pass_on(path + (f"?{query}" if query else ""), body)
        if fault is not None and fault.action == "lose":
            self._drop()
            return
        self.send_response(status)
        for name, value in headers:
            # moto's own Content-Length stands (a HEAD's is the object's size); the connection is this proxy's.
            if name.lower() not in ("connection", "transfer-encoding", "keep-alive"):
                self.send_header(name, value)
        self.end_headers()
        if fault is not None and fault.action == "stall":
            self.wfile.write(answer[:fault.after])
            self.wfile.flush()
            time.sleep(fault.seconds)
            self._drop()
            return
        self.wfile.write(answer)

    def _pass_on(self, path: str, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection(*self.server.state.upstream, timeout=60)
        try:
            skip = {"connection", "proxy-connection", "content-length", "expect", "keep-alive"}
            connection.putrequest(self.command, path, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() not in skip and (self.tunnel_host or name.lower() != "host"):
                    connection.putheader(name, value)
            if not self.tunnel_host:
                # Path-style requests go to moto as to itself; inside a tunnel the host name says the bucket.
                connection.putheader("Host", "{}:{}".format(*self.server.state.upstream))
            if "Transfer-Encoding" not in self.headers:
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()

    def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, state: _State) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away mid-answer (a dropped or timed-out request) is what some tests do


class FaultProxy:
    """The proxy in front of `upstream` (moto's `http://127.0.0.1:PORT`); `url` is where it listens."""

    def __init__(self, upstream: str, authority: Authority | None = None, delay_seconds: float = 0.0) -> None:
        parts = urlsplit(upstream)
        self._state = _State((parts.hostname or "127.0.0.1", parts.port or 80), authority, delay_seconds)
        self._server = _Server(self._state)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        # stop() waits for the serving loop to look at its flag, which it does every poll interval (0.5 s by
        # default): a short one keeps each test's stop short.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fault-proxy", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def seen(self) -> list[Seen]:
        with self._state.lock:
            return list(self._state.seen)

    def most_in_flight(self, operation: str) -> int:
        """The most requests of `operation` the proxy was handling at once."""
        with self._state.lock:
            return self._state.most_in_flight.get(operation, 0)

    def forget(self) -> None:
        with self._state.lock:
            self._state.seen.clear()

    def add(self, fault: Fault) -> Fault:
        with self._state.lock:
            self._state.faults.append(fault)
        return fault

    def answer(
        self,
        matches: Callable[[Seen], bool],
        status: int,
        code: str,
        times: int | None = 1,
        headers: dict[str, str] | None = None,
    ) -> Fault:
        return self.add(Fault(matches, "answer", status=status, code=code, headers=headers or {}, times=times))

    def drop(self, matches: Callable[[Seen], bool], times: int | None = 1) -> Fault:
        return self.add(Fault(matches, "drop", times=times))

    def lose(self, matches: Callable[[Seen], bool], times: int | None = 1) -> Fault:
        return self.add(Fault(matches, "lose", times=times))

    def delay(self, matches: Callable[[Seen], bool], seconds: float, times: int | None = 1) -> Fault:
        return self.add(Fault(matches, "delay", seconds=seconds, times=times))

    def stall(self, matches: Callable[[Seen], bool], after: int, seconds: float, times: int | None = 1) -> Fault:
        return self.add(Fault(matches, "stall", seconds=seconds, after=after, times=times))

    def fail_from(self, matches: Callable[[Seen], bool]) -> None:
        """From the first request `matches` picks on, drop every request (the network gone) until `heal()`."""
        with self._state.lock:
            self._state.failing_from, self._state.failing = matches, False

    def heal(self) -> None:
        with self._state.lock:
            self._state.failing_from, self._state.failing = None, False
            self._state.faults.clear()


@contextlib.contextmanager
def fault_proxy(upstream: str, authority: Authority | None = None) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream, authority)
    try:
        yield proxy
    finally:
        proxy.stop()
