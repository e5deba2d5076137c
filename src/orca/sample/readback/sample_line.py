"""One sample line read back: the JSON the sampler writes (docs/line.md) decoded into the records it was
written from, `line_format.Sample` and its parts.

One rule decides whether a line is good: one typed decoder built from `line_format`'s declarations checks the line
as it decodes it (the keys and their types, the bounds of each number), and a line it refuses is not a sample; the
reason says which field, in the declaration's terms (`mem.total is not a whole number >= 0`). Tolerant as
docs/line.md asks: the `orca-sample ` prefix of `--out -` is stripped, keys this version does not know are ignored,
a section written `null` or left out is None.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import msgspec

from orca.sample.line_format import PREFIX, Sample
from orca.sample.parse.errors import ParseError

if TYPE_CHECKING:
    # Loaded where used: `orca metrics` decodes its lines in batches and needs neither.
    import msgspec.inspect as declared
    from returns.result import Result

SOURCE = "sample line"
_PREFIX_BYTES = PREFIX.encode()
_DECODER = msgspec.json.Decoder(Sample)
_AT = re.compile(r"(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?")
_MISSING = re.compile(r"Object missing required field `(?P<key>[^`]*)`")
_INDEX = re.compile(r"\[\d+\]")


def decode_all(raws: Sequence[bytes]) -> tuple[list[Sample], list[tuple[bytes, ParseError]]]:
    """Many lines (each with or without its newline and the prefix): the samples in order, and each line that is not
    one with the reason. A batch of good lines without the prefix (a file's) is decoded in one go."""
    decode = _DECODER.decode
    try:
        return list(map(decode, raws)), []
    except (msgspec.DecodeError, RecursionError):
        pass
    good: list[Sample] = []
    bad: list[tuple[bytes, ParseError]] = []
    for raw in raws:
        try:
            good.append(decode(raw.removeprefix(_PREFIX_BYTES)))
        except msgspec.ValidationError as error:
            bad.append((raw, ParseError(SOURCE, refusal(str(error)))))
        except msgspec.DecodeError:
            bad.append((raw, ParseError(SOURCE, "not JSON")))
        except RecursionError:  # msgspec's limit on nesting, met in keys it would skip
            bad.append((raw, ParseError(SOURCE, "nested too deeply")))
    return good, bad


def parse(raw: str | bytes) -> Result[Sample, ParseError]:
    """One line (with or without its newline and the `orca-sample ` prefix) to a `Sample`; never raises.

    >>> line = ('orca-sample {"v":1,"t":1796016198.738,"dt":5.0,"host":"a","cores":2,"cpu":null,"mem":null,'
    ...         '"disk":null,"io":{"read":1,"write":2},"net":null,"future":[1]}')
    >>> sample = parse(line).unwrap()
    >>> (sample.t, sample.host, sample.cpu, sample.io, sample.pressure)
    (1796016198.738, 'a', None, IoRate(read=1, write=2), None)
    >>> parse('{"v":2,"t":1}').failure().reason
    'v is not 1'
    """
    from returns.result import Failure, Success

    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    good, bad = decode_all([data])
    return Success(good[0]) if good else Failure(bad[0][1])


parse_sample_line = parse
"""`parse` under the name `orca.sample` exports it by."""


def looks_like_sample(raw: str | bytes) -> bool:
    """Whether a log line was meant as a sample: it starts with the prefix or with `{`. A pod's log mixes the run's
    own output (not samples, not errors) with samples; only the latter count as bad when they don't parse.

    >>> [looks_like_sample(s) for s in ('orca-sample {"v":1}', '{"v":1}', 'INFO started', b'{')]
    [True, True, False, True]
    """
    if isinstance(raw, str):
        return raw.startswith((PREFIX, "{"))
    return raw.startswith((_PREFIX_BYTES, b"{"))


def refusal(message: str) -> str:
    """The decoder's reason for refusing a line, said in the terms of the line's declaration: which field, and what
    it must be.

    >>> refusal("Expected `int` >= 0 - at `$.disk[3].used`")
    'disk[].used is not a whole number >= 0'
    >>> refusal("Object missing required field `system` - at `$.cpu`"), refusal("Invalid enum value 2 - at `$.v`")
    ('cpu.system is not a finite number from 0 to 1,000,000', 'v is not 1')
    >>> refusal("Expected `object`, got `array`"), refusal("Object missing required field `v`")
    ('not a JSON object', 'v is not 1')
    """
    found = _AT.fullmatch(message)
    what, path = (message, "") if found is None else (found["what"], found["path"] or "")
    missing = _MISSING.fullmatch(what)
    if missing is not None:
        path = f"{path}.{missing['key']}"
    path = _INDEX.sub("[]", path).removeprefix(".")
    if not path:
        return "not a JSON object"
    kind = _declared_at(path)
    return f"{path} is not {_described(kind)}" if kind is not None else f"{path}: {what}"


def _declared_at(path: str) -> declared.Type | None:
    """The declared type of the field at `path` (`disk[].used`), None for a path the declaration does not have."""
    import msgspec.inspect as declared

    kind: declared.Type = _sample_type()
    for step in path.replace("[]", ".[]").split("."):
        kind = _unwrapped(kind)
        if step == "[]" and isinstance(kind, declared.VarTupleType | declared.ListType):
            kind = kind.item_type
        elif isinstance(kind, declared.StructType):
            field = next((field for field in kind.fields if field.encode_name == step), None)
            if field is None:
                return None
            kind = field.type
        else:
            return None
    return _unwrapped(kind)


@cache
def _sample_type() -> declared.Type:
    """`Sample` as the decoder sees it, worked out once (on the first refused line)."""
    import msgspec.inspect as declared

    return declared.type_info(Sample)


def _unwrapped(kind: declared.Type) -> declared.Type:
    """What a field holds when it holds something: the type inside `... | None`."""
    import msgspec.inspect as declared

    if isinstance(kind, declared.UnionType):
        present = [one for one in kind.types if not isinstance(one, declared.NoneType)]
        return present[0] if len(present) == 1 else kind
    return kind


def _described(kind: declared.Type) -> str:
    """What a value of `kind` must be, as a person reads it."""
    import msgspec.inspect as declared

    if isinstance(kind, declared.Metadata):
        kind = kind.type
    if isinstance(kind, declared.IntType | declared.FloatType):
        what = "a whole number" if isinstance(kind, declared.IntType) else "a finite number"
        low = kind.ge if kind.ge is not None else kind.gt
        if kind.le is None:
            return what if low is None else f"{what} >= {low}"
        return f"{what} from {_plain(low or 0)} to {_plain(kind.le)}"
    if isinstance(kind, declared.LiteralType):
        return " or ".join(map(str, kind.values))
    if isinstance(kind, declared.StrType):
        return "text"
    if isinstance(kind, declared.StructType):
        return "a JSON object"
    if isinstance(kind, declared.VarTupleType | declared.ListType):
        return "a JSON array"
    return "of the right kind"


def _plain(bound: float) -> str:
    """A bound as a person writes it: `10,000,000` rather than `1e7`."""
    return f"{int(bound):,}" if float(bound).is_integer() else f"{bound:,}"
