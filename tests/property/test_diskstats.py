"""Properties of the /proc/diskstats parser (docs/behaviour.md §3.6, §6 `parse_diskstats`)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.compute.rates import parse_diskstats
from orca.sample.parse.block import skipped_disk
from orca.sample.parse.diskstats import DiskIo, DiskStats, parse
from tests.property.render_system import render_diskstats
from tests.property.strategies_system import U64_MAX, counters, diskstats_snapshots, hostile_texts

# Documentation/ABI/testing/procfs-diskstats: 14 fields, 18 from 4.18, 20 from 5.5; iostats.rst: 7 for the
# partition lines of 2.6.25 and older.
field_counts = st.sampled_from([14, 18, 20, 7])


@given(diskstats_snapshots, field_counts, counters)
@example(DiskStats((DiskIo("sda", U64_MAX, U64_MAX),)), 20, U64_MAX)
@example(DiskStats((DiskIo("123", 0, 0),)), 7, 0)
def test_render_then_parse_gives_the_snapshot_back(stats: DiskStats, field_count: int, filler: int) -> None:
    assert parse(render_diskstats(stats, field_count, filler)).unwrap() == stats


@given(diskstats_snapshots, st.data())
def test_the_adapter_sums_512_byte_sectors_over_the_named_disks(stats: DiskStats, data: st.DataObject) -> None:
    names = sorted({device.name for device in stats.devices})
    chosen = data.draw(st.lists(st.sampled_from(names), max_size=len(names) + 2))
    counted = [device for device in stats.devices if device.name in chosen]
    if not chosen:  # docs/behaviour.md §3.6: with no list of whole disks, all but the skip list.
        counted = [device for device in stats.devices if not skipped_disk(device.name)]
    expected = (sum(d.sectors_read for d in counted) * 512, sum(d.sectors_written for d in counted) * 512)
    assert parse_diskstats(render_diskstats(stats), chosen) == expected


@given(hostile_texts, st.lists(st.text(max_size=6), max_size=3))
@example(" 8 0 sda 1 0 -5 0 1 0 2 0 0 0 0\n", [])
@example(" 8 0 sda 1 0 " + "9" * 5000 + " 0 1 0 2 0 0 0 0\n", ["sda"])
def test_any_text_parses_or_fails_without_raising_and_never_gives_a_negative_counter(
    text: str, disks: list[str]
) -> None:
    stats = parse(text).value_or(DiskStats(()))
    assert all(0 <= d.sectors_read <= U64_MAX and 0 <= d.sectors_written <= U64_MAX for d in stats.devices)
    assert all(device.name and device.name.split() == [device.name] for device in stats.devices)
    read, written = parse_diskstats(text, disks)
    assert read >= 0
    assert written >= 0


@given(diskstats_snapshots, field_counts, st.data())
def test_a_negative_counter_skips_its_line_rather_than_becoming_negative(
    stats: DiskStats, field_count: int, data: st.DataObject
) -> None:
    # On purpose: a line with any field but the name not an unsigned decimal is skipped, not zeroed.
    spoiled = data.draw(st.integers(0, len(stats.devices) - 1))
    lines = render_diskstats(stats, field_count).splitlines()
    words = lines[spoiled].split()
    words[data.draw(st.sampled_from([i for i in range(field_count) if i != 2]))] = "-5"
    lines[spoiled] = " ".join(words)
    expected = stats.devices[:spoiled] + stats.devices[spoiled + 1 :]
    assert parse("\n".join(lines) + "\n").value_or(DiskStats(())).devices == expected
