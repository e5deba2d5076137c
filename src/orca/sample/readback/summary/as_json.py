"""The summaries as `orca metrics --json` prints them for a script: one JSON object per run and line, its keys the
summary's field names, each number with the decimals its record declares: the line's number types, so at the
precision of the lines (docs/metrics.md, "`--json`")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from functools import cache
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from msgspec import Meta

from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.words import utc


def _either(hint: object) -> tuple[object, ...]:
    """`hint`, and each type of it when it is a union (`Percent | None`)."""
    return (hint, *get_args(hint)) if get_origin(hint) in (Union, UnionType) else (hint,)


@cache
def places(hint: object) -> int | None:
    """The decimals a number type declares (the `places` of its `Meta`, as `line_format.py` gives them), through an
    `| None`; None for a type that declares none (a whole number, text).

    >>> from orca.sample.line_format import Percent, Seconds
    >>> places(Percent), places(Seconds | None), places(int)
    (1, 3, None)
    """
    for each in _either(hint):
        if get_origin(each) is Annotated:
            for meta in get_args(each)[1:]:
                if isinstance(meta, Meta) and meta.extra is not None and "places" in meta.extra:
                    return int(meta.extra["places"])
    return None


Write = Callable[[Any], object]


@cache
def declared(record: type) -> tuple[tuple[str, str, Write], ...]:
    """Each field of a record a summary (or a fleet) is made of: its name, its JSON key (the `json` of its metadata,
    else its name) and how `--json` writes it (`writer` of its type)."""
    hints = get_type_hints(record, include_extras=True)
    return tuple((field.name, field.metadata.get("json", field.name), writer(hints[field.name]))
                 for field in fields(record))


@cache
def writer(hint: object) -> Write:
    """How `--json` writes a value of the type `hint` (or None): a fraction with the decimals its type declares, a
    record as an object of its fields, a tuple as an array; the rest as it is. A fraction whose type declares no
    decimals is refused here, once, rather than written as it falls.

    >>> from orca.sample.line_format import Percent
    >>> from orca.sample.readback.gather.records import NetSummary
    >>> writer(Percent | None)(6.039999999999999), writer(tuple[NetSummary, ...])((NetSummary(1, 2, 3, 4),))
    (6.0, [{'in': 1, 'out': 2, 'in_peak': 3, 'out_peak': 4}])
    """
    if (decimals := places(hint)) is not None:
        return lambda value: None if value is None else round(value, decimals)
    for each in _either(hint):
        if isinstance(each, type) and is_dataclass(each):
            record = declared(each)
            return lambda value: None if value is None else {key: write(getattr(value, name))
                                                             for name, key, write in record}
        if get_origin(each) is tuple:
            item = writer(get_args(each)[0])
            return lambda value: None if value is None else [item(one) for one in value]
        if each is float:
            raise TypeError(f"a fraction must declare its decimals (its type's `places`): {hint}")
    return lambda value: value


def document(summary: InstanceSummary) -> dict[str, object]:
    """One run's JSON object, before encoding: every field of the summary, with `start_utc` after `start` (which
    run, as the text says it)."""
    document: dict[str, object] = {}
    for name, key, write in declared(InstanceSummary):
        document[key] = write(getattr(summary, name))
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
