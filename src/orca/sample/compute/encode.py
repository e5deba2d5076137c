"""The line encoder (docs/behaviour.md §3.1-3.10): one `Sample` to the exact bytes of one JSON line, as
`line_format` declares it.

Each record class's fields are turned into a plan once, when this module loads: each field's key, and how its value
is written (as it is, as text, with so many decimals, as a record, as records). A line is one walk of its records
along their plans, and one call of orjson.

Decimals are written as text fragments (`orjson.Fragment`) rather than rounded floats where orjson's shortest text
of the rounded float would not be the decimal text: beyond about 1e14 it loses the decimal or turns to exponents
(`1e+16`). Below that the rounded float goes to orjson as it is. Integers go as they are, the document being built
again with each integer checked only when orjson refuses one beyond 64 bits.
"""

from __future__ import annotations

import functools
import math
import re
from itertools import repeat
from typing import Any

import msgspec.inspect
import orjson

from orca.sample.line_format import Sample
from orca.sample.parse.numbers import U64_MAX

_I64_MIN = -(2**63)
# Beyond this, `str(int)` meets Python's 4300-digit limit; no counter comes within a googol of it.
_MAX_TEXT_BITS = 4000
EXACT_BELOW = {1: 1e14, 2: 1e13, 3: 1e12}
"""Places -> the magnitude below which orjson's text of `round(x, places)` is `decimals(x, places)`."""

_AS_IS, _TEXT, _DECIMAL, _RECORD, _RECORDS, _TEXTS = range(6)
Plan = tuple[tuple[str, str, int, Any, bool], ...]
"""Per field: its attribute, its key, how it is written (one of the six above), the decimals' bound and places or
the plan of its records, and whether None leaves it out."""


def fixed1(x: float) -> str:
    """`x` to one decimal, as JSON; `-0.0` and non-finite values give `0.0` (the documented API's `fixed1`).

    >>> [fixed1(v) for v in (99.0, 0.05, 0.15, -0.04, -2.26, float("nan"), 1e16)]
    ['99.0', '0.1', '0.1', '0.0', '-2.3', '0.0', '10000000000000000.0']
    """
    return decimals(x, 1)


def decimals(x: float, places: int) -> str:
    """`x` rounded to `places` decimals, as JSON, trailing zeros dropped but one: `5.0`, `0.42`, `1762250000.123`.

    `-0.0` and non-finite values give `0.0`. Below 10 ** (15 - places) in magnitude (where a double still tells
    every `places`-decimal value apart) this is exactly the text orjson gives `round(x, places)`; beyond, it is the
    correctly rounded decimal rather than the shortest text of the nearest double.

    >>> [decimals(v, 3) for v in (5.0, 0.2004, 1762250000.1234, -0.0001, float("inf"))]
    ['5.0', '0.2', '1762250000.123', '0.0', '0.0']
    """
    if not math.isfinite(x):
        return "0.0"
    text = f"{x:.{places}f}".rstrip("0")
    text = text + "0" if text.endswith(".") else text
    return "0.0" if text == "-0.0" else text


def encode_line(line: Sample) -> bytes:
    """The line's bytes, without a newline: its fields in `line_format`'s order, written as declared there (for a
    record with more fields than `Sample`'s, as its own declaration says)."""
    document = _document(line, plan_of(type(line)))
    try:
        return orjson.dumps(document)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits, which orjson does not write
        return orjson.dumps(_checked(document))


def _document(record: Any, plan: Plan) -> dict[str, Any]:
    """`record` as the JSON object its plan writes. One function for every record of a line, on purpose: a line is
    encoded after seconds asleep, when every function it touches is fetched again (bench/README.md)."""
    document: dict[str, Any] = {}
    for attribute, key, how, detail, left_out_when_none in plan:
        value = getattr(record, attribute)
        if value is None:
            if not left_out_when_none:
                document[key] = None
        elif how == _AS_IS:
            if value is not msgspec.UNSET:
                document[key] = value
        elif how == _DECIMAL:
            below, places = detail
            # `+ 0.0` makes `-0.0` and an int a float; beyond `below`, the exact text instead.
            document[key] = (
                round(value, places) + 0.0 if -below < value < below else orjson.Fragment(decimals(value, places))
            )
        elif how == _TEXT:
            document[key] = value if value.isascii() else _text(value)
        elif how == _RECORD:
            document[key] = _document(value, detail)
        elif how == _TEXTS:  # the first line's command only
            document[key] = [_text(text) for text in value]
        elif value is not msgspec.UNSET:  # _RECORDS
            document[key] = list(map(_document, value, repeat(detail)))
    return document


_NOT_A_BYTE = re.compile("[\ud800-\udc7f\udd00-\udfff]")
"""Lone surrogates other than surrogateescape's U+DC80 to U+DCFF, which stand for the bytes 0x80 to 0xFF."""


def _text(value: str) -> str:
    """`value` as orjson can write it (it refuses lone surrogates), with text that was not UTF-8 as the replacement
    character U+FFFD (docs/behaviour.md §3.1). Python decodes a path, an argument or a host name with
    surrogateescape, an undecodable byte becoming a lone surrogate: those bytes are decoded again as any UTF-8
    decoder reads them (`b"nu\\xff"` is `"nu\\ufffd"`); any other lone surrogate (a `\\ud800` in a config) is U+FFFD.

    >>> _text(b"a\\xffb caf\\xc3\\xa9".decode("utf-8", "surrogateescape")), _text("x\\ud800"), _text("caf\\u00e9")
    ('a\ufffdb café', 'x\ufffd', 'café')
    """
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raw = _NOT_A_BYTE.sub("\ufffd", value).encode("utf-8", "surrogateescape")
        return raw.decode("utf-8", "replace")
    return value


def _checked(value: object) -> object:
    """`value` with every integer orjson cannot write replaced as `_integer` writes it, at any depth."""
    if isinstance(value, dict):
        return {key: _checked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_checked(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return _integer(value)
    return value


def _integer(n: int) -> int | orjson.Fragment:
    """orjson writes 64-bit integers only; a larger one is written as text, an absurd one saturates."""
    if _I64_MIN <= n <= U64_MAX:
        return n
    if n.bit_length() < _MAX_TEXT_BITS:
        return orjson.Fragment(str(n))
    return U64_MAX if n > 0 else _I64_MIN


@functools.cache  # made once per record class: the declarations do not change
def plan_of(record_type: type) -> Plan:
    """How each field of `record_type` (a record of `line_format`) is written, from its declaration there."""
    info = msgspec.inspect.type_info(record_type)
    assert isinstance(info, msgspec.inspect.StructType)
    left_out: frozenset[str] = getattr(record_type, "LEFT_OUT_WHEN_NONE", frozenset())
    return tuple(
        (field.name, field.encode_name, *_how(field.type), field.name in left_out) for field in info.fields
    )


def _how(kind: msgspec.inspect.Type) -> tuple[int, Any]:
    """How a value of `kind` is written, and the detail that needs: `None` and `UNSET` in a union are the encoder's
    own rules, the one other type in it decides."""
    if isinstance(kind, msgspec.inspect.UnionType):
        (kind,) = [
            member for member in kind.types
            if not isinstance(member, msgspec.inspect.NoneType | msgspec.inspect.CustomType)
        ]
    extra = kind.extra if isinstance(kind, msgspec.inspect.Metadata) else None
    if isinstance(kind, msgspec.inspect.Metadata):
        kind = kind.type
    if isinstance(kind, msgspec.inspect.FloatType):
        places = (extra or {}).get("places")
        if places is None:
            raise TypeError("a float in the line must declare its decimals (`places`)")
        return _DECIMAL, (EXACT_BELOW[places], places)
    if isinstance(kind, msgspec.inspect.StrType):
        return _TEXT, None
    if isinstance(kind, msgspec.inspect.StructType):
        return _RECORD, plan_of(kind.cls)
    if isinstance(kind, msgspec.inspect.VarTupleType | msgspec.inspect.ListType):
        item = kind.item_type
        if isinstance(item, msgspec.inspect.StrType):
            return _TEXTS, None
        if not isinstance(item, msgspec.inspect.StructType):
            raise TypeError("a sequence in the line must be of records or of text")
        return _RECORDS, plan_of(item.cls)
    if isinstance(kind, msgspec.inspect.IntType | msgspec.inspect.LiteralType):
        return _AS_IS, None
    raise TypeError(f"no way to write {kind!r} in a line")


plan_of(Sample)  # when this module loads, not on the first line
