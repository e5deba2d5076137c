"""Properties of the `mem` section (docs/behaviour.md §3.4), from /proc/meminfo values in bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.memory import MEMINFO_KEYS, memory_section
from orca.sample.parse.meminfo import MemInfo
from tests.property.strategies_core import kilobytes, meminfos

rss = st.integers(min_value=0, max_value=2**50)


@given(meminfos, rss)
def test_none_exactly_without_memtotal(info: MemInfo, rss_bytes: int) -> None:
    section = memory_section(info, rss_bytes)
    assert (section is None) == ("MemTotal" not in info.bytes_by_key)


@given(meminfos, rss)
def test_used_and_swap_used_are_never_negative(info: MemInfo, rss_bytes: int) -> None:
    section = memory_section(info, rss_bytes)
    if section is not None:
        assert section.used >= 0 and section.swap_used >= 0
        assert section.total == info.bytes_by_key["MemTotal"]
        assert section.rss == rss_bytes


@given(meminfos, rss)
def test_used_is_total_less_memavailable(info: MemInfo, rss_bytes: int) -> None:
    values = info.bytes_by_key
    section = memory_section(info, rss_bytes)
    if section is not None and "MemAvailable" in values:
        assert section.available == values["MemAvailable"]
        assert section.used == max(0, values["MemTotal"] - values["MemAvailable"])


@given(meminfos, rss)
def test_without_memavailable_available_is_free_buffers_and_cached(info: MemInfo, rss_bytes: int) -> None:
    """docs/behaviour.md §3.4: kernels before 3.14 print no MemAvailable; a missing term counts 0."""
    values = {key: value for key, value in info.bytes_by_key.items() if key != "MemAvailable"}
    section = memory_section(MemInfo(values), rss_bytes)
    if section is not None:
        assert section.available == values.get("MemFree", 0) + values.get("Buffers", 0) + values.get("Cached", 0)


@given(meminfos, rss)
def test_cache_is_the_file_pages_else_cached(info: MemInfo, rss_bytes: int) -> None:
    values = info.bytes_by_key
    section = memory_section(info, rss_bytes)
    if section is None:
        return
    if "Active(file)" in values and "Inactive(file)" in values:
        assert section.cache == values["Active(file)"] + values["Inactive(file)"]
    else:
        assert section.cache == values.get("Cached", 0)


@given(kilobytes, kilobytes, kilobytes)
def test_swap_used_is_total_less_free(mem_total: int, swap_total: int, swap_free: int) -> None:
    section = memory_section(MemInfo({"MemTotal": mem_total, "SwapTotal": swap_total, "SwapFree": swap_free}), 0)
    assert section is not None
    assert section.swap_total == swap_total
    assert section.swap_used == max(0, swap_total - swap_free)


def test_a_machine_without_swap() -> None:
    """From this machine's /proc/meminfo shape: SwapTotal and SwapFree both 0 kB."""
    info = MemInfo({"MemTotal": 4 * 2**30, "MemAvailable": 3 * 2**30, "SwapTotal": 0, "SwapFree": 0,
                    "Active(file)": 100 * 2**20, "Inactive(file)": 200 * 2**20, "Cached": 350 * 2**20})
    section = memory_section(info, 12345)
    assert section is not None
    assert (section.total, section.used, section.available) == (4 * 2**30, 2**30, 3 * 2**30)
    assert (section.cache, section.swap_total, section.swap_used, section.rss) == (300 * 2**20, 0, 0, 12345)


@given(meminfos, rss)
def test_the_keys_the_reader_parses_are_all_it_reads(info: MemInfo, rss_bytes: int) -> None:
    """The reader keeps only MEMINFO_KEYS, to keep each line cheap: the section must be the same as from every key."""
    kept = MemInfo({key: value for key, value in info.bytes_by_key.items() if key in MEMINFO_KEYS})
    assert memory_section(kept, rss_bytes) == memory_section(info, rss_bytes)
