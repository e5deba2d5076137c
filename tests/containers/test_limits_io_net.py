"""Throttling, memory limit, process count, disk I/O and network per container, read from fixture trees and, where
this machine allows, from a real cgroup v2 hierarchy and real network namespaces.

The trees are written by `fixtures.py` in the kernel's formats; every expected value is worked out by hand beside
the test from the numbers written.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orca.sample.compute.containers import container_entries
from orca.sample.compute.snapshot import ContainerReading
from orca.sample.parse.cgroup import CpuPeriods, DeviceIo
from orca.sample.shared.bounded import KeptFiles
from orca.sample.shell.machine.containers import PIDS_TRIED, ContainerSource, own_namespace
from orca.sample.shell.sampler import Sampler

from .fixtures import (
    DM0,
    HOST_NAMESPACE,
    ID_POSTGRES,
    ID_SCHEDULER,
    ID_UI,
    LOOP0,
    SYS_BLOCK,
    VDA,
    CgroupFiles,
    cgroupfs_dir,
    config_v2,
    host_cgroup_noise,
    in_own_network_namespace,
    systemd_dir,
    write_cgroup,
    write_config,
    write_limits,
    write_process,
    write_sys_block,
)

MIB = 1 << 20
PRINTED_DT_HALF_WIDTH = 0.0005
CONTAINER_NAMESPACE = "net:[4026532500]"
PG_PID, UI_PID, SCHEDULER_PID = 4242, 999, 4300


def by_id(readings: tuple[ContainerReading, ...] | None) -> dict[str, ContainerReading]:
    assert readings is not None
    return {reading.container_id: reading for reading in readings}


def host(proc: Path) -> None:
    """pid 1, in the host's network namespace."""
    write_process(proc, 1, HOST_NAMESPACE, {"eth0": (9_000_000_000, 8_000_000_000)})


# ContainerSource on fixture trees ------------------------------------------------------------------------------


def test_every_second_round_field_from_a_fixture_tree(tmp_path: Path) -> None:
    """postgres: cpu.max limited (1000 periods, 900 throttled), memory.max 512 MiB, 12 processes, two devices, its
    process 4242 in a namespace of its own; each value comes back as written."""
    cgroup, proc = tmp_path / "cgroup", tmp_path / "proc"
    directory = systemd_dir(cgroup, ID_POSTGRES)
    write_cgroup(directory, CgroupFiles(400 * MIB, 30 * MIB, 50 * MIB, 0, 7, nr_periods=1000, nr_throttled=900))
    write_limits(directory, memory_max=str(512 * MIB), pids=12, io={VDA: (100, 200), DM0: (100, 200)},
                 procs=[PG_PID, PG_PID + 1])
    host(proc)
    write_process(proc, PG_PID, CONTAINER_NAMESPACE, {"eth0": (10_000_000, 4_000_000)})
    [reading] = ContainerSource(str(cgroup), "", str(proc)).read() or ()
    assert reading.cpu_periods == CpuPeriods(periods=1000, throttled=900)
    assert (reading.memory_max, reading.pids) == (512 * MIB, 12)
    assert reading.io == {VDA: DeviceIo(100, 200), DM0: DeviceIo(100, 200)}
    assert reading.net is not None
    assert reading.net.namespace == CONTAINER_NAMESPACE
    assert dict(reading.net.dev.bytes_by_interface) == {"eth0": (10_000_000, 4_000_000)}  # lo left out


def test_without_the_files_each_field_is_none(tmp_path: Path) -> None:
    """No cpu controller (no nr_periods), memory.max `max`, no pids.current, no io.stat, no cgroup.procs: the
    reading has None for each (never a made-up 0), and the container is still read."""
    cgroup, proc = tmp_path / "cgroup", tmp_path / "proc"
    directory = cgroupfs_dir(cgroup, ID_UI)
    write_cgroup(directory, CgroupFiles(64 * MIB, 0, 0, None, 5, nr_periods=None))
    write_limits(directory, memory_max="max")
    host(proc)
    [reading] = ContainerSource(str(cgroup), "", str(proc)).read() or ()
    assert (reading.cpu_usage_usec, reading.cpu_periods, reading.memory_max) == (5, None, None)
    assert (reading.pids, reading.io, reading.net) == (None, None, None)


@pytest.mark.parametrize(
    ("file", "content"),
    [("memory.max", "512M\n"), ("pids.current", "max\n"), ("io.stat", "garbage here\n")],
)
def test_a_file_that_does_not_parse_is_none_and_the_rest_stays(tmp_path: Path, file: str, content: str) -> None:
    cgroup = tmp_path / "cgroup"
    directory = systemd_dir(cgroup, ID_POSTGRES)
    write_cgroup(directory, CgroupFiles(400 * MIB, 0, 0, 0, 7))
    write_limits(directory, memory_max="1048576", pids=3, io={VDA: (1, 2)})
    (directory / file).write_text(content)
    [reading] = ContainerSource(str(cgroup), "", str(tmp_path / "proc")).read() or ()
    found = {"memory.max": reading.memory_max, "pids.current": reading.pids, "io.stat": reading.io}
    assert found.pop(file) is None
    assert all(value is not None for value in found.values())
    assert reading.memory_current == 400 * MIB


def test_empty_io_stat_is_no_io_yet(tmp_path: Path) -> None:
    cgroup = tmp_path / "cgroup"
    write_cgroup(systemd_dir(cgroup, ID_POSTGRES), CgroupFiles(400 * MIB, 0, 0, 0, 7))
    write_limits(systemd_dir(cgroup, ID_POSTGRES), io={})
    [reading] = ContainerSource(str(cgroup), "", str(tmp_path / "proc")).read() or ()
    assert reading.io == {}


def test_no_visible_process_and_the_hosts_namespace_have_no_net(tmp_path: Path) -> None:
    """ui's process 999 is not under the proc root (the sampler is in another pid namespace); scheduler's process
    shares pid 1's network namespace (a container run with --network host): neither has `net`; postgres has."""
    cgroup, proc = tmp_path / "cgroup", tmp_path / "proc"
    for identifier, pid in ((ID_POSTGRES, PG_PID), (ID_UI, UI_PID), (ID_SCHEDULER, SCHEDULER_PID)):
        write_cgroup(systemd_dir(cgroup, identifier), CgroupFiles(MIB, 0, 0, 0, 1))
        write_limits(systemd_dir(cgroup, identifier), procs=[pid])
    host(proc)
    write_process(proc, PG_PID, CONTAINER_NAMESPACE, {"eth0": (1, 2)})
    write_process(proc, SCHEDULER_PID, HOST_NAMESPACE, {"eth0": (9_000_000_000, 8_000_000_000)})
    readings = by_id(ContainerSource(str(cgroup), "", str(proc)).read())
    assert readings[ID_POSTGRES].net is not None
    assert readings[ID_UI].net is None
    assert readings[ID_SCHEDULER].net is None


def test_the_first_readable_process_is_used(tmp_path: Path) -> None:
    """cgroup.procs lists 999 (gone) before 4242: 4242's namespace is read."""
    cgroup, proc = tmp_path / "cgroup", tmp_path / "proc"
    write_cgroup(systemd_dir(cgroup, ID_POSTGRES), CgroupFiles(MIB, 0, 0, 0, 1))
    write_limits(systemd_dir(cgroup, ID_POSTGRES), procs=[UI_PID, PG_PID])
    host(proc)
    write_process(proc, PG_PID, CONTAINER_NAMESPACE, {"eth0": (5, 6)})
    [reading] = ContainerSource(str(cgroup), "", str(proc)).read() or ()
    assert reading.net is not None and dict(reading.net.dev.bytes_by_interface) == {"eth0": (5, 6)}


def test_only_the_first_few_processes_are_tried(tmp_path: Path) -> None:
    """A container whose processes are not visible costs at most PIDS_TRIED failed opens a line: a visible process
    listed after that many invisible ones is not looked for."""
    cgroup, proc = tmp_path / "cgroup", tmp_path / "proc"
    write_cgroup(systemd_dir(cgroup, ID_POSTGRES), CgroupFiles(MIB, 0, 0, 0, 1))
    write_limits(systemd_dir(cgroup, ID_POSTGRES), procs=[*range(10_000, 10_000 + PIDS_TRIED), PG_PID])
    host(proc)
    write_process(proc, PG_PID, CONTAINER_NAMESPACE, {"eth0": (5, 6)})
    [reading] = ContainerSource(str(cgroup), "", str(proc)).read() or ()
    assert reading.net is None
    write_limits(systemd_dir(cgroup, ID_POSTGRES), procs=[*range(10_000, 10_000 + PIDS_TRIED - 1), PG_PID])
    [reading] = ContainerSource(str(cgroup), "", str(proc)).read() or ()
    assert reading.net is not None


def test_namespace_told_by_net_dev_when_the_links_cannot_be_read(tmp_path: Path) -> None:
    """Without ptrace access (an unprivileged sampler) /proc/<pid>/ns/net cannot be read, but /proc/<pid>/net/dev
    can, and each network namespace has its own: the same file (here a hard link) is the same namespace."""
    cgroup, proc = tmp_path / "cgroup", tmp_path / "proc"
    for identifier, pid in ((ID_POSTGRES, PG_PID), (ID_SCHEDULER, SCHEDULER_PID)):
        write_cgroup(systemd_dir(cgroup, identifier), CgroupFiles(MIB, 0, 0, 0, 1))
        write_limits(systemd_dir(cgroup, identifier), procs=[pid])
    host_dev = write_process(proc, 1, None, {"eth0": (9, 9)})
    write_process(proc, PG_PID, None, {"eth0": (1, 2)})
    scheduler_dev = write_process(proc, SCHEDULER_PID, None, {})
    scheduler_dev.unlink()
    os.link(host_dev, scheduler_dev)
    readings = by_id(ContainerSource(str(cgroup), "", str(proc)).read())
    assert readings[ID_SCHEDULER].net is None
    own = readings[ID_POSTGRES].net
    assert own is not None and own.namespace.startswith("net/dev:")


def test_the_chosen_process_is_kept_until_it_leaves(tmp_path: Path) -> None:
    """4242 stays the container's process while cgroup.procs lists it (even behind another); once it has left, the
    next readable one is chosen."""
    cgroup, proc = tmp_path / "cgroup", tmp_path / "proc"
    directory = systemd_dir(cgroup, ID_POSTGRES)
    write_cgroup(directory, CgroupFiles(MIB, 0, 0, 0, 1))
    write_limits(directory, procs=[PG_PID])
    host(proc)
    write_process(proc, PG_PID, CONTAINER_NAMESPACE, {"eth0": (1, 1)})
    write_process(proc, PG_PID + 1, "net:[4026532777]", {"eth0": (2, 2)})
    source = ContainerSource(str(cgroup), "", str(proc))
    namespaces = []
    for procs in ([PG_PID], [PG_PID + 1, PG_PID], [PG_PID + 1]):
        write_limits(directory, procs=procs)
        [reading] = source.read() or ()
        assert reading.net is not None
        namespaces.append(reading.net.namespace)
    assert namespaces == [CONTAINER_NAMESPACE, CONTAINER_NAMESPACE, "net:[4026532777]"]


def test_fixture_files_are_read_by_path_not_kept(tmp_path: Path) -> None:
    """Only kernel-generated files (size 0) are kept open: a file on disk is read through its path each time, so a
    rewritten fixture is seen and nothing is held open."""
    cgroup = tmp_path / "cgroup"
    directory = systemd_dir(cgroup, ID_POSTGRES)
    write_cgroup(directory, CgroupFiles(MIB, 0, 0, 0, 1))
    write_limits(directory, pids=1)
    files = KeptFiles(8)
    assert files.read(str(directory / "pids.current")) == b"1\n"
    write_limits(directory, pids=2)
    assert files.read(str(directory / "pids.current")) == b"2\n"
    assert len(files) == 0


# Whole lines through the Sampler -------------------------------------------------------------------------------


def bytes_rate_bounds(delta: int, printed_dt: float) -> tuple[int, int]:
    """The whole bytes per second a `delta` over the true dt can print, given dt as the line printed it (3
    decimals, so the true dt is within ±0.0005 s)."""
    return (math.floor(delta / (printed_dt + PRINTED_DT_HALF_WIDTH)),
            math.ceil(delta / (printed_dt - PRINTED_DT_HALF_WIDTH)))


def assert_bytes_rate(printed: int, delta: int, printed_dt: float) -> None:
    low, high = bytes_rate_bounds(delta, printed_dt)
    assert low <= printed <= high, (printed, delta, printed_dt)


def test_the_bytes_bounds_are_tight() -> None:
    """By hand: 3 000 000 / 0.3005 = 9 983 361.1 and 3 000 000 / 0.2995 = 10 016 694.5: within 0.2 % of 10^7."""
    assert bytes_rate_bounds(3_000_000, 0.3) == (9_983_361, 10_016_695)


def entries(line: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in line["containers"]}


@pytest.mark.timeout(60)
def test_two_lines_with_throttling_limits_io_and_net(tmp_path: Path) -> None:
    """Three containers over two lines, worked out by hand.

    postgres (cpu.max limited): nr_periods 1000 → 1050 → 1060, nr_throttled 900 → 930 → 940: 30 of 50 = 60.0,
    then 10 of 10 = 100.0. memory.max 512 MiB; pids 12 → 14. io.stat: vda +3 000 000 read and +600 000 written,
    dm-0 on top of it the same bytes again, loop0 +1 MiB read: only vda counts. Its process 4242 has a namespace of
    its own: eth0 +300 000 in and +60 000 out, then +0.
    ui: the cpu controller but no limit (nr_periods stays 0): 0.0; memory.max `max`: no mem_max; an empty io.stat
    (no I/O yet): 0 and 0; its process 999 is not visible: no net.
    scheduler: no cpu controller keys, no memory.max, pids.current or io.stat; its process is in the host's
    namespace: none of the new fields.
    api appears in the second line: throttled 0.0, io 0, net 0 (its first reading is its baseline).
    """
    cgroup, names, proc, sys_root = tmp_path / "cgroup", tmp_path / "names", tmp_path / "proc", tmp_path / "sys"
    host_cgroup_noise(cgroup)
    write_sys_block(sys_root, SYS_BLOCK)
    host(proc)
    for identifier, name in ((ID_POSTGRES, "postgres"), (ID_UI, "ui"), (ID_SCHEDULER, "scheduler")):
        write_config(names, identifier, config_v2(name))
    pg, ui, scheduler = systemd_dir(cgroup, ID_POSTGRES), cgroupfs_dir(cgroup, ID_UI), systemd_dir(cgroup, ID_SCHEDULER)

    def postgres(periods: int, throttled: int, pids: int, vda: tuple[int, int], loop: int,
                 eth0: tuple[int, int]) -> None:
        write_cgroup(pg, CgroupFiles(400 * MIB, 30 * MIB, 50 * MIB, 0, 1_000_000, periods, throttled))
        write_limits(pg, memory_max=str(512 * MIB), pids=pids, io={VDA: vda, DM0: vda, LOOP0: (loop, 0)},
                     procs=[PG_PID])
        write_process(proc, PG_PID, CONTAINER_NAMESPACE, {"eth0": eth0})

    postgres(1000, 900, 12, (100 * MIB, 50 * MIB), 0, (10_000_000, 4_000_000))
    write_cgroup(ui, CgroupFiles(64 * MIB, 0, 0, None, 5_000, nr_periods=0))
    write_limits(ui, memory_max="max", pids=3, io={}, procs=[UI_PID])
    write_cgroup(scheduler, CgroupFiles(64 * MIB, 0, 0, None, 5_000, nr_periods=None))
    write_limits(scheduler, procs=[SCHEDULER_PID])
    write_process(proc, SCHEDULER_PID, HOST_NAMESPACE, {"eth0": (9_000_000_000, 8_000_000_000)})

    sampler = Sampler(0, "", [str(tmp_path)], cgroup=str(cgroup), names=str(names), proc=str(proc),
                      sys=str(sys_root))
    time.sleep(0.3)
    postgres(1050, 930, 14, (100 * MIB + 3_000_000, 50 * MIB + 600_000), MIB, (10_300_000, 4_060_000))
    first = json.loads(sampler.line())

    postgres(1060, 940, 14, (100 * MIB + 3_000_000, 50 * MIB + 600_000), MIB, (10_300_000, 4_060_000))
    api = systemd_dir(cgroup, ID_UI.replace("0", "a"))
    write_cgroup(api, CgroupFiles(MIB, 0, 0, 0, 1, nr_periods=70, nr_throttled=7))
    write_limits(api, io={VDA: (5 * MIB, 5 * MIB)}, procs=[PG_PID + 1])
    write_process(proc, PG_PID + 1, "net:[4026532600]", {"eth0": (77_000, 77_000)})
    time.sleep(0.1)
    second = json.loads(sampler.line())

    found = entries(first)
    postgres_entry = found["postgres"]
    assert list(postgres_entry) == [
        "name", "mem", "cpu", "mem_nocache", "oom_kill", "throttled", "mem_max", "pids", "io", "net"
    ]
    assert (postgres_entry["throttled"], postgres_entry["mem_max"], postgres_entry["pids"]) == (60.0, 512 * MIB, 14)
    assert_bytes_rate(postgres_entry["io"]["read"], 3_000_000, first["dt"])
    assert_bytes_rate(postgres_entry["io"]["write"], 600_000, first["dt"])
    assert_bytes_rate(postgres_entry["net"]["in"], 300_000, first["dt"])
    assert_bytes_rate(postgres_entry["net"]["out"], 60_000, first["dt"])
    assert found["ui"] == {**found["ui"], "throttled": 0.0, "pids": 3, "io": {"read": 0, "write": 0}}
    assert "mem_max" not in found["ui"] and "net" not in found["ui"]
    assert list(found["scheduler"]) == ["name", "mem", "cpu", "mem_nocache"]

    found = entries(second)
    assert found["postgres"]["throttled"] == 100.0
    assert (found["postgres"]["io"], found["postgres"]["net"]) == ({"read": 0, "write": 0}, {"in": 0, "out": 0})
    api_entry = found[ID_UI.replace("0", "a")[:12]]
    assert (api_entry["throttled"], api_entry["io"], api_entry["net"]) == (0.0, {"read": 0, "write": 0},
                                                                          {"in": 0, "out": 0})


def test_without_sys_block_there_is_no_container_io(tmp_path: Path) -> None:
    """Without the whole disks' device numbers every io.stat device would count, a dm device and its disk twice:
    `io` is left out instead."""
    cgroup, proc = tmp_path / "cgroup", tmp_path / "proc"
    write_cgroup(systemd_dir(cgroup, ID_POSTGRES), CgroupFiles(MIB, 0, 0, 0, 1))
    write_limits(systemd_dir(cgroup, ID_POSTGRES), io={VDA: (1, 1)})
    sampler = Sampler(0, "", [str(tmp_path)], cgroup=str(cgroup), proc=str(proc), sys=str(tmp_path / "no-sys"))
    [entry] = json.loads(sampler.line())["containers"]
    assert "io" not in entry


# On this machine -----------------------------------------------------------------------------------------------


def cgroup2_mount() -> str | None:
    """Where a cgroup v2 hierarchy is mounted, from /proc/self/mounts; None without one."""
    try:
        with open("/proc/self/mounts", encoding="utf-8") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) > 2 and fields[2] == "cgroup2":
                    return fields[1]
    except OSError:
        return None
    return None


def writable_cgroup2() -> tuple[str | None, str]:
    """A writable cgroup v2 mount, or None and why not."""
    mount = cgroup2_mount()
    if mount is None:
        return None, "no cgroup v2 hierarchy is mounted"
    if os.geteuid() != 0 or not os.access(mount, os.W_OK):
        return None, f"the cgroup v2 hierarchy at {mount} is not writable here (needs root)"
    return mount, ""


@pytest.fixture
def scratch_cgroup() -> Iterator[Path]:
    """A new cgroup under the machine's cgroup v2 root, removed (with anything made below it) afterwards."""
    mount, reason = writable_cgroup2()
    if mount is None:
        pytest.skip(reason)
    root = Path(mount) / f"orca-test-{os.getpid()}"
    root.mkdir()
    try:
        yield root
    finally:
        for directory in sorted((path for path in root.rglob("*") if path.is_dir()), key=lambda p: -len(p.parts)):
            directory.rmdir()
        root.rmdir()


def test_kept_descriptors_on_real_cgroup_files(scratch_cgroup: Path) -> None:
    """cgroupfs files are kept open and read with pread: a process moved in shows in the kept cgroup.procs; once the
    cgroup is removed, the kept descriptors fail and the read is None."""
    procs, stat = str(scratch_cgroup / "cgroup.procs"), str(scratch_cgroup / "cpu.stat")
    files = KeptFiles(8)
    assert files.read(procs) == b""
    assert files.read(stat) is not None and len(files) == 2
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        (scratch_cgroup / "cgroup.procs").write_text(f"{sleeper.pid}\n")
        assert files.read(procs) == f"{sleeper.pid}\n".encode()
        assert len(files) == 2
    finally:
        sleeper.kill()
        sleeper.wait()
    child = scratch_cgroup / "child"
    child.mkdir()
    assert files.read(str(child / "cgroup.procs")) == b"" and len(files) == 3
    child.rmdir()
    with pytest.raises(OSError):
        files.read(str(child / "cgroup.procs"))
    assert len(files) == 2


def test_namespaces_of_real_processes() -> None:
    """This process shares pid 1's network namespace; a `sleep` under `unshare -n` has one of its own."""
    if not os.path.exists("/proc/1/net/dev"):
        pytest.skip("pid 1 is not visible here")
    assert own_namespace("/proc", str(os.getpid())) is None
    with in_own_network_namespace("exec sleep 30") as pid:
        if pid is None:
            pytest.skip("no `unshare -n` here (neither root nor user namespaces)")
        assert own_namespace("/proc", str(pid)) is not None


CPU_LIMIT = "10000 100000"
"""10 ms of CPU in every 100 ms period: a tenth of a core."""


def test_live_throttling_of_a_busy_process(scratch_cgroup: Path) -> None:
    """A cgroup with cpu.max `10000 100000` and a process that never sleeps: it exhausts its quota in every period,
    so `throttled` is well above 50 while `cpu` stays near 10 (a tenth of one core)."""
    controllers = (scratch_cgroup.parent / "cgroup.controllers").read_text().split()
    if "cpu" not in controllers or "memory" not in controllers:
        pytest.skip(f"the cgroup v2 hierarchy at {scratch_cgroup.parent} offers {controllers or 'no controllers'}: "
                    "not the cpu and memory controllers (bound to a cgroup v1 hierarchy, or not built in)")
    # The root's controllers for its children are enabled only where they are not yet (systemd enables them).
    if not {"cpu", "memory"} <= set((scratch_cgroup.parent / "cgroup.subtree_control").read_text().split()):
        (scratch_cgroup.parent / "cgroup.subtree_control").write_text("+cpu +memory\n")
    for directory in (scratch_cgroup, scratch_cgroup / "system.slice"):
        directory.mkdir(exist_ok=True)
        (directory / "cgroup.subtree_control").write_text("+cpu +memory\n")
    container = scratch_cgroup / "system.slice" / f"docker-{ID_POSTGRES}.scope"
    container.mkdir()
    (container / "cpu.max").write_text(CPU_LIMIT)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        (container / "cgroup.procs").write_text(f"{busy.pid}\n")
        sampler = Sampler(0, "", ["/tmp"], cgroup=str(scratch_cgroup))
        time.sleep(2.0)
        [entry] = json.loads(sampler.line())["containers"]
    finally:
        busy.kill()
        busy.wait()
    assert entry["throttled"] > 50.0, entry
    assert 5.0 <= entry["cpu"] <= 15.0, entry


SETUP_VETH = (
    "ip link add v0 type veth peer name v1 && ip link set v0 up && ip link set v1 up"
    " && ip addr add 10.9.9.1/24 dev v0 && exec sleep 30"
)
DATAGRAMS, PAYLOAD = 20, 1000
WIRE_BYTES = 14 + 20 + 8 + PAYLOAD
"""An Ethernet header, an IPv4 header and a UDP header around each payload, as net/dev counts them."""


def broadcast_in(pid: int) -> None:
    """DATAGRAMS UDP datagrams of PAYLOAD bytes to 10.9.9.255 from inside `pid`'s namespace: out through v0, in
    through its peer v1."""
    script = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        "s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1); "
        f"[s.sendto(b'x' * {PAYLOAD}, ('10.9.9.255', 9)) for _ in range({DATAGRAMS})]"
    )
    subprocess.run(["nsenter", "-t", str(pid), "-n", sys.executable, "-c", script], check=True, timeout=30)


def test_net_of_a_real_namespace_moving_bytes(tmp_path: Path) -> None:
    """A container whose process is in a namespace of its own: 20 datagrams of 1 000 bytes leave v0 and arrive on
    v1, each 1 042 bytes on the wire, so at least 20 840 bytes go out and come in between the two readings (IPv6
    may add a few packets of its own: at most a few KiB more)."""
    if shutil.which("nsenter") is None:
        pytest.skip("no nsenter here")
    if shutil.which("ip") is None:
        pytest.skip("no ip command here")
    with in_own_network_namespace(SETUP_VETH) as pid:
        if pid is None:
            pytest.skip("no network namespace with a veth pair can be made here (needs root or user namespaces)")
        cgroup = tmp_path / "cgroup"
        write_cgroup(systemd_dir(cgroup, ID_POSTGRES), CgroupFiles(MIB, 0, 0, 0, 1))
        write_limits(systemd_dir(cgroup, ID_POSTGRES), procs=[pid])
        source = ContainerSource(str(cgroup), "")
        before = source.read()
        broadcast_in(pid)
        after = source.read()
    assert before is not None and after is not None
    [entry] = container_entries(before, after, 1.0)
    assert entry.net is not None, "the namespace's net/dev was not read"
    expected = DATAGRAMS * WIRE_BYTES
    assert expected <= entry.net.sent <= expected + 8192
    assert expected <= entry.net.received <= expected + 8192
