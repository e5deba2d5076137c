"""cgroup v2 files and Docker's names for them (docs/behaviour.md §3.8, §6; Documentation/admin-guide/cgroup-v2.rst).

This machine mounts cgroup v1 for memory, so the v2 files are written by hand from cgroup-v2.rst's formats:
`memory.current` a single value in bytes; `memory.stat`, `memory.events` and `cpu.stat` flat-keyed, `key value`
per line (the keys and their order those of a 6.x kernel's memory.stat); `memory.max` a single value or `max`;
`pids.current` a single value; `io.stat` nested-keyed, its text the example cgroup-v2.rst gives. Its cgroup v2
hierarchy has no cpu controller: its root `cpu.stat` is a real capture of that case.

`config.v2.json` is written by hand in Docker's format (the file under /var/lib/docker/containers/<id>/), with
secrets in `Config.Env`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.result import Failure, Success

from orca.sample.compute.containers import container_mem
from orca.sample.parse import cgroup

CAPTURES = Path(__file__).parent / "captures"


def handwritten(name: str) -> str:
    return (CAPTURES / f"cgroup_v2_{name}.handwritten-from-cgroup-v2.rst.txt").read_text()


CONFIG = (CAPTURES / "cgroup_docker_config.v2.handwritten.json").read_text()
ID = "3f4e8a9c1b2d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"


# memory.current ------------------------------------------------------------------------------------------------


def test_memory_current() -> None:
    assert cgroup.memory_current(handwritten("memory.current")) == Success(434765824)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("max\n", id="max (memory.max's word, never a usage)"),
        pytest.param("", id="empty"),
        pytest.param("\n", id="newline only"),
        pytest.param("-4096\n", id="negative"),
        pytest.param("4096 8192\n", id="two numbers"),
        pytest.param("4k\n", id="a unit"),
        pytest.param("٤٠٩٦\n", id="Arabic-Indic digits"),
        pytest.param("9" * 5000, id="5000 digits"),
    ],
)
def test_memory_current_rejects(text: str) -> None:
    assert isinstance(cgroup.memory_current(text), Failure)


# flat-keyed files ----------------------------------------------------------------------------------------------


def test_memory_stat() -> None:
    """56 lines in the hand-written file, all `key value`."""
    values = cgroup.flat_keyed(handwritten("memory.stat"), "memory.stat").unwrap()
    assert len(values) == 56
    assert values["anon"] == 196608000
    assert values["inactive_file"] == 152125440
    assert values["active_file"] == 77406208
    assert values["pgmajfault"] == 318
    assert values["zswap"] == 0


def test_memory_events() -> None:
    values = cgroup.flat_keyed(handwritten("memory.events"), "memory.events")
    assert values == Success({"low": 0, "high": 0, "max": 12, "oom": 1, "oom_kill": 1, "oom_group_kill": 0})


def test_cpu_stat() -> None:
    values = cgroup.flat_keyed(handwritten("cpu.stat"), "cpu.stat").unwrap()
    assert (values["usage_usec"], values["user_usec"], values["system_usec"]) == (8823474, 6512093, 2311381)
    assert len(values) == 8


def test_bad_lines_are_skipped() -> None:
    text = "anon 4096\n\nbroken\nfile -1\nkernel 1 2\nshmem x\n  slab   8192  \nsock ٤\nanon 1\n"
    # `anon` twice: the first value stays (a later line cannot override one already read).
    assert cgroup.flat_keyed(text, "memory.stat") == Success({"anon": 4096, "slab": 8192})


def test_a_file_truncated_mid_key_keeps_the_whole_lines() -> None:
    text = handwritten("memory.events")[:30]
    assert text == "low 0\nhigh 0\nmax 12\noom 1\noom_"
    assert cgroup.flat_keyed(text, "memory.events") == Success({"low": 0, "high": 0, "max": 12, "oom": 1})


@pytest.mark.parametrize("text", ["", "\n\n", "max\n", "usage_usec\n", "a b c\n", "x -1\n"])
def test_nothing_parses_is_a_failure_naming_the_source(text: str) -> None:
    result = cgroup.flat_keyed(text, "cpu.stat")
    assert isinstance(result, Failure)
    assert result.failure().source == "cpu.stat"


# container ids -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dirname", "expected"),
    [
        pytest.param(f"docker-{ID}.scope", ID, id="systemd driver"),
        pytest.param(ID, ID, id="cgroupfs driver"),
        pytest.param("init.scope", None, id="init.scope"),
        pytest.param("docker.service", None, id="docker.service"),
        pytest.param(f"docker-{ID.upper()}.scope", None, id="upper-case hex"),
        pytest.param(ID.upper(), None, id="upper-case hex, cgroupfs"),
        pytest.param(f"docker-{ID[:-1]}.scope", None, id="63 characters"),
        pytest.param(ID + "0", None, id="65 characters"),
        pytest.param(f"docker-{ID}.scope.bak", None, id="suffix"),
        pytest.param(ID + "\n", None, id="trailing newline"),
        pytest.param(f"docker-{ID[:-1]}g.scope", None, id="not hex"),
        pytest.param(f"libpod-{ID}.scope", None, id="podman"),
        pytest.param("", None, id="empty"),
    ],
)
def test_container_id(dirname: str, expected: str | None) -> None:
    assert cgroup.container_id(dirname) == expected


# config.v2.json ------------------------------------------------------------------------------------------------


def test_container_name_from_dockers_config() -> None:
    assert cgroup.container_name(CONFIG) == "postgres"


def test_nothing_but_the_name_comes_back() -> None:
    """docs/behaviour.md §3.8: the file holds the container's environment; only the name leaves the parser."""
    name = cgroup.container_name(CONFIG)
    assert "hunter2" in CONFIG
    assert "hunter2" not in name
    assert "wJalrXUtnFEMI" not in name


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param("", "", id="empty"),
        pytest.param("not json at all", "", id="not JSON"),
        pytest.param(CONFIG[: len(CONFIG) // 2], "", id="truncated"),
        pytest.param('{"Name": 42}', "", id="Name a number"),
        pytest.param('{"Name": null}', "", id="Name null"),
        pytest.param('{"Name": ["/postgres"]}', "", id="Name a list"),
        pytest.param('{"Name": {"Env": "SECRET=1"}}', "", id="Name an object"),
        pytest.param('{"ID": "abc"}', "", id="no Name"),
        pytest.param('["/postgres"]', "", id="a list"),
        pytest.param('"/postgres"', "", id="a string"),
        pytest.param('{"Name": "postgres"}', "postgres", id="no leading slash"),
        pytest.param('{"Name": "//x"}', "/x", id="only one slash removed"),
        pytest.param('{"Name": "/"}', "", id="slash only"),
        pytest.param('{"Name": "/a\\ud800"}', "", id="lone surrogate escape: not valid JSON text"),
        pytest.param("[" * 100_000, "", id="nested 100000 deep"),
        pytest.param('{"Name": "/a"}\n{"Name": "/b"}', "", id="two documents"),
    ],
)
def test_container_name_hostile(config: str, expected: str) -> None:
    assert cgroup.container_name(config) == expected


# container_mem (the documented API) ---------------------------------------------------------------------------


def test_container_mem_is_current_less_inactive_file() -> None:
    """434765824 − 152125440, worked out by hand."""
    assert container_mem(handwritten("memory.current"), handwritten("memory.stat")) == 282640384


@pytest.mark.parametrize(
    ("current", "stat", "expected"),
    [
        pytest.param("max\n", "inactive_file 1\n", -1, id="current max"),
        pytest.param("", "inactive_file 1\n", -1, id="current empty"),
        pytest.param("4096\n", "", 4096, id="stat empty: nothing subtracted"),
        pytest.param("4096\n", "anon 4096\n", 4096, id="no inactive_file"),
        pytest.param("4096\n", "inactive_file 8192\n", 0, id="never below 0"),
        pytest.param("4096\n", "inactive_file 4096\n", 0, id="all inactive"),
        pytest.param("4096\n", "inactive_file -8192\n", 4096, id="negative inactive_file ignored"),
    ],
)
def test_container_mem_edges(current: str, stat: str, expected: int) -> None:
    assert container_mem(current, stat) == expected


# cpu.stat's bandwidth counters ---------------------------------------------------------------------------------


def test_cpu_periods_of_a_throttled_cgroup() -> None:
    """cgroup-v2.rst: nr_periods and nr_throttled, with the cpu controller enabled (3856 of 4820 periods)."""
    values = cgroup.flat_keyed(handwritten("cpu.stat.throttled"), "cpu.stat").unwrap()
    assert cgroup.cpu_periods(values) == Success(cgroup.CpuPeriods(periods=4820, throttled=3856))


def test_cpu_periods_of_an_unlimited_cgroup_are_zero() -> None:
    """The cpu controller enabled but no cpu.max limit: the counters are there and 0."""
    values = cgroup.flat_keyed(handwritten("cpu.stat"), "cpu.stat").unwrap()
    assert cgroup.cpu_periods(values) == Success(cgroup.CpuPeriods(periods=0, throttled=0))


def test_no_cpu_controller_no_periods() -> None:
    """A real cgroup v2 root of this machine (Linux 6.18.44-fc-v657, cpu controller on cgroup v1): only the four
    usage keys, so there is nothing to say about throttling."""
    capture = CAPTURES / "cgroup_v2_cpu.stat.no-cpu-controller.linux-6.18.44-fc-v657.x86_64-2cores.txt"
    values = cgroup.flat_keyed(capture.read_text(), "cpu.stat").unwrap()
    assert sorted(values) == ["nice_usec", "system_usec", "usage_usec", "user_usec"]
    assert isinstance(cgroup.cpu_periods(values), Failure)
    assert isinstance(cgroup.cpu_periods({"nr_periods": 5}), Failure)  # one without the other is no pair either


# memory.max and pids.current -----------------------------------------------------------------------------------


def test_memory_max_a_limit_and_no_limit() -> None:
    """cgroup-v2.rst: memory.max is a single value; its default, `max`, means no limit."""
    assert cgroup.memory_max(handwritten("memory.max")) == Success(512 * 1024 * 1024)
    assert cgroup.memory_max(handwritten("memory.max.unlimited")) == Success(None)


@pytest.mark.parametrize("text", ["", "\n", "-1\n", "max max\n", "MAX\n", "512M\n", "9" * 5000, "٤٠٩٦\n"])
def test_memory_max_rejects(text: str) -> None:
    assert isinstance(cgroup.memory_max(text), Failure)


def test_pids_current() -> None:
    assert cgroup.pids_current(handwritten("pids.current")) == Success(17)
    assert cgroup.pids_current("0\n") == Success(0)  # a cgroup whose processes all ended


@pytest.mark.parametrize("text", ["", "max\n", "-3\n", "1 2\n", "x\n"])
def test_pids_current_rejects(text: str) -> None:
    assert isinstance(cgroup.pids_current(text), Failure)


# io.stat -------------------------------------------------------------------------------------------------------


def test_io_stat_of_the_documentation() -> None:
    """cgroup-v2.rst's example: two devices, 8:16 and 8:0; only rbytes and wbytes are kept."""
    assert cgroup.io_stat(handwritten("io.stat")) == Success({
        "8:16": cgroup.DeviceIo(read_bytes=1459200, written_bytes=314773504),
        "8:0": cgroup.DeviceIo(read_bytes=90430464, written_bytes=299008000),
    })


def test_io_stat_empty_is_no_io_yet() -> None:
    """A cgroup that has not done any I/O has an empty io.stat: no devices, which is not a failure."""
    assert cgroup.io_stat("") == Success({})


def test_io_stat_hostile_lines() -> None:
    """Keys in another order and extra keys (io.latency's `depth`, `avg_lat`; iocost's `cost.*`) are fine; a line
    without rbytes or wbytes, with a negative or non-decimal value, or not keyed by MAJ:MIN is skipped; a device
    that appears twice keeps its first line."""
    text = (
        "254:0 wbytes=20 rbytes=10 rios=1 wios=1 dbytes=0 dios=0 cost.vrate=100.00 cost.usage=5 depth=4 avg_lat=7\n"
        "253:0 rbytes=10 rios=1\n"
        "252:0 rbytes=-1 wbytes=5\n"
        "251:0 rbytes=0x10 wbytes=5\n"
        "vda rbytes=1 wbytes=1\n"
        "8:0:0 rbytes=1 wbytes=1\n"
        "\n"
        "254:0 rbytes=99 wbytes=99\n"
        "7:0 rbytes=4096 wbytes=0\n"
    )
    assert cgroup.io_stat(text) == Success({"254:0": cgroup.DeviceIo(10, 20), "7:0": cgroup.DeviceIo(4096, 0)})


def test_io_stat_a_key_twice_keeps_its_first_value() -> None:
    assert cgroup.io_stat("8:0 rbytes=1 rbytes=2 wbytes=3\n") == Success({"8:0": cgroup.DeviceIo(1, 3)})


@pytest.mark.parametrize("text", ["garbage\n", "8:0\n", "8:0 rbytes=1\n", "rbytes=1 wbytes=2\n", "8:0 r=1 w=2\n"])
def test_io_stat_with_lines_but_none_usable_is_a_failure(text: str) -> None:
    result = cgroup.io_stat(text)
    assert isinstance(result, Failure)
    assert result.failure().source == "io.stat"
