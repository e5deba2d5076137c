"""The host's Docker containers, from cgroup v2 files and Docker's config files (docs/behaviour.md §3.8).

Read-only mounts of the host's `/sys/fs/cgroup` and `/var/lib/docker/containers` stand in for the Docker socket, so
the sampler stays unprivileged. Every read here is bounded: a file in those trees may be hostile (huge, a device, a
FIFO), and a sampler never fails or hangs because of one (docs/behaviour.md §3.10).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from returns.result import Failure, Result, Success
from toolz import keyfilter

from orca.sample.compute.snapshot import ContainerNet, ContainerReading
from orca.sample.parse import net_dev
from orca.sample.parse.cgroup import (
    container_id,
    container_name,
    cpu_periods,
    flat_keyed,
    io_stat,
    memory_current,
    memory_max,
    pids_current,
)
from orca.sample.parse.errors import ParseError, reason_of
from orca.sample.parse.numbers import u64
from orca.sample.shared.bounded import KeptFiles, read_or_none
from orca.sample.shared.sysconf import kept_files_at_most

READ_LIMIT = 1 << 20
"""At most 1 MiB of any file is read (docs/behaviour.md §3.8); a longer file counts as unparsable."""

SYSTEMD_SLICE = "system.slice"
CGROUPFS_PARENT = "docker"
ID_PREFIX_LENGTH = 12
PIDS_TRIED = 8
"""At most this many processes of `cgroup.procs` are tried for a readable `/proc/<pid>/net/dev` in a line: when
the first few cannot be read, the sampler does not see the container's pid namespace, and the rest cannot be read
either."""
_HOST_PID = "1"
T = TypeVar("T")
KEPT_AT_MOST = 1024
"""Cgroup files kept open (each holds a page of kernel memory), and within the open-files limit's share
(`kept_files_at_most`, docs/behaviour.md §4.6): the sampler must never run out of descriptors for its output and its
own reads."""


def read_bounded(path: str, limit: int = READ_LIMIT) -> str | None:
    """The text of the regular file at `path`, or None if it is not one, cannot be read, or holds over `limit` bytes
    (a device or FIFO is never opened: `shared/bounded.py`)."""
    data = read_or_none(path, limit)
    return None if data is None else data.decode("utf-8", errors="replace")


def _text(files: KeptFiles, path: str) -> Result[str, ParseError]:
    """A cgroup or proc file read every line through a kept descriptor: the first step of its chain to a record."""
    try:
        return Success(files.read(path, READ_LIMIT).decode("utf-8", errors="replace"))
    except OSError as error:
        return Failure(ParseError.of(path, error))


def _usage_usec(cpu_stat: Mapping[str, int]) -> int | None:
    return cpu_stat.get("usage_usec")


def _namespace_link(proc: str, pid: str) -> str | None:
    """`net:[inode]`, the link `/proc/<pid>/ns/net`; None when it cannot be read (it needs ptrace access)."""
    try:
        return os.readlink(os.path.join(proc, pid, "ns", "net"))
    except OSError:
        return None


def _namespace_file(proc: str, pid: str) -> str | None:
    """Device and inode of `/proc/<pid>/net/dev`, readable without privilege: each network namespace has its own
    proc entries, so two processes show the same inode exactly when they share a namespace."""
    try:
        status = os.stat(os.path.join(proc, pid, "net", "dev"))
    except OSError:
        return None
    return f"net/dev:{status.st_dev}:{status.st_ino}"


def own_namespace(proc: str, pid: str) -> str | None:
    """What names `pid`'s network namespace, or None when it is the host's (pid 1's) or cannot be told apart."""
    link, host_link = _namespace_link(proc, pid), _namespace_link(proc, _HOST_PID)
    if link is not None and host_link is not None:
        return None if link == host_link else link
    file, host_file = _namespace_file(proc, pid), _namespace_file(proc, _HOST_PID)
    if file is not None and host_file is not None:
        return None if file == host_file else file
    return None


@dataclass(slots=True)
class _NetChoice:
    """The process a container's network is read through, chosen once and kept while it is in `cgroup.procs`."""

    pid: str
    namespace: str | None
    """None: the host's namespace (or one that can't be told from it): the container has no `net`."""


def _subdirectories(path: str) -> list[str] | None:
    """Names of the directories in `path`; None when it cannot be listed."""
    try:
        with os.scandir(path) as entries:
            return [entry.name for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return None


def _listing(root: str) -> list[tuple[str, str]]:
    """(id, directory) of every container under `root`, sorted by id; `OSError` when `root` cannot be listed."""
    os.listdir(root)
    found: dict[str, str] = {}
    systemd = os.path.join(root, SYSTEMD_SLICE)
    for name in _subdirectories(systemd) or []:
        identifier = container_id(name) if name.startswith("docker-") and name.endswith(".scope") else None
        if identifier is not None:
            found.setdefault(identifier, os.path.join(systemd, name))
    cgroupfs = os.path.join(root, CGROUPFS_PARENT)
    for name in _subdirectories(cgroupfs) or []:
        identifier = container_id(name) if not name.startswith("docker-") else None
        if identifier is not None:
            found.setdefault(identifier, os.path.join(cgroupfs, name))
    return sorted(found.items())


def container_ids(root: str) -> list[tuple[str, str]]:
    """The documented API's (docs/api.md): the Docker containers' cgroups under `root` as (id, directory),
    sorted by id (docs/behaviour.md §6).

    Both layouts: the systemd driver's `system.slice/docker-<id>.scope` and cgroupfs's `docker/<id>`; ids are 64
    hex characters. Empty when `root` cannot be listed.
    """
    try:
        return _listing(root)
    except OSError:
        return []


_DOCKER_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}")
"""Docker's own rule for container names (daemon/names: `[a-zA-Z0-9][a-zA-Z0-9_.-]+`), bounded to 255 characters."""


class ContainerSource:
    """Reads the containers under a cgroup root once per line, naming them from a Docker containers directory."""

    def __init__(self, cgroup: str, names: str, proc: str = "/proc") -> None:
        self._cgroup = cgroup
        self._names = names
        self._proc = proc
        # id → name, read once per id (the fallback too): config.v2.json is large and only its name is wanted.
        self._known: dict[str, str] = {}
        self._files = KeptFiles(min(KEPT_AT_MOST, kept_files_at_most()))
        self._net: dict[str, _NetChoice] = {}
        """id → the process its network is read through."""

    def read(self) -> tuple[ContainerReading, ...] | None:
        """One reading per container whose files parse; None when the cgroup root cannot be listed."""
        return self.readings().value_or(None)

    def readings(self) -> Result[tuple[ContainerReading, ...], ParseError]:
        """One reading per container whose files parse; a failure naming the cgroup root when it cannot be listed."""
        try:
            listing = _listing(self._cgroup)
        except OSError as error:
            return Failure(ParseError(self._cgroup, reason_of(error)))
        # Forget containers that are gone, so a sampler that never ends does not grow with container churn.
        listed = frozenset(identifier for identifier, _ in listing).__contains__
        self._known = keyfilter(listed, self._known)
        self._net = keyfilter(listed, self._net)
        self._files.keep_only(tuple(directory + os.sep for _, directory in listing) + self._net_paths())
        readings = (self._reading(identifier, directory) for identifier, directory in listing)
        return Success(tuple(reading for reading in readings if reading is not None))

    def close(self) -> None:
        """Close the descriptors kept between lines."""
        self._files.close()

    def _reading(self, identifier: str, directory: str) -> ContainerReading | None:
        """None for a container that vanished or whose memory files don't parse: it is left out, silently. Each of
        its files is read and parsed in one chain (`bind`): a failure on the way leaves that part None."""

        def parsed(name: str, parse: Callable[[str], Result[T, ParseError]]) -> Result[T, ParseError]:
            return _text(self._files, os.path.join(directory, name)).bind(parse)

        current = parsed("memory.current", memory_current).value_or(None)
        memory_stat = parsed("memory.stat", functools.partial(flat_keyed, source="memory.stat")).value_or(None)
        if current is None or memory_stat is None:
            return None
        events = parsed("memory.events", functools.partial(flat_keyed, source="memory.events")).value_or(None)
        cpu = parsed("cpu.stat", functools.partial(flat_keyed, source="cpu.stat"))
        usage: int | None = cpu.map(_usage_usec).value_or(None)
        limit: int | None = parsed("memory.max", memory_max).value_or(None)  # None too for `max`: no limit
        return ContainerReading(
            container_id=identifier,
            name=self._name(identifier),
            memory_current=current,
            memory_stat=memory_stat,
            memory_events=events,
            cpu_usage_usec=usage,
            cpu_periods=cpu.bind(cpu_periods).value_or(None),
            memory_max=limit,
            pids=parsed("pids.current", pids_current).value_or(None),
            io=parsed("io.stat", io_stat).value_or(None),
            net=self._container_net(identifier, directory),
        )

    def _container_net(self, identifier: str, directory: str) -> ContainerNet | None:
        """The network of the container's namespace, through the first of its processes whose `net/dev` can be read
        (kept while it stays in the container); None when none can, or when it shares the host's namespace."""
        procs_text = _text(self._files, os.path.join(directory, "cgroup.procs")).value_or("")
        pids = [pid for pid in procs_text.split() if u64(pid) is not None]
        choice = self._net.get(identifier)
        if choice is None or choice.pid not in pids:
            self._net.pop(identifier, None)
            choice = self._choose(pids)
            if choice is None:
                return None
            self._net[identifier] = choice
        if choice.namespace is None:
            return None
        dev = _text(self._files, self._net_dev(choice.pid)).bind(net_dev.parse).value_or(None)
        return None if dev is None else ContainerNet(namespace=choice.namespace, dev=dev)

    def _choose(self, pids: list[str]) -> _NetChoice | None:
        for pid in pids[:PIDS_TRIED]:
            if read_bounded(self._net_dev(pid)) is not None:
                return _NetChoice(pid=pid, namespace=own_namespace(self._proc, pid))
        return None

    def _net_dev(self, pid: str) -> str:
        return os.path.join(self._proc, pid, "net", "dev")

    def _net_paths(self) -> tuple[str, ...]:
        return tuple(self._net_dev(choice.pid) for choice in self._net.values())

    def _name(self, identifier: str) -> str:
        known = self._known.get(identifier)
        if known is not None:
            return known
        name = ""
        if self._names:
            # Only the name leaves this block: the file holds the container's environment, secrets included.
            config = read_bounded(os.path.join(self._names, identifier, "config.v2.json"))
            name = container_name(config) if config is not None else ""
        if not _DOCKER_NAME.fullmatch(name):
            # Not a name Docker gives (a hostile or damaged file): it would be written into every line.
            name = identifier[:ID_PREFIX_LENGTH]
        self._known[identifier] = name
        return name
