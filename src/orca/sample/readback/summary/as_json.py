"""The summaries as `orca metrics --json` prints them for a script: one JSON object per run and line, its keys the
summary's field names, each number at the precision of the lines (docs/metrics.md, "`--json`")."""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.words import utc

PLACES = {"start": 3, "first_t": 3, "last_t": 3, "duration": 3, "median_dt": 3, "wall": 3, "self_cpu_seconds": 2,
          "overhead_percent": 2, "user": 2, "system": 2, "cpu_seconds": 2, "cpu_cores": 3, "cpu_max": 3}
"""Decimals of the JSON summary's numbers that are not percentages: times as the lines carry them (milliseconds),
CPU seconds as `self_cpu` and `run.exit` carry them (a top process's `cpu_seconds` too), the sampler's overhead as
the text prints it, CPUs as `cgroup.cpu_max` carries them. Every other number with a fraction is a percentage, one
decimal like the lines'; byte counts are whole."""
JSON_NAMES = {"received": "in", "sent": "out", "received_peak": "in_peak", "sent_peak": "out_peak"}
"""The keys of `net` as the line names them (`in` and `out` are not names a record's field can have)."""


def rounded(value: object, key: str = "") -> object:
    """A summary's record as plain JSON values, each number at the precision of the lines (see `PLACES`), and
    `net`'s keys as the line names them (`JSON_NAMES`).

    >>> rounded({"cpu": {"mean": 6.039999999999999}, "first_t": 1796032568.5170002, "mem": 5, "p": (12.0,)})
    {'cpu': {'mean': 6.0}, 'first_t': 1796032568.517, 'mem': 5, 'p': [12.0]}
    >>> from orca.sample.readback.gather.records import NetSummary
    >>> rounded(NetSummary(1, 2, 3, 4), "net")
    {'in': 1, 'out': 2, 'in_peak': 3, 'out_peak': 4}
    """
    if isinstance(value, float):
        return round(value, PLACES.get(key, 1))
    if is_dataclass(value) and not isinstance(value, type):
        value = {field.name: getattr(value, field.name) for field in fields(value)}
    if isinstance(value, dict):
        if key == "net":
            return {JSON_NAMES.get(name, name): rounded(item, name) for name, item in value.items()}
        return {name: rounded(item, name) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item, key) for item in value]
    return value


def document(summary: InstanceSummary) -> object:
    """One run's JSON object, before encoding: every field of the summary, with `start_utc` after `start` (which
    run, as the text says it)."""
    document: dict[str, object] = {}
    for field in fields(summary):
        document[field.name] = getattr(summary, field.name)
        if field.name == "start":
            document["start_utc"] = None if summary.start is None else utc(summary.start)
    return rounded(document)


def json_line(summary: InstanceSummary) -> str:
    """One run's summary as one line of JSON.

    >>> bare = InstanceSummary("a.jsonl", "h", 1796016198.5, None, 7.0, 7.0, 0.2, 1, 0, 0.2, *[None] * 8, (), 0.0,
    ...                        None)
    >>> json_line(bare)[:91]
    '{"name":"a.jsonl","host":"h","start":1796016198.5,"start_utc":"2026-11-30T05:23:18Z","cores'
    """
    return encoded(document(summary)) + "\n"


def summary_json(summaries: list[InstanceSummary]) -> str:
    """The summaries as JSON Lines, one object per run."""
    return "".join(map(json_line, summaries))


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
