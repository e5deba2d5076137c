"""The own cgroup's parsers and section (docs/behaviour.md §3.11): mountinfo rendered as proc_pid_mountinfo(5) writes
it and parsed back; every parser total on any text; a cgroup's directories never outside its mount; the section never
negative, its shares bounded, and nothing between a reading and itself."""

from __future__ import annotations

import itertools
import math
import posixpath

from hypothesis import example, given
from hypothesis import strategies as st
from returns.result import Success

from orca.sample.compute.own_cgroup import CgroupReading, cgroup_limits, cgroup_reading, cgroup_section
from orca.sample.parse import cgroup, cgroup_v1
from orca.sample.parse.cgroup import CpuPeriods
from orca.sample.parse.mountinfo import CgroupMount, cgroup_mounts
from orca.sample.parse.own_cgroup import CONTROLLERS, Hierarchy, cgroup_files, directories, hierarchies, own_paths
from tests.property.render_process import U64, flat_files, flat_keys, render_flat_keyed, u64s

any_text = st.text(st.characters(codec=None, exclude_categories=()))  # surrogates included
texts = st.one_of(any_text, st.binary().map(lambda data: data.decode("utf-8", "replace")))

# A path component as a mount point or cgroup may name it, spaces, tabs, newlines and backslashes included.
components = st.text(st.characters(blacklist_characters="/\0", codec="utf-8"), min_size=1, max_size=12).filter(
    lambda part: part not in (".", "..")
)
absolute = st.lists(components, max_size=4).map(lambda parts: "/" + "/".join(parts))
v1_controllers = st.sets(st.sampled_from(["cpu", "cpuacct", "memory", "pids", "blkio", "name=systemd"]), min_size=1)


def escaped(path: str) -> str:
    """A path as mountinfo writes it (fs/proc_namespace.c: space, tab, newline and backslash as octal)."""
    return "".join(f"\\{ord(char):03o}" if char in " \t\n\\" else char for char in path)


@st.composite
def cgroup_mount_lists(draw: st.DrawFn) -> list[CgroupMount]:
    count = draw(st.integers(0, 6))
    mounts = []
    for _ in range(count):
        root, point = draw(absolute), draw(absolute)
        if draw(st.booleans()):
            controllers = frozenset(draw(v1_controllers))
            mounts.append(CgroupMount(version=1, root=root, mount_point=point, controllers=controllers))
        else:
            mounts.append(CgroupMount(version=2, root=root, mount_point=point, controllers=frozenset()))
    return mounts


def render_mountinfo(mounts: list[CgroupMount], optional: list[str]) -> str:
    lines = ["27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard"]
    for number, mount in enumerate(mounts, start=30):
        kind = "cgroup2 cgroup2 rw,nsdelegate" if mount.version == 2 else "cgroup cgroup rw," + ",".join(
            sorted(mount.controllers))
        fields = " ".join([*optional, "-"])
        lines.append(f"{number} 27 0:{number} {escaped(mount.root)} {escaped(mount.mount_point)} rw {fields} {kind}")
    return "\n".join(lines) + "\n"


@given(cgroup_mount_lists(), st.lists(st.sampled_from(["shared:4", "master:1", "propagate_from:2", "unbindable"]),
                                      max_size=3))
@example([CgroupMount(version=1, root="/", mount_point="/\x85", controllers=frozenset({"cpu"}))], [])
def test_mountinfo_round_trip(mounts: list[CgroupMount], optional: list[str]) -> None:
    assert cgroup_mounts(render_mountinfo(mounts, optional)) == Success(tuple(mounts))


@given(texts)
@example("1 2 3:4 / /x rw - cgroup2\n")
@example("1 2 3:4 / /x rw - - cgroup cgroup rw,memory\n")
@example("1:memory:/../..\n0::/..\n")
def test_every_parser_is_total(text: str) -> None:
    limit = cgroup.pids_max(text).value_or(None)
    assert limit is None or 0 <= limit <= U64
    mounts = cgroup_mounts(text).value_or(())
    own = own_paths(text).value_or({})
    found = hierarchies(own, mounts)
    assert set(found) <= set(CONTROLLERS)
    for where in found.values():
        assert where.directories


@given(cgroup_mount_lists(), st.one_of(absolute, texts))
@example([CgroupMount(2, "/", "/sys/fs/cgroup", frozenset())], "/../../etc")
@example([CgroupMount(1, "/a", "/m", frozenset({"memory"}))], "/a/../../etc")
def test_a_cgroups_directories_stay_under_its_mount(mounts: list[CgroupMount], path: str) -> None:
    for mount in mounts:
        top = posixpath.normpath(mount.mount_point)
        chain = directories(mount, path)
        assert chain[-1] == top
        assert all(posixpath.commonpath([top, directory]) == top for directory in chain)
        assert all(".." not in directory.split("/") for directory in chain)
        assert all(posixpath.dirname(child) == parent for child, parent in itertools.pairwise(chain))


@given(flat_files, flat_keys)
def test_one_flat_value_is_what_the_whole_parse_gives(values: dict[str, int], key: str) -> None:
    text = render_flat_keyed(values)
    assert cgroup.flat_value(text, key) == values.get(key)
    assert cgroup.flat_value(text + f"{key} 7\n", key) == values.get(key, 7)  # the first line of a key wins


@given(texts, st.sampled_from(["inactive_file", "oom_kill", "nr_periods", "a"]))
@example("a 1\na", "a")
@example("a x\na 2", "a")
def test_flat_value_is_total_and_never_more_than_the_whole_parse(text: str, key: str) -> None:
    value = cgroup.flat_value(text, key)
    assert value is None or (0 <= value <= U64 and key in cgroup.flat_keyed(text, "memory.stat").value_or({}))


@given(u64s)
def test_v1_limits_round_trip(limit: int) -> None:
    assert cgroup_v1.no_limit_as_none(limit) == (None if limit >= cgroup_v1.NO_LIMIT_FROM else limit)
    assert cgroup.pids_max(f"{limit}\n") == Success(limit)


maybe = st.none() | u64s
quotas = st.none() | st.floats(min_value=0.001, max_value=4096.0)
periods = st.none() | st.builds(CpuPeriods, u64s, u64s)
readings = st.builds(CgroupReading, maybe, maybe, maybe, maybe, maybe, quotas, periods, maybe, maybe)
dts = st.floats(min_value=0.0, max_value=1e6) | st.sampled_from([0.0, -1.0, math.inf, math.nan, 5e-324])


@given(st.none() | readings, st.none() | readings, dts)
def test_the_section_is_never_negative_and_its_shares_bounded(prev: CgroupReading | None,
                                                              cur: CgroupReading | None, dt: float) -> None:
    section = cgroup_section(prev, cur, dt)
    if cur is None or (cur.memory_limit is None and cur.cpu_limit is None):
        assert section is None
        return
    assert section is not None
    assert section.mem is None or 0 <= section.mem <= (cur.memory_used or 0)
    assert section.cpu is None or (math.isfinite(section.cpu) and section.cpu >= 0.0)
    assert section.throttled is None or 0.0 <= section.throttled <= 100.0
    assert (section.cpu is None) == (cur.cpu_limit is None or prev is None or prev.cpu_usage_usec is None
                                     or cur.cpu_usage_usec is None)
    assert section.cpu_max == cur.cpu_limit and section.mem_max == cur.memory_limit


@given(readings, dts)
def test_nothing_between_a_reading_and_itself(reading: CgroupReading, dt: float) -> None:
    section = cgroup_section(reading, reading, dt)
    if section is not None:
        assert section.cpu in (None, 0.0)
        assert section.throttled in (None, 0.0)


versions = st.sampled_from([1, 2])
chains = st.lists(st.sampled_from(["/cg", "/cg/a", "/cg/a/b"]), min_size=1, max_size=3, unique=True)
file_bytes = st.one_of(st.binary(max_size=64), u64s.map(lambda n: f"{n}\n".encode()), st.sampled_from(
    [b"max\n", b"-1\n", b"max 100000\n", b"50000 100000\n", b"9223372036854771712\n", b"0\n"]))


@given(st.dictionaries(st.sampled_from(list(CONTROLLERS)), st.tuples(versions, chains)),
       st.dictionaries(st.text(max_size=40), file_bytes), st.data())
def test_a_reading_from_any_bytes_is_never_negative(found: dict[str, tuple[int, list[str]]],
                                                     others: dict[str, bytes], data: st.DataObject) -> None:
    files = cgroup_files({name: Hierarchy(1 if version == 1 else 2, tuple(reversed(chain)))
                          for name, (version, chain) in found.items()})
    paths = [*files.limit_paths(), *files.usage_paths(0)]
    texts: dict[str, bytes | OSError] = {path: data.draw(file_bytes | st.just(OSError(2, "gone"))) for path in paths}
    texts.update(others)
    limits = cgroup_limits(files, texts)
    assert limits.memory is None or 0 <= limits.memory < 2**64
    assert limits.cpu is None or limits.cpu > 0
    assert 0 <= limits.cpu_at < max(1, len(files.cpu_quotas))
    reading = cgroup_reading(files, limits, texts)
    for value in (reading.memory_used, reading.inactive_file, reading.oom_kills, reading.cpu_usage_usec,
                  reading.pids, reading.pids_limit):
        assert value is None or 0 <= value <= U64
