"""The summaries as `orca metrics --json` prints them for a script: one JSON object per instance and line, its keys
the summary's field names, each number at the precision of the lines (README, "Looking at a run")."""

from __future__ import annotations

from dataclasses import asdict

from orca.sample.compute.report.summary import InstanceSummary

PLACES = {"first_t": 3, "last_t": 3, "duration": 3, "median_dt": 3, "self_cpu_seconds": 2, "overhead_percent": 2}
"""Decimals of the JSON summary's numbers that are not percentages: times as the lines carry them (milliseconds),
the sampler's CPU as `self_cpu` carries it, its overhead as the text prints it. Every other number with a fraction
is a percentage, one decimal like the lines'; byte counts are whole."""


def rounded(value: object, key: str = "") -> object:
    """A summary's `asdict` with each number at the precision of the lines (see `PLACES`).

    >>> rounded({"cpu": {"mean": 6.039999999999999}, "first_t": 1796032568.5170002, "mem": 5, "p": [12.0]})
    {'cpu': {'mean': 6.0}, 'first_t': 1796032568.517, 'mem': 5, 'p': [12.0]}
    """
    if isinstance(value, float):
        return round(value, PLACES.get(key, 1))
    if isinstance(value, dict):
        return {name: rounded(item, name) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item, key) for item in value]
    return value


def document(summary: InstanceSummary) -> object:
    """One instance's JSON object, before encoding: every field of the summary and its `duration`."""
    return rounded({**asdict(summary), "duration": summary.duration})


def summary_json(summaries: list[InstanceSummary]) -> str:
    """The summaries as JSON Lines, one object per instance.

    >>> from orca.sample.compute.report.summary import InstanceSummary
    >>> bare = InstanceSummary("a.jsonl", "h", None, 7.0, 7.0, 1, 0, 0.2, None, None, None, None, None, None, (),
    ...                        0.0, 0.0)
    >>> summary_json([bare])[:60]
    '{"name":"a.jsonl","host":"h","cores":null,"first_t":7.0,"las'
    """
    return "".join(_encoded(document(summary)) + "\n" for summary in summaries)


def _encoded(value: object) -> str:
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
