"""Both readers on this machine over the same interval: the psutil reader (what macOS and the BSDs use) must give
what the /proc reader gives, on the load, memory, writes and traffic this test causes itself.

Each line's readings are taken back to back (the /proc reader's, then the psutil reader's, at the start and at the
end), so both cover the same interval to within milliseconds; what other processes do meanwhile is seen by both.

The traffic never leaves the machine: it crosses a veth pair between this network namespace and one the test
creates (and deletes) itself, on a /30 that exists only on that link. Without root, `ip` or network namespaces the
test is skipped.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from orca.sample.shell.sampler import Sampler
from tests.shell.psutil_trees import HOLDS, MIB, started_tree

pytest.importorskip("psutil")
pytestmark = [pytest.mark.requires_proc, pytest.mark.slow]

SPIN = "import os\nif hasattr(os, 'sched_setaffinity'):\n    os.sched_setaffinity(0, {0})\nwhile True:\n    pass\n"
WRITTEN = 48 * MIB
DATAGRAMS, DATAGRAM = 2000, 1400
IP = shutil.which("ip") or shutil.which("ip", path="/usr/sbin:/sbin")
PRIVATE = ipaddress.IPv4Network("10.0.0.0/8")


@contextmanager
def spinning() -> Iterator[None]:
    """A steady load: one process spinning on core 0."""
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        time.sleep(0.3)
        yield
    finally:
        spinner.kill()
        spinner.wait()


def write_then_read_back(path: Path) -> None:
    """`WRITTEN` bytes written and fsync'd to the disk under `path`, dropped from the page cache, and read again
    (so they are read from the disk)."""
    block = os.urandom(MIB)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for _ in range(WRITTEN // MIB):
            os.write(fd, block)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    fd = os.open(path, os.O_RDONLY)
    try:
        while os.read(fd, MIB):
            pass
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class VethLink:
    """A veth pair: `interface` (at `address`) in this network namespace, its peer (at `far_address`) in
    `namespace`."""

    namespace: str
    interface: str
    address: str
    far_interface: str
    far_address: str


def ip(*args: str, namespace: str | None = None) -> subprocess.CompletedProcess[str]:
    assert IP is not None
    in_namespace = ["-n", namespace] if namespace else []
    return subprocess.run([IP, *in_namespace, *args], capture_output=True, text=True, timeout=30, check=False)


def ip_or_skip(*args: str, namespace: str | None = None) -> subprocess.CompletedProcess[str]:
    done = ip(*args, namespace=namespace)
    if done.returncode != 0:
        pytest.skip(f"cannot set up a veth pair in a network namespace: `ip {' '.join(args)}`: {done.stderr.strip()}")
    return done


def unused_subnet() -> ipaddress.IPv4Network:
    """A /30 in 10.0.0.0/8 that no route of this namespace (in any table) overlaps, so the only way to its
    addresses is the veth link given them; where to start looking depends on the pid, so that concurrent runs
    pick different ones."""
    routes = json.loads(ip_or_skip("-j", "-4", "route", "show", "table", "all").stdout or "[]")
    taken = [
        network
        for route in routes
        if route.get("dst", "default") != "default"
        and (network := ipaddress.ip_network(route["dst"], strict=False)).prefixlen > 0
    ]
    subnets = PRIVATE.num_addresses // 4
    for step in range(subnets):
        first = int(PRIVATE.network_address) + 4 * ((os.getpid() + step) % subnets)
        candidate = ipaddress.IPv4Network((first, 30))
        if not any(candidate.overlaps(network) for network in taken):
            return candidate
    pytest.skip("every /30 of 10.0.0.0/8 is already routed somewhere")


def link_address(interface: str, namespace: str | None = None) -> str:
    address: str = json.loads(ip_or_skip("-j", "link", "show", interface, namespace=namespace).stdout)[0]["address"]
    return address


def route_device(destination: str, namespace: str | None = None) -> str:
    device: str = json.loads(ip("-j", "route", "get", destination, namespace=namespace).stdout)[0]["dev"]
    return device


@pytest.fixture
def veth_link() -> Iterator[VethLink]:
    """A network namespace of this test's own and a veth pair into it, deleted afterwards whatever happens."""
    if IP is None:
        pytest.skip("no `ip` (iproute2) to create a network namespace with")
    if os.geteuid() != 0:
        pytest.skip("creating a network namespace and a veth pair needs root")
    pid = os.getpid()
    namespace, interface, far_interface = f"orca-test-{pid}", f"orca{pid}r", f"orca{pid}n"
    subnet = unused_subnet()
    address, far_address = (str(host) for host in subnet.hosts())
    ip_or_skip("netns", "add", namespace)
    try:
        ip_or_skip("link", "add", interface, "type", "veth", "peer", "name", far_interface)
        ip_or_skip("link", "set", far_interface, "netns", namespace)
        ip_or_skip("address", "add", f"{address}/30", "dev", interface)
        ip_or_skip("address", "add", f"{far_address}/30", "dev", far_interface, namespace=namespace)
        ip_or_skip("link", "set", interface, "up")
        ip_or_skip("link", "set", far_interface, "up", namespace=namespace)
        # Neighbours fixed up front: no datagram waits on (or is dropped during) address resolution.
        mac, far_mac = link_address(interface), link_address(far_interface, namespace)
        ip_or_skip("neighbour", "replace", far_address, "lladdr", far_mac, "dev", interface, "nud", "permanent")
        ip_or_skip(
            "neighbour", "replace", address, "lladdr", mac, "dev", far_interface, "nud", "permanent",
            namespace=namespace,
        )  # fmt: skip
        # Nothing this test sends may take another way out.
        assert route_device(far_address) == interface
        assert route_device(address, namespace) == far_interface
        yield VethLink(namespace, interface, address, far_interface, far_address)
    finally:
        ip("link", "delete", interface)
        ip("netns", "delete", namespace)


# Run inside the namespace: a socket to receive what this side sends (so nothing is answered with an ICMP error),
# its port printed; then the datagrams to this side, the bytes sent printed; then held open until stdin closes.
FAR_SIDE = """
import socket, sys
far_address, address, port, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sink.bind((far_address, 0))
print(sink.getsockname()[1], flush=True)
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
    print(sum(udp.sendto(b"y" * size, (address, port)) for _ in range(count)), flush=True)
sys.stdin.read()
"""


def exchange(link: VethLink) -> tuple[int, int]:
    """`DATAGRAMS` datagrams each way over `link`: (bytes the far side sent here, bytes sent from here to it)."""
    assert IP is not None
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sink,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
    ):
        sink.bind((link.address, 0))
        far_side = subprocess.Popen(
            [IP, "netns", "exec", link.namespace, sys.executable, "-I", "-c", FAR_SIDE, link.far_address,
             link.address, str(sink.getsockname()[1]), str(DATAGRAMS), str(DATAGRAM)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert far_side.stdin is not None and far_side.stdout is not None
        try:
            far_port = int(far_side.stdout.readline())
            sent = sum(udp.sendto(b"x" * DATAGRAM, (link.far_address, far_port)) for _ in range(DATAGRAMS))
            received = int(far_side.stdout.readline())
        finally:
            far_side.stdin.close()
            try:
                far_side.wait(timeout=30)
            except subprocess.TimeoutExpired:
                far_side.kill()
                far_side.wait()
        return received, sent


def within(a: float, b: float, fraction: float) -> bool:
    return abs(a - b) <= fraction * max(abs(a), abs(b))


def test_both_readers_agree(tmp_path: Path, veth_link: VethLink) -> None:
    # The veth pair exists before the first readings: an interface that appears counts 0 for that interval.
    with started_tree() as tree, spinning():
        dirs = [str(tmp_path), "/proc"]
        samplers = {reader: Sampler(tree.pid, "", dirs, reader=reader) for reader in ("proc", "psutil")}
        # A first line from each, back to back, so both intervals start together: making the psutil sampler (its
        # imports, its first readings) would otherwise fall inside the /proc sampler's interval alone.
        for sampler in samplers.values():
            sampler.line()
        time.sleep(0.3)
        write_then_read_back(tmp_path / "written")
        received, sent = exchange(veth_link)
        time.sleep(0.5)
        lines: dict[str, dict[str, Any]] = {reader: json.loads(sampler.line()) for reader, sampler in samplers.items()}
    proc, psutil_line = lines["proc"], lines["psutil"]

    assert proc["cores"] == psutil_line["cores"]
    assert proc["mem"]["total"] == psutil_line["mem"]["total"]
    assert proc["mem"]["swap_total"] == psutil_line["mem"]["swap_total"]
    assert within(proc["mem"]["available"], psutil_line["mem"]["available"], 0.01)

    # Others write to these file systems meanwhile: the same entries, sizes equal, use within 64 MiB.
    assert [(d["path"], d["total"]) for d in proc["disk"]] == [(d["path"], d["total"]) for d in psutil_line["disk"]]
    for ours, theirs in zip(proc["disk"], psutil_line["disk"], strict=True):
        assert abs(ours["free"] - theirs["free"]) < 64 << 20
        assert abs(ours["used"] - theirs["used"]) < 64 << 20

    # The spinner keeps one core busy for the whole interval.
    assert proc["cpu"]["busiest"] > 75
    for key in ("user", "system", "iowait", "steal", "busiest"):
        assert abs(proc["cpu"][key] - psutil_line["cpu"][key]) <= 5, (key, proc["cpu"], psutil_line["cpu"])

    assert proc["mem"]["rss"] >= 3 * HOLDS * MIB
    assert within(proc["mem"]["rss"], psutil_line["mem"]["rss"], 0.02)

    for line in lines.values():
        # What this test caused is in each reader's rates (others' writes only add to them).
        assert line["io"]["write"] * line["dt"] >= 0.9 * WRITTEN, line
        assert line["io"]["read"] * line["dt"] >= 0.9 * WRITTEN, line
    for key in ("read", "write"):
        assert within(proc["io"][key], psutil_line["io"][key], 0.10), (key, proc["io"], psutil_line["io"])

    print(
        f"\nsent {sent} B, received {received} B over the veth pair; net B/s over {proc['dt']:.2f} s:"
        f" /proc in {proc['net']['in']} out {proc['net']['out']},"
        f" psutil in {psutil_line['net']['in']} out {psutil_line['net']['out']}"
    )
    for line in lines.values():
        # Interface counters include the frames' headers, and others' traffic only adds to them.
        assert line["net"]["out"] * line["dt"] >= 0.9 * sent, line
        assert line["net"]["in"] * line["dt"] >= 0.9 * received, line
    for key in ("in", "out"):
        assert within(proc["net"][key], psutil_line["net"][key], 0.10), (key, proc["net"], psutil_line["net"])
