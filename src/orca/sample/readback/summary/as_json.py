"""The summaries as `orca metrics --json` prints them for a script: one JSON object per run and line, its keys the
summary's field names, each number with the decimals its record declares: the line's number types, so at the
precision of the lines (docs/metrics.md, "`--json`")."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from functools import cache
from typing import Annotated, get_args, get_origin, get_type_hints

from msgspec import Meta

from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.summary.text import utc


@cache
def places(hint: object) -> int | None:
    """The decimals a number type declares (the `places` of its `Meta`, as `line_format.py` gives them), through an
    `| None`; None for a type that declares none (a whole number, text).

    >>> from orca.sample.line_format import Percent, Seconds
    >>> places(Percent), places(Seconds | None), places(int)
    (1, 3, None)
    """
    for each in (hint, *get_args(hint)):
        if get_origin(each) is Annotated:
            for meta in each.__metadata__:
                if isinstance(meta, Meta) and meta.extra is not None and "places" in meta.extra:
                    return int(meta.extra["places"])
    return None


@cache
def declared(record: type) -> tuple[tuple[str, str, int | None], ...]:
    """Each field of a record a summary is made of: its name, its JSON key (the `json` of its metadata, else its
    name) and its decimals (from its type)."""
    hints = get_type_hints(record, include_extras=True)
    return tuple((field.name, field.metadata.get("json", field.name), places(hints[field.name]))
                 for field in fields(record))


def plain(value: object, decimals: int | None = None) -> object:
    """A record as plain JSON values: each field under its JSON key, each number with the decimals its type declares
    (`decimals`, for `value` itself).

    >>> from orca.sample.readback.gather.records import NetSummary, PressureSummary
    >>> plain(PressureSummary(6.039999999999999, None, 12.0)), plain(NetSummary(1, 2, 3, 4))
    ({'cpu': 6.0, 'memory': None, 'io': 12.0}, {'in': 1, 'out': 2, 'in_peak': 3, 'out_peak': 4})
    """
    if isinstance(value, float):
        if decimals is None:
            raise TypeError("a fraction in a summary must declare its decimals (its type's `places`)")
        return round(value, decimals)
    if is_dataclass(value) and not isinstance(value, type):
        return {key: plain(getattr(value, name), places) for name, key, places in declared(type(value))}
    if isinstance(value, list | tuple):
        return [plain(item, decimals) for item in value]
    return value


def document(summary: InstanceSummary) -> object:
    """One run's JSON object, before encoding: every field of the summary, with `start_utc` after `start` (which
    run, as the text says it)."""
    document: dict[str, object] = {}
    for name, key, decimals in declared(InstanceSummary):
        document[key] = plain(getattr(summary, name), decimals)
        if name == "start":
            document["start_utc"] = None if summary.start is None else utc(summary.start)
    return document


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
