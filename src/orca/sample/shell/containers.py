"""The host's Docker containers, from cgroup v2 files and Docker's config files (SPEC 3.8, issue 4).

Read-only mounts of the host's `/sys/fs/cgroup` and `/var/lib/docker/containers` stand in for the Docker socket, so
the sampler stays unprivileged. Every read here is bounded: a file in those trees may be hostile (huge, a device, a
FIFO), and a sampler never fails or hangs because of one (SPEC 3.10).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass

from returns.pipeline import is_successful

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
from orca.sample.parse.numbers import u64
from orca.sample.shell.procs import _open_files_limit

READ_LIMIT = 1 << 20
"""At most 1 MiB of any file is read (SPEC 3.8); a longer file counts as unparsable."""

SYSTEMD_SLICE = "system.slice"
CGROUPFS_PARENT = "docker"
ID_PREFIX_LENGTH = 12
PIDS_TRIED = 8
"""At most this many processes of `cgroup.procs` are tried for a readable `/proc/<pid>/net/dev` in a line: when
the first few cannot be read, the sampler does not see the container's pid namespace, and the rest cannot be read
either."""
_HOST_PID = "1"
_SHORT_READ_IS_THE_END = 2048


def read_bounded(path: str, limit: int = READ_LIMIT) -> str | None:
    """The text of the regular file at `path`, or None if it is not one, cannot be read, or holds over `limit` bytes.

    A device (a link to /dev/zero), a FIFO or a socket is refused before it is opened, so no open can block or
    stream forever; O_NONBLOCK and a second check on the open descriptor cover a file swapped in between.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        status = os.fstat(descriptor)
        # A file on disk that says it is too big is; cgroup and proc files say 0 or 4096 whatever they hold, so the
        # read below stops one byte past the limit to know.
        if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
            return None
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(descriptor, limit + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            return None
        return b"".join(chunks).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _pread_bounded(fd: int, limit: int = READ_LIMIT) -> str | None:
    """The whole text of a kept descriptor from offset 0; None when it fails (its cgroup is gone) or is too long."""
    chunks: list[bytes] = []
    total = 0
    try:
        while total <= limit:
            chunk = os.pread(fd, limit + 1 - total, total)
            chunks.append(chunk)
            total += len(chunk)
            # Only kernel-generated files are kept, whose records are under 2 KiB (a `key value`, an io.stat or
            # net/dev line, a pid): a seq_file read short of that is the end, and the empty read is saved.
            if len(chunk) < _SHORT_READ_IS_THE_END:
                break
    except OSError:
        return None
    return None if total > limit else b"".join(chunks).decode("utf-8", errors="replace")


class KeptFiles:
    """Files read every line, kept open between lines and read again with `pread`.

    A kept descriptor saves the path lookup, open and close, most of what reading a small cgroup or proc file costs
    (`bench/containers.py` measures both ways). Only files the kernel generates (a regular file whose size is 0, as
    in cgroupfs and /proc) are kept, after a first read through `read_bounded`'s guards; a file on disk (a test's
    fixture) is read through its path every time. A cgroup that is removed makes its kept descriptors fail (ENODEV):
    such a descriptor is closed and the path tried again.
    """

    KEPT_AT_MOST = 1024

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}
        self._by_path: set[str] = set()
        """Files found not to be kernel-generated: read through their path from then on, never tried again."""
        # Each holds a page of kernel memory, and the sampler must never run out of descriptors for its own reads.
        self._keep_at_most = min(self.KEPT_AT_MOST, _open_files_limit() // 4)

    def read(self, path: str) -> str | None:
        fd = self._fds.get(path)
        if fd is not None:
            text = _pread_bounded(fd)
            if text is not None:
                return text
            self.forget(path)
        text = read_bounded(path)
        if text is not None and path not in self._by_path and len(self._fds) < self._keep_at_most:
            self._keep(path)
        return text

    def _keep(self, path: str) -> None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return
        try:
            status = os.fstat(fd)
        except OSError:
            status = None
        # Checked again on this descriptor: the file read a moment ago could have been swapped for another.
        if status is not None and stat.S_ISREG(status.st_mode) and status.st_size == 0:
            self._fds[path] = fd
        else:
            self._by_path.add(path)
            os.close(fd)

    def __len__(self) -> int:
        """How many descriptors are kept."""
        return len(self._fds)

    def keep_only(self, prefixes: tuple[str, ...]) -> None:
        """Close every descriptor whose path starts with none of `prefixes` (a container that is gone)."""
        for path in [path for path in self._fds if not path.startswith(prefixes)]:
            self.forget(path)
        self._by_path = {path for path in self._by_path if path.startswith(prefixes)}

    def forget(self, path: str) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        for path in list(self._fds):
            self.forget(path)


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


def _limit(memory_max_text: str) -> int | None:
    """`memory.max` in bytes; None for `max` (no limit) as for text that does not parse."""
    parsed = memory_max(memory_max_text)
    return parsed.unwrap() if is_successful(parsed) else None


def _subdirectories(path: str) -> list[str] | None:
    """Names of the directories in `path`; None when it cannot be listed."""
    try:
        with os.scandir(path) as entries:
            return [entry.name for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return None


def _listing(root: str) -> list[tuple[str, str]] | None:
    """(id, directory) of every container under `root`, sorted by id; None when `root` itself cannot be listed."""
    if _subdirectories(root) is None:
        return None
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
    """The seed's: the Docker containers' cgroups under `root` as (id, directory), sorted by id (SPEC 6).

    Both layouts: the systemd driver's `system.slice/docker-<id>.scope` and cgroupfs's `docker/<id>`; ids are 64
    hex characters. Empty when `root` cannot be listed.
    """
    return _listing(root) or []


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
        self._files = KeptFiles()
        self._net: dict[str, _NetChoice] = {}
        """id → the process its network is read through."""

    def read(self) -> tuple[ContainerReading, ...] | None:
        """One reading per container whose files parse; None when the cgroup root cannot be listed."""
        listing = _listing(self._cgroup)
        if listing is None:
            return None
        # Forget containers that are gone, so a sampler that never ends does not grow with container churn.
        self._known = {identifier: self._known[identifier] for identifier, _ in listing if identifier in self._known}
        self._net = {identifier: self._net[identifier] for identifier, _ in listing if identifier in self._net}
        self._files.keep_only(tuple(directory + os.sep for _, directory in listing) + self._net_paths())
        readings = (self._reading(identifier, directory) for identifier, directory in listing)
        return tuple(reading for reading in readings if reading is not None)

    def _reading(self, identifier: str, directory: str) -> ContainerReading | None:
        """None for a container that vanished or whose memory files don't parse: it is left out, silently."""
        read = self._files.read
        current_text = read(os.path.join(directory, "memory.current"))
        stat_text = read(os.path.join(directory, "memory.stat"))
        if current_text is None or stat_text is None:
            return None
        current = memory_current(current_text).value_or(None)
        memory_stat = flat_keyed(stat_text, "memory.stat").value_or(None)
        if current is None or memory_stat is None:
            return None
        events_text = read(os.path.join(directory, "memory.events"))
        events = None if events_text is None else flat_keyed(events_text, "memory.events").value_or(None)
        cpu_text = read(os.path.join(directory, "cpu.stat"))
        cpu = None if cpu_text is None else flat_keyed(cpu_text, "cpu.stat").value_or(None)
        max_text = read(os.path.join(directory, "memory.max"))
        pids_text = read(os.path.join(directory, "pids.current"))
        io_text = read(os.path.join(directory, "io.stat"))
        return ContainerReading(
            container_id=identifier,
            name=self._name(identifier),
            memory_current=current,
            memory_stat=memory_stat,
            memory_events=events,
            cpu_usage_usec=None if cpu is None else cpu.get("usage_usec"),
            cpu_periods=None if cpu is None else cpu_periods(cpu).value_or(None),
            memory_max=None if max_text is None else _limit(max_text),
            pids=None if pids_text is None else pids_current(pids_text).value_or(None),
            io=None if io_text is None else io_stat(io_text).value_or(None),
            net=self._container_net(identifier, directory),
        )

    def _container_net(self, identifier: str, directory: str) -> ContainerNet | None:
        """The network of the container's namespace, through the first of its processes whose `net/dev` can be read
        (kept while it stays in the container); None when none can, or when it shares the host's namespace."""
        procs_text = self._files.read(os.path.join(directory, "cgroup.procs"))
        pids = [] if procs_text is None else [pid for pid in procs_text.split() if u64(pid) is not None]
        choice = self._net.get(identifier)
        if choice is None or choice.pid not in pids:
            self._net.pop(identifier, None)
            choice = self._choose(pids)
            if choice is None:
                return None
            self._net[identifier] = choice
        if choice.namespace is None:
            return None
        text = self._files.read(self._net_dev(choice.pid))
        dev = None if text is None else net_dev.parse(text).value_or(None)
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
