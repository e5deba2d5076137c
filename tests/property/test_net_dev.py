"""Properties of the /proc/net/dev parser (docs/behaviour.md §3.7, §6 `parse_net_dev`)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from orca.sample.parse.net_dev import NetDev, parse, parse_net_dev
from tests.property.render_system import render_net_dev
from tests.property.strategies_system import U64_MAX, counters, hostile_texts, net_dev_snapshots

loopbacks = st.none() | st.tuples(counters, counters)


@given(net_dev_snapshots, loopbacks, st.booleans())
@example(NetDev({"eth0.100": (U64_MAX, 0), "veth-1@if2": (1, 2), "a": (0, 0)}), (1, 1), True)
def test_render_then_parse_gives_the_snapshot_back(
    net: NetDev, loopback: tuple[int, int] | None, no_space: bool
) -> None:
    # `no_space` is the old `eth0:123` form; `lo` is read and then left out (docs/behaviour.md §3.7).
    text = render_net_dev(net, loopback=loopback, no_space=no_space)
    if not net.bytes_by_interface and loopback is None:
        assert parse(text).failure().source == "/proc/net/dev"  # the header alone: no interface line at all
        return
    assert parse(text).unwrap() == net
    assert parse_net_dev(text) == net.bytes_by_interface


@given(hostile_texts)
@example("  eth0: -5 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n")
@example("  eth0:" + "9" * 5000 + " 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n")
def test_any_text_parses_or_fails_without_raising_and_never_gives_a_negative_counter(text: str) -> None:
    by_parse = parse(text).map(lambda net: dict(net.bytes_by_interface)).value_or({})
    by_adapter = parse_net_dev(text)
    assert by_parse == by_adapter
    assert "lo" not in by_adapter
    assert all(0 <= received <= U64_MAX and 0 <= sent <= U64_MAX for received, sent in by_adapter.values())


@given(net_dev_snapshots.filter(lambda net: len(net.bytes_by_interface) > 0), st.data())
def test_a_negative_counter_skips_its_interface_rather_than_becoming_negative(
    net: NetDev, data: st.DataObject
) -> None:
    # On purpose: an interface line with a counter that is not an unsigned decimal is skipped, not zeroed;
    # docs/behaviour.md §3.7 then counts that interface 0 for the interval, as one that vanished.
    names = list(net.bytes_by_interface)
    spoiled = data.draw(st.integers(0, len(names) - 1))
    lines = render_net_dev(net, loopback=None).splitlines()
    name, _, counters_text = lines[2 + spoiled].rpartition(":")
    words = counters_text.split()
    words[data.draw(st.integers(0, 15))] = "-5"
    lines[2 + spoiled] = f"{name}: " + " ".join(words)
    expected = {key: value for key, value in net.bytes_by_interface.items() if key != names[spoiled]}
    text = "\n".join(lines) + "\n"
    assert parse_net_dev(text) == expected
