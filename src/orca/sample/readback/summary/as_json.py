"""The summaries as `orca metrics --json` prints them for a script: one JSON object per instance and line, its keys
the summary's field names, each number at the precision of the lines (docs/metrics.md, "--json")."""

from __future__ import annotations

from dataclasses import asdict

from orca.sample.readback.summary.records import InstanceSummary
from orca.sample.readback.summary.text import utc

PLACES = {"start": 3, "first_t": 3, "last_t": 3, "duration": 3, "median_dt": 3, "wall": 3, "self_cpu_seconds": 2,
          "overhead_percent": 2, "user": 2, "system": 2, "cores_mean": 3, "cores_peak": 3, "cpu_cores": 3,
          "cpu_max": 3}
"""Decimals of the JSON summary's numbers that are not percentages: times as the lines carry them (milliseconds),
CPU seconds as `self_cpu` and `run.exit` carry them, the sampler's overhead as the text prints it, CPUs as
`cgroup.cpu_max` carries them. Every other number with a fraction is a percentage, one decimal like the lines';
byte counts are whole."""
JSON_NAMES = {"received": "in", "sent": "out", "received_peak": "in_peak", "sent_peak": "out_peak"}
"""The keys of `net` as the line names them (`in` and `out` are not names a record's field can have)."""


def rounded(value: object, key: str = "") -> object:
    """A summary's `asdict` with each number at the precision of the lines (see `PLACES`), and `net`'s keys as the
    line names them (`JSON_NAMES`).

    >>> rounded({"cpu": {"mean": 6.039999999999999}, "first_t": 1796032568.5170002, "mem": 5, "p": [12.0]})
    {'cpu': {'mean': 6.0}, 'first_t': 1796032568.517, 'mem': 5, 'p': [12.0]}
    >>> rounded({"net": {"received": 1, "sent": 2, "received_peak": 3, "sent_peak": 4}})
    {'net': {'in': 1, 'out': 2, 'in_peak': 3, 'out_peak': 4}}
    """
    if isinstance(value, float):
        return round(value, PLACES.get(key, 1))
    if isinstance(value, dict):
        if key == "net":
            return {JSON_NAMES.get(name, name): rounded(item, name) for name, item in value.items()}
        return {name: rounded(item, name) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item, key) for item in value]
    return value


def document(summary: InstanceSummary) -> object:
    """One instance's JSON object, before encoding: every field of the summary, with `start_utc` after `start` (which
    run, as the text says it) and `duration` after `last_t`."""
    document: dict[str, object] = {}
    for key, value in asdict(summary).items():
        document[key] = value
        if key == "start":
            document["start_utc"] = None if summary.start is None else utc(summary.start)
        elif key == "last_t":
            document["duration"] = summary.duration
    return rounded(document)


def summary_json(summaries: list[InstanceSummary]) -> str:
    """The summaries as JSON Lines, one object per instance.

    >>> from orca.sample.readback.summary.records import InstanceSummary
    >>> bare = InstanceSummary("a.jsonl", "h", 1796016198.5, None, 7.0, 7.0, 1, 0, 0.2, *[None] * 8, (), 0.0, 0.0)
    >>> summary_json([bare])[:91]
    '{"name":"a.jsonl","host":"h","start":1796016198.5,"start_utc":"2026-11-30T05:23:18Z","cores'
    """
    return "".join(encoded(document(summary)) + "\n" for summary in summaries)


def encoded(value: object) -> str:
    """`value` as compact JSON; a whole number beyond 64 bits (bytes moved: a rate times a long `dt`), which orjson
    does not write, written as its digits."""
    import orjson  # here: a summary printed as text does without it

    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return orjson.dumps(_big_as_text(value)).decode()


def _big_as_text(value: object) -> object:
    if isinstance(value, dict):
        return {key: _big_as_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_big_as_text(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        import orjson

        return orjson.Fragment(str(value))
    return value
