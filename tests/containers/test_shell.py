"""Reading containers and pressure from fixture trees and from this machine (docs/behaviour.md §3.8, §3.9,
§3.10, §7).

The trees are written by `fixtures.py` in the kernel's formats; the expected values beside each test are worked out
by hand from the numbers written.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from orca.sample.compute.snapshot import host_readings
from orca.sample.parse.errors import ParseError
from orca.sample.parse.pressure import Pressure
from orca.sample.shell.machine.containers import READ_LIMIT, ContainerSource, container_ids, read_bounded
from orca.sample.shell.machine.early import read_kernel_texts
from orca.sample.shell.machine.fs import FS

from .fixtures import (
    FILES,
    ID_HUGE,
    ID_MALFORMED,
    ID_POSTGRES,
    ID_SCHEDULER,
    ID_SECRETIVE,
    ID_UI,
    ID_ZERO,
    MIB,
    SECRET_VALUE,
    CgroupFiles,
    cgroupfs_dir,
    config_v2,
    host_cgroup_noise,
    names_directory,
    systemd_dir,
    tree_for_names,
    write_cgroup,
    write_config,
    write_pressure,
)


def both_layouts(root: Path) -> None:
    """postgres and scheduler under the systemd driver, ui under cgroupfs: one host can show both (a daemon restart
    with another driver leaves old containers where they were)."""
    host_cgroup_noise(root)
    write_cgroup(systemd_dir(root, ID_POSTGRES), FILES)
    write_cgroup(systemd_dir(root, ID_SCHEDULER), FILES)
    write_cgroup(cgroupfs_dir(root, ID_UI), FILES)


def test_container_ids_both_layouts_sorted_by_id(tmp_path: Path) -> None:
    """docs/behaviour.md §6, §3.8: (id, directory) from `system.slice/docker-<id>.scope` and `docker/<id>`, sorted by
    id."""
    both_layouts(tmp_path)
    assert container_ids(str(tmp_path)) == [
        (ID_UI, str(cgroupfs_dir(tmp_path, ID_UI))),
        (ID_POSTGRES, str(systemd_dir(tmp_path, ID_POSTGRES))),
        (ID_SCHEDULER, str(systemd_dir(tmp_path, ID_SCHEDULER))),
    ]


def test_container_ids_ignore_what_is_not_a_docker_container(tmp_path: Path) -> None:
    """Not 64 hex, the wrong layout's name in a directory, or a plain file: none is a container (docs/behaviour.md
    §6)."""
    host_cgroup_noise(tmp_path)
    (tmp_path / "system.slice" / f"docker-{ID_UI[:63]}.scope").mkdir()  # 63 characters
    (tmp_path / "system.slice" / ID_UI).mkdir()  # cgroupfs name under the systemd slice
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / f"docker-{ID_UI}.scope").mkdir()  # systemd name under cgroupfs's parent
    (tmp_path / "docker" / ID_POSTGRES).write_text("")  # a file, not a cgroup
    (tmp_path / "docker" / ("g" * 64)).mkdir()  # 64 characters, not hex
    assert container_ids(str(tmp_path)) == []


def test_container_ids_of_a_missing_root_is_empty_and_source_is_none(tmp_path: Path) -> None:
    """`container_ids` gives an empty list (docs/behaviour.md §6); the reader says None, so the line's `containers`
    is null (§3.10)."""
    missing = str(tmp_path / "nowhere")
    assert container_ids(missing) == []
    assert ContainerSource(missing, "").read() is None
    # A root that lists but holds no Docker layout is a machine without containers: an empty list, not null.
    assert ContainerSource(str(tmp_path), "").read() == ()


def test_readings_from_both_layouts_with_fallback_names(tmp_path: Path) -> None:
    """Without --names every container is the first 12 characters of its id (docs/behaviour.md §3.8)."""
    both_layouts(tmp_path)
    readings = ContainerSource(str(tmp_path), "").read()
    assert readings is not None
    assert [(r.container_id, r.name) for r in readings] == [
        (ID_UI, "0123456789ab"),
        (ID_POSTGRES, "3f4e1c2b9a8d"),
        (ID_SCHEDULER, "a1b2c3d4e5f6"),
    ]
    first = readings[0]
    assert first.memory_current == 400 * MIB
    assert (first.memory_stat["active_file"], first.memory_stat["inactive_file"]) == (30 * MIB, 50 * MIB)
    assert first.memory_events is not None and first.memory_events["oom_kill"] == 1
    assert first.cpu_usage_usec == 7


@pytest.mark.timeout(30)
def test_names_good_missing_malformed_secret_huge_and_dev_zero(tmp_path: Path) -> None:
    """docs/behaviour.md §3.8: the name from a good file; the id's first 12 characters for every file that can't give
    one."""
    cgroup, names = tmp_path / "cgroup", tmp_path / "containers"
    tree_for_names(cgroup)
    names_directory(names)
    assert os.path.getsize(names / ID_HUGE / "config.v2.json") > 5 * MIB
    readings = ContainerSource(str(cgroup), str(names)).read()
    assert readings is not None
    assert {r.container_id: r.name for r in readings} == {
        ID_POSTGRES: "postgres",
        ID_UI: ID_UI[:12],
        ID_MALFORMED: ID_MALFORMED[:12],
        ID_SECRETIVE: "vault",
        ID_HUGE: ID_HUGE[:12],
        ID_ZERO: ID_ZERO[:12],
    }
    assert SECRET_VALUE not in repr(readings)


@pytest.mark.timeout(30)
def test_a_fifo_config_does_not_block(tmp_path: Path) -> None:
    """A FIFO with no writer would block a plain open() for ever: it is refused, and the fallback name used."""
    cgroup, names = tmp_path / "cgroup", tmp_path / "containers"
    write_cgroup(cgroupfs_dir(cgroup, ID_UI), FILES)
    (names / ID_UI).mkdir(parents=True)
    os.mkfifo(names / ID_UI / "config.v2.json")
    readings = ContainerSource(str(cgroup), str(names)).read()
    assert readings is not None and [r.name for r in readings] == [ID_UI[:12]]


def test_names_are_read_once_per_id_and_fallback_cached(tmp_path: Path) -> None:
    """docs/behaviour.md §3.8: read once per id and cached, the fallback too: a later change to the file is not seen."""
    cgroup, names = tmp_path / "cgroup", tmp_path / "containers"
    write_cgroup(systemd_dir(cgroup, ID_POSTGRES), FILES)
    write_cgroup(systemd_dir(cgroup, ID_UI), FILES)
    write_config(names, ID_POSTGRES, config_v2("postgres"))
    source = ContainerSource(str(cgroup), str(names))
    first = source.read()
    write_config(names, ID_POSTGRES, config_v2("renamed"))
    write_config(names, ID_UI, config_v2("ui"))
    second = source.read()
    assert first is not None and second is not None
    # Readings come in id order (ID_UI sorts first); the line sorts by name later.
    assert [r.name for r in first] == [r.name for r in second] == [ID_UI[:12], "postgres"]


def test_a_container_removed_between_two_reads_is_left_out(tmp_path: Path) -> None:
    """docs/behaviour.md §3.8: a container that vanishes is left out of that line and its series ends; nothing is
    raised."""
    both_layouts(tmp_path)
    source = ContainerSource(str(tmp_path), "")
    first = source.read()
    shutil.rmtree(systemd_dir(tmp_path, ID_POSTGRES))
    second = source.read()
    assert first is not None and second is not None
    assert [r.container_id for r in first] == [ID_UI, ID_POSTGRES, ID_SCHEDULER]
    assert [r.container_id for r in second] == [ID_UI, ID_SCHEDULER]


def test_a_container_vanishing_mid_listing_is_left_out(tmp_path: Path) -> None:
    """The race the kernel allows: the directory is listed, then its files are gone before they are read."""
    both_layouts(tmp_path)
    for name in ("memory.current", "memory.stat", "memory.events", "cpu.stat"):
        (cgroupfs_dir(tmp_path, ID_UI) / name).unlink()
    readings = ContainerSource(str(tmp_path), "").read()
    assert readings is not None and [r.container_id for r in readings] == [ID_POSTGRES, ID_SCHEDULER]


@pytest.mark.parametrize(
    ("file", "content"),
    [
        ("memory.current", "max\n"),  # a limit file's word, not a usage
        ("memory.current", ""),
        ("memory.current", "12 34\n"),
        ("memory.stat", "x" * (READ_LIMIT + 1)),  # over the bound
    ],
)
def test_a_container_whose_memory_files_do_not_parse_is_left_out(tmp_path: Path, file: str, content: str) -> None:
    """docs/behaviour.md §3.8: a container whose files do not parse is left out of that line; the others stay."""
    both_layouts(tmp_path)
    (systemd_dir(tmp_path, ID_SCHEDULER) / file).write_text(content)
    readings = ContainerSource(str(tmp_path), "").read()
    assert readings is not None and [r.container_id for r in readings] == [ID_UI, ID_POSTGRES]


def test_optional_files_missing_give_none(tmp_path: Path) -> None:
    """No memory.events: oom_kill is left out (docs/behaviour.md §3.8); no cpu.stat: no usage, so cpu reads 0.0."""
    write_cgroup(cgroupfs_dir(tmp_path, ID_UI), CgroupFiles(4096, 0, 0, oom_kill=None, usage_usec=None))
    readings = ContainerSource(str(tmp_path), "").read()
    assert readings is not None
    [only] = readings
    assert (only.memory_current, only.memory_events, only.cpu_usage_usec) == (4096, None, None)


def test_read_bounded_limits(tmp_path: Path) -> None:
    """1 MiB is read; one byte more is unparsable; devices and directories are refused (docs/behaviour.md §3.8)."""
    exact, over = tmp_path / "exact", tmp_path / "over"
    exact.write_bytes(b"a" * READ_LIMIT)
    over.write_bytes(b"a" * (READ_LIMIT + 1))
    assert READ_LIMIT == 1024 * 1024
    text = read_bounded(str(exact))
    assert text is not None and len(text) == READ_LIMIT
    assert read_bounded(str(over)) is None
    assert read_bounded("/dev/zero") is None
    assert read_bounded(str(tmp_path)) is None
    assert read_bounded(str(tmp_path / "missing")) is None


def read_pressure(proc: str = "/proc") -> tuple[dict[str, Pressure] | None, ParseError | None]:
    """The pressure section's reading of `proc` as a line takes it, and why it has none."""
    readings = host_readings(read_kernel_texts(FS(proc)))
    return (None if readings.pressure is None else dict(readings.pressure)), readings.failures.get("pressure")


def test_read_pressure_from_a_fixture_proc(tmp_path: Path) -> None:
    """psi.rst: the `some` total in µs per resource; an old kernel's `cpu` file has no `full` line."""
    write_pressure(tmp_path, cpu=1_500_000, memory=250, io=42_000_000)
    (tmp_path / "pressure" / "cpu").write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=1500000\n")
    found, failure = read_pressure(str(tmp_path))
    assert found is not None and failure is None
    assert {name: p.some.total_us for name, p in found.items()} == {"cpu": 1_500_000, "memory": 250, "io": 42_000_000}
    assert found["cpu"].full is None
    assert found["io"].full is not None and found["io"].full.total_us == 21_000_000


def test_read_pressure_missing_file_left_out_and_no_psi_none(tmp_path: Path) -> None:
    """docs/behaviour.md §3.9: a missing file is left out; no /proc/pressure (a kernel without PSI) or nothing parses:
    None."""
    write_pressure(tmp_path, cpu=10, memory=None, io=20)
    found, failure = read_pressure(str(tmp_path))
    assert found is not None and sorted(found) == ["cpu", "io"] and failure is None
    assert read_pressure(str(tmp_path / "no-proc")) == (None, None)
    for resource in ("cpu", "io"):
        (tmp_path / "pressure" / resource).write_text("garbage\n")
    found, failure = read_pressure(str(tmp_path))
    assert found is None and failure is not None, "nothing parses: no reading, and the reason"
    assert failure.source == str(tmp_path / "pressure" / "cpu")


@pytest.mark.skipif(not os.path.isdir("/proc/pressure"), reason="this kernel has no PSI")
def test_read_pressure_on_this_machine() -> None:
    """docs/behaviour.md §3.9 on a kernel with PSI (skipped without): all three files, totals that never go down."""
    first, _ = read_pressure()
    second, _ = read_pressure()
    assert first is not None and second is not None
    assert sorted(first) == ["cpu", "io", "memory"]
    for resource in first:
        assert 0 <= first[resource].some.total_us <= second[resource].some.total_us


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("web_1.blue-green", "web_1.blue-green"),  # every character Docker allows
        ("x" * 255, "x" * 255),
        ("x" * 256, None),  # longer than any name worth a line
        ("a\nb", None),
        ('pg","mem":0,"x":"', None),  # quotes: not a Docker name (the encoder would escape it anyway)
        ("-leading-dash", None),
        ("é", None),
    ],
)
def test_only_names_docker_would_give_are_shown(tmp_path: Path, name: str, shown: str | None) -> None:
    """A hostile or damaged config.v2.json cannot put an arbitrary string into every line: a name that breaks
    Docker's own rule (`[a-zA-Z0-9][a-zA-Z0-9_.-]+`) or exceeds 255 characters gives the id's first 12."""
    cgroup, names = tmp_path / "cgroup", tmp_path / "containers"
    write_cgroup(cgroupfs_dir(cgroup, ID_UI), FILES)
    write_config(names, ID_UI, config_v2(name))
    readings = ContainerSource(str(cgroup), str(names)).read()
    assert readings is not None
    assert [r.name for r in readings] == [shown if shown is not None else ID_UI[:12]]
