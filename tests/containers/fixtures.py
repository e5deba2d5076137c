"""Builders of fixture cgroup v2 trees, Docker names directories and /proc/pressure files.

The file formats are written from the kernel's documentation, not from any code under test:
- Documentation/admin-guide/cgroup-v2.rst, "Memory Interface Files": `memory.current` is a single value (bytes);
  `memory.stat` and `memory.events` are flat-keyed (`key value` per line, bytes for amounts). `memory.events` keys:
  low, high, max, oom, oom_kill, oom_group_kill (and sock_throttled on recent kernels).
- Same file, "CPU Interface Files": `cpu.stat` is flat-keyed; usage_usec, user_usec and system_usec always, and
  nr_periods, nr_throttled, throttled_usec, nr_bursts, burst_usec when the cpu controller is enabled.
- Same file: `memory.max` a single value or `max` (the default, no limit); `pids.current` a single value; `io.stat`
  nested-keyed, `MAJ:MIN rbytes=... wbytes=... rios=... wios=... dbytes=... dios=...` per device, empty before the
  cgroup's first I/O; `cgroup.procs` one pid per line.
- proc(5): /proc/<pid>/net/dev is the device table of the process's network namespace, /proc/<pid>/ns/net a link
  `net:[inode]` naming that namespace; sysfs: /sys/block/<disk> links into /sys/devices, `dev` holds `MAJ:MIN`.
- Documentation/accounting/psi.rst: `some avg10=... avg60=... avg300=... total=<us>` and a `full` line, which the
  `cpu` file lacked before 5.13.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from orca.sample.parse.net_dev import NetDev
from tests.property.render_system import render_net_dev

# Real-looking Docker ids: 64 lowercase hex characters.
ID_POSTGRES = "3f4e1c2b9a8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"
ID_SCHEDULER = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
ID_UI = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
ID_SECRETIVE = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
ID_HUGE = "5555555555555555555555555555555555555555555555555555555555555555"
ID_ZERO = "7777777777777777777777777777777777777777777777777777777777777777"
ID_MALFORMED = "9999999999999999999999999999999999999999999999999999999999999999"

# What a secret in a container's environment looks like; it must never leave config.v2.json.
SECRET_VALUE = "s3cr3t-hunter2-AKIAIOSFODNN7EXAMPLE"
SECRET_ENV = [f"POSTGRES_PASSWORD={SECRET_VALUE}", f"AWS_SECRET_ACCESS_KEY={SECRET_VALUE}-2", "PATH=/usr/bin"]


@dataclass(frozen=True, slots=True)
class CgroupFiles:
    """The four files one container's cgroup directory holds, as the kernel would print them."""

    memory_current: int
    active_file: int
    inactive_file: int
    oom_kill: int | None
    """None: no memory.events file at all."""
    usage_usec: int | None
    """None: no cpu.stat file at all."""
    nr_periods: int | None = 0
    """cpu.stat's bandwidth counters; None: no such keys (the cpu controller is not enabled)."""
    nr_throttled: int = 0


def memory_stat_text(active_file: int, inactive_file: int) -> str:
    """A cgroup-v2.rst memory.stat: amounts in bytes, keys in the kernel's order (new ones may show up anywhere)."""
    return (
        "anon 104857600\n"
        "file 52428800\n"
        "kernel 6291456\n"
        "kernel_stack 327680\n"
        "pagetables 1597440\n"
        "sec_pagetables 0\n"
        "percpu 2400\n"
        "sock 0\n"
        "vmalloc 0\n"
        "shmem 8192\n"
        "file_mapped 12582912\n"
        "file_dirty 4096\n"
        "file_writeback 0\n"
        "swapcached 0\n"
        "anon_thp 0\n"
        "file_thp 0\n"
        "shmem_thp 0\n"
        "inactive_anon 104751104\n"
        "active_anon 114688\n"
        f"inactive_file {inactive_file}\n"
        f"active_file {active_file}\n"
        "unevictable 0\n"
        "slab_reclaimable 3145728\n"
        "slab_unreclaimable 1048576\n"
        "slab 4194304\n"
        "workingset_refault_anon 0\n"
        "workingset_refault_file 12\n"
        "pgfault 123456\n"
        "pgmajfault 42\n"
    )


def memory_events_text(oom_kill: int) -> str:
    return f"low 0\nhigh 0\nmax 3\noom 1\noom_kill {oom_kill}\noom_group_kill 0\n"


def cpu_stat_text(usage_usec: int, nr_periods: int | None = 0, nr_throttled: int = 0) -> str:
    # user + system = usage, as the kernel keeps them; the throttling keys appear with the cpu controller enabled.
    user = usage_usec * 3 // 4
    text = f"usage_usec {usage_usec}\nuser_usec {user}\nsystem_usec {usage_usec - user}\n"
    if nr_periods is not None:
        # throttled_usec: each throttled period of a 10 ms quota in 100 ms loses the other 90 ms.
        text += f"nr_periods {nr_periods}\nnr_throttled {nr_throttled}\nthrottled_usec {nr_throttled * 90_000}\n"
        text += "nr_bursts 0\nburst_usec 0\n"
    return text


def systemd_dir(root: Path, container_id: str) -> Path:
    """The systemd cgroup driver's layout."""
    return root / "system.slice" / f"docker-{container_id}.scope"


def cgroupfs_dir(root: Path, container_id: str) -> Path:
    """The cgroupfs driver's layout."""
    return root / "docker" / container_id


def write_cgroup(directory: Path, files: CgroupFiles) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "memory.current").write_text(f"{files.memory_current}\n")
    (directory / "memory.stat").write_text(memory_stat_text(files.active_file, files.inactive_file))
    if files.oom_kill is not None:
        (directory / "memory.events").write_text(memory_events_text(files.oom_kill))
    if files.usage_usec is not None:
        (directory / "cpu.stat").write_text(cpu_stat_text(files.usage_usec, files.nr_periods, files.nr_throttled))


def io_stat_text(devices: dict[str, tuple[int, int]]) -> str:
    """io.stat as blkcg prints it: rbytes and wbytes first; the I/O counts here are the bytes over 4 KiB."""
    return "".join(
        f"{device} rbytes={read} wbytes={written} rios={read // 4096} wios={written // 4096} dbytes=0 dios=0\n"
        for device, (read, written) in devices.items()
    )


def write_limits(
    directory: Path,
    *,
    memory_max: str | None = None,
    pids: int | None = None,
    io: dict[str, tuple[int, int]] | None = None,
    procs: list[int] | None = None,
) -> None:
    """The second round's files of a container's cgroup; None leaves a file out (its controller is not enabled)."""
    for name, text in (
        ("memory.max", None if memory_max is None else f"{memory_max}\n"),
        ("pids.current", None if pids is None else f"{pids}\n"),
        ("io.stat", None if io is None else io_stat_text(io)),
        ("cgroup.procs", None if procs is None else "".join(f"{pid}\n" for pid in procs)),
    ):
        path = directory / name
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(text)


HOST_NAMESPACE = "net:[4026531840]"
"""The link /proc/1/ns/net of the host's network namespace (init_net's inode number)."""


def write_process(proc: Path, pid: int, namespace: str | None, interfaces: dict[str, tuple[int, int]]) -> Path:
    """`<proc>/<pid>/net/dev` with `interfaces` (bytes received, sent) and `lo`, and `<proc>/<pid>/ns/net` linking
    to `namespace` (a dangling link, as readlink sees the real one); None: no ns link (it cannot be read)."""
    directory = proc / str(pid)
    (directory / "net").mkdir(parents=True, exist_ok=True)
    (directory / "net" / "dev").write_text(render_net_dev(NetDev(interfaces)))
    link = directory / "ns" / "net"
    link.parent.mkdir(exist_ok=True)
    link.unlink(missing_ok=True)
    if namespace is not None:
        link.symlink_to(namespace)
    return directory / "net" / "dev"


def write_sys_block(sys: Path, disks: dict[str, tuple[str, str]]) -> None:
    """`<sys>/block/<name>` linking to `target` (relative, as sysfs writes them), whose `dev` holds `MAJ:MIN`."""
    block = sys / "block"
    block.mkdir(parents=True, exist_ok=True)
    for name, (target, number) in disks.items():
        device = block / target
        device.mkdir(parents=True, exist_ok=True)
        (device / "dev").write_text(f"{number}\n")
        (block / name).symlink_to(target)


SYS_BLOCK = {
    "vda": ("../devices/pci0000:00/0000:00:02.0/virtio1/block/vda", "254:0"),
    "dm-0": ("../devices/virtual/block/dm-0", "252:0"),
    "loop0": ("../devices/virtual/block/loop0", "7:0"),
}
"""A virtio disk, a device-mapper volume over it, and a loop device: vda is the only whole disk."""
VDA, DM0, LOOP0 = "254:0", "252:0", "7:0"


def host_cgroup_noise(root: Path) -> None:
    """What else a host's /sys/fs/cgroup holds, none of which is a Docker container."""
    for name in ("init.scope", "user.slice", "system.slice/containerd.service", "system.slice/docker.service"):
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "memory.current").write_text("1048576\n")
    (root / "memory.stat").write_text(memory_stat_text(0, 0))  # the root cgroup's own files
    (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")


def config_v2(name: str, env: list[str] | None = None) -> str:
    """A trimmed Docker `config.v2.json`: the fields around `Name` as dockerd writes them, `Env` inside `Config`."""
    document = {
        "StreamConfig": {},
        "State": {"Running": True, "Pid": 4242, "ExitCode": 0, "StartedAt": "2025-11-04T10:00:00.000000000Z"},
        "ID": "",
        "Created": "2025-11-04T09:59:59.000000000Z",
        "Path": "docker-entrypoint.sh",
        "Args": ["postgres"],
        "Config": {
            "Hostname": "3f4e1c2b9a8d",
            "Env": env or ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "Cmd": ["postgres"],
            "Image": "postgres:16",
            "Labels": {},
        },
        "Image": "sha256:" + "ab" * 32,
        "Name": f"/{name}",
        "Driver": "overlay2",
        "RestartCount": 0,
    }
    return json.dumps(document)


def write_config(names: Path, container_id: str, text: str) -> Path:
    path = names / container_id / "config.v2.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def pressure_text(some_total_us: int, full_total_us: int | None) -> str:
    """A psi.rst pressure file; `full_total_us` None for a `cpu` file of a kernel before 5.13 (no `full` line)."""
    text = f"some avg10=1.25 avg60=0.80 avg300=0.33 total={some_total_us}\n"
    if full_total_us is not None:
        text += f"full avg10=0.00 avg60=0.10 avg300=0.02 total={full_total_us}\n"
    return text


def write_pressure(proc: Path, cpu: int | None, memory: int | None, io: int | None) -> None:
    """`<proc>/pressure/{cpu,memory,io}` with the given `some` totals (µs); None leaves that file out."""
    directory = proc / "pressure"
    directory.mkdir(parents=True, exist_ok=True)
    for resource, total in (("cpu", cpu), ("memory", memory), ("io", io)):
        path = directory / resource
        if total is None:
            path.unlink(missing_ok=True)
        else:
            # The full total is less than some's, as it must be: all tasks stalled is a subset of some stalled.
            path.write_text(pressure_text(total, total // 2))


@contextmanager
def in_own_network_namespace(script: str = "exec sleep 3600") -> Iterator[int | None]:
    """`sh -c script`, ending in `exec sleep ...`, in a network namespace of its own (`unshare -n` as root, else in
    a user namespace); yields its pid once it sleeps, or None where no namespace can be made (or `script` fails)."""
    process = None
    if shutil.which("unshare") is not None:
        for flags in (["-n"], ["-r", "-n"]):
            candidate = subprocess.Popen(["unshare", *flags, "sh", "-c", script], stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 5
            while process is None and candidate.poll() is None and time.monotonic() < deadline:
                try:
                    if Path(f"/proc/{candidate.pid}/comm").read_text().strip() == "sleep":
                        process = candidate
                except OSError:
                    pass
                time.sleep(0.05)
            if process is not None:
                break
            candidate.kill()
            candidate.wait()
    try:
        yield None if process is None else process.pid
    finally:
        if process is not None:
            process.kill()
            process.wait()


MIB = 1 << 20
FILES = CgroupFiles(memory_current=400 * MIB, active_file=30 * MIB, inactive_file=50 * MIB, oom_kill=1, usage_usec=7)
"""A container's cgroup files as the shell tests write them."""


def names_directory(names: Path) -> None:
    """Every kind of config.v2.json the issue lists, one per container."""
    write_config(names, ID_POSTGRES, config_v2("postgres"))  # good
    # ID_UI: no directory at all (missing)
    write_config(names, ID_MALFORMED, '{"Name": "/half-writ')  # malformed: cut off mid-write
    write_config(names, ID_SECRETIVE, config_v2("vault", SECRET_ENV))  # secrets in Env
    # 5 MiB: valid JSON with a name, but over the 1 MiB bound, so it must not be read (docs/behaviour.md §3.8)
    write_config(names, ID_HUGE, config_v2("huge", ["PAD=" + "x" * (5 * MIB)]))
    link = names / ID_ZERO / "config.v2.json"  # a link to a device that never ends
    link.parent.mkdir(parents=True)
    link.symlink_to("/dev/zero")


def tree_for_names(cgroup: Path) -> None:
    for container_id in (ID_POSTGRES, ID_UI, ID_MALFORMED, ID_SECRETIVE, ID_HUGE, ID_ZERO):
        write_cgroup(systemd_dir(cgroup, container_id), FILES)
