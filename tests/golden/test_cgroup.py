"""cgroup v2 files and Docker's names for them (docs/behaviour.md §3.8, §6; Documentation/admin-guide/cgroup-v2.rst).

This machine mounts cgroup v1 for memory, so the v2 files are written by hand from cgroup-v2.rst's formats:
`memory.current` a single value in bytes; `memory.stat`, `memory.events` and `cpu.stat` flat-keyed, `key value`
per line (the keys and their order those of a 6.x kernel's memory.stat). `config.v2.json` is written by hand in
Docker's format (the file under /var/lib/docker/containers/<id>/), with secrets in `Config.Env`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.result import Failure, Success

from orca.sample.compute.containers import container_mem
from orca.sample.parse.cgroup import container_id, container_name, flat_keyed, memory_current

CAPTURES = Path(__file__).parent / "captures"


def handwritten(name: str) -> str:
    return (CAPTURES / f"cgroup_v2_{name}.handwritten-from-cgroup-v2.rst.txt").read_text()


CONFIG = (CAPTURES / "cgroup_docker_config.v2.handwritten.json").read_text()
ID = "3f4e8a9c1b2d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"


# memory.current ------------------------------------------------------------------------------------------------


def test_memory_current() -> None:
    assert memory_current(handwritten("memory.current")) == Success(434765824)


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
    assert isinstance(memory_current(text), Failure)


# flat-keyed files ----------------------------------------------------------------------------------------------


def test_memory_stat() -> None:
    """56 lines in the hand-written file, all `key value`."""
    values = flat_keyed(handwritten("memory.stat"), "memory.stat").unwrap()
    assert len(values) == 56
    assert values["anon"] == 196608000
    assert values["inactive_file"] == 152125440
    assert values["active_file"] == 77406208
    assert values["pgmajfault"] == 318
    assert values["zswap"] == 0


def test_memory_events() -> None:
    values = flat_keyed(handwritten("memory.events"), "memory.events")
    assert values == Success({"low": 0, "high": 0, "max": 12, "oom": 1, "oom_kill": 1, "oom_group_kill": 0})


def test_cpu_stat() -> None:
    values = flat_keyed(handwritten("cpu.stat"), "cpu.stat").unwrap()
    assert (values["usage_usec"], values["user_usec"], values["system_usec"]) == (8823474, 6512093, 2311381)
    assert len(values) == 8


def test_bad_lines_are_skipped() -> None:
    text = "anon 4096\n\nbroken\nfile -1\nkernel 1 2\nshmem x\n  slab   8192  \nsock ٤\nanon 1\n"
    # `anon` twice: the first value stays (a later line cannot override one already read).
    assert flat_keyed(text, "memory.stat") == Success({"anon": 4096, "slab": 8192})


def test_a_file_truncated_mid_key_keeps_the_whole_lines() -> None:
    text = handwritten("memory.events")[:30]
    assert text == "low 0\nhigh 0\nmax 12\noom 1\noom_"
    assert flat_keyed(text, "memory.events") == Success({"low": 0, "high": 0, "max": 12, "oom": 1})


@pytest.mark.parametrize("text", ["", "\n\n", "max\n", "usage_usec\n", "a b c\n", "x -1\n"])
def test_nothing_parses_is_a_failure_naming_the_source(text: str) -> None:
    result = flat_keyed(text, "cpu.stat")
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
    assert container_id(dirname) == expected


# config.v2.json ------------------------------------------------------------------------------------------------


def test_container_name_from_dockers_config() -> None:
    assert container_name(CONFIG) == "postgres"


def test_nothing_but_the_name_comes_back() -> None:
    """docs/behaviour.md §3.8: the file holds the container's environment; only the name leaves the parser."""
    name = container_name(CONFIG)
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
    assert container_name(config) == expected


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
