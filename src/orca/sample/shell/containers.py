"""The host's Docker containers, from cgroup v2 files and Docker's config files (SPEC 3.8, issue 4).

Read-only mounts of the host's `/sys/fs/cgroup` and `/var/lib/docker/containers` stand in for the Docker socket, so
the sampler stays unprivileged. Every read here is bounded: a file in those trees may be hostile (huge, a device, a
FIFO), and a sampler never fails or hangs because of one (SPEC 3.10).
"""

from __future__ import annotations

import os
import re
import stat

from orca.sample.compute.snapshot import ContainerReading
from orca.sample.parse.cgroup import container_id, container_name, flat_keyed, memory_current

READ_LIMIT = 1 << 20
"""At most 1 MiB of any file is read (SPEC 3.8); a longer file counts as unparsable."""

SYSTEMD_SLICE = "system.slice"
CGROUPFS_PARENT = "docker"
ID_PREFIX_LENGTH = 12


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

    def __init__(self, cgroup: str, names: str) -> None:
        self._cgroup = cgroup
        self._names = names
        # id → name, read once per id (the fallback too): config.v2.json is large and only its name is wanted.
        self._known: dict[str, str] = {}

    def read(self) -> tuple[ContainerReading, ...] | None:
        """One reading per container whose files parse; None when the cgroup root cannot be listed."""
        listing = _listing(self._cgroup)
        if listing is None:
            return None
        # Forget containers that are gone, so a sampler that never ends does not grow with container churn.
        self._known = {identifier: self._known[identifier] for identifier, _ in listing if identifier in self._known}
        readings = (self._reading(identifier, directory) for identifier, directory in listing)
        return tuple(reading for reading in readings if reading is not None)

    def _reading(self, identifier: str, directory: str) -> ContainerReading | None:
        """None for a container that vanished or whose memory files don't parse: it is left out, silently."""
        current_text = read_bounded(os.path.join(directory, "memory.current"))
        stat_text = read_bounded(os.path.join(directory, "memory.stat"))
        if current_text is None or stat_text is None:
            return None
        current = memory_current(current_text).value_or(None)
        memory_stat = flat_keyed(stat_text, "memory.stat").value_or(None)
        if current is None or memory_stat is None:
            return None
        events_text = read_bounded(os.path.join(directory, "memory.events"))
        events = None if events_text is None else flat_keyed(events_text, "memory.events").value_or(None)
        cpu_text = read_bounded(os.path.join(directory, "cpu.stat"))
        cpu = None if cpu_text is None else flat_keyed(cpu_text, "cpu.stat").value_or(None)
        return ContainerReading(
            container_id=identifier,
            name=self._name(identifier),
            memory_current=current,
            memory_stat=memory_stat,
            memory_events=events,
            cpu_usage_usec=None if cpu is None else cpu.get("usage_usec"),
        )

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
