"""The line's shape declared once (`line_format.py`, docs/architecture.md): the encoder writes each record as its
declaration says and the typed decoder reads the same records back, for every field, one added later included.

Samples are drawn from the declarations themselves (every field of every record, each value as a line carries it:
decimals already at their places), so a field added to a record is drawn, written and read here with no edit."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import msgspec.inspect as mi
from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.encode import encode_line
from orca.sample.line_format import UNSET, Percent, Sample

texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)


def drawn(kind: mi.Type) -> st.SearchStrategy[Any]:
    """Values of `kind` as a line carries them."""
    if isinstance(kind, mi.UnionType):
        members = [member for member in kind.types if not isinstance(member, mi.NoneType | mi.CustomType)]
        optional = st.none() if any(isinstance(member, mi.NoneType) for member in kind.types) else st.nothing()
        unset = st.just(UNSET) if any(isinstance(member, mi.CustomType) for member in kind.types) else st.nothing()
        return st.one_of(optional, unset, *map(drawn, members))
    if isinstance(kind, mi.Metadata):
        places = (kind.extra or {}).get("places")
        if places is not None:
            most = getattr(kind.type, "le", None)  # the bound a reader takes, where the declaration has one
            top = 10**9 if most is None else min(10**9, int(most * 10**places))
            return st.integers(0, top).map(lambda n: n / 10**places)
        return drawn(kind.type)
    if isinstance(kind, mi.FloatType):
        raise AssertionError("a float in the line must declare its places")
    if isinstance(kind, mi.IntType):
        return st.integers(0, 2**64 - 1 if kind.le is None else kind.le)
    if isinstance(kind, mi.LiteralType):
        return st.sampled_from(kind.values)
    if isinstance(kind, mi.StrType):
        return texts
    if isinstance(kind, mi.VarTupleType):
        return st.lists(drawn(kind.item_type), max_size=3).map(tuple)
    if isinstance(kind, mi.StructType):
        return st.builds(kind.cls, **{field.name: drawn(field.type) for field in kind.fields})
    raise AssertionError(f"no values drawn for {kind!r}")


def records(record_type: type) -> st.SearchStrategy[Any]:
    return drawn(mi.type_info(record_type))


def written_keys(record: Any) -> list[Any]:
    """The keys `record` must be written with, nested as the line nests them, from its declaration."""
    info = mi.type_info(type(record))
    assert isinstance(info, mi.StructType)
    left_out: frozenset[str] = getattr(type(record), "LEFT_OUT_WHEN_NONE", frozenset())
    keys: list[Any] = []
    for field in info.fields:
        value = getattr(record, field.name)
        if value is UNSET or (value is None and field.name in left_out):
            continue
        if isinstance(value, msgspec.Struct):
            keys.append((field.encode_name, written_keys(value)))
        elif isinstance(value, tuple):
            items = [SCALAR if isinstance(item, str) else written_keys(item) for item in value]
            keys.append((field.encode_name, items))
        else:
            keys.append(field.encode_name)
    return keys


SCALAR = "a value"
"""What an element of an array of values (`run.command`'s texts) stands for in the shape of a line."""


def keys_of(document: Any) -> Any:
    if isinstance(document, dict):
        return [(key, keys_of(value)) if isinstance(value, dict | list) else key for key, value in document.items()]
    if isinstance(document, list):
        return [keys_of(item) for item in document]
    return SCALAR


def read_back(record: Sample) -> Any:
    """What the reader must see of `record`: the same values; no `containers` key reads as None."""
    return msgspec.structs.replace(record, containers=None) if record.containers is UNSET else record


@given(records(Sample))
def test_every_field_is_written_under_its_key_in_its_order(line: Sample) -> None:
    assert keys_of(json.loads(encode_line(line))) == written_keys(line)


@given(records(Sample))
def test_the_reader_decodes_what_the_encoder_wrote_into_the_same_records(line: Sample) -> None:
    assert msgspec.json.decode(encode_line(line), type=Sample) == read_back(line)


class Gpu(msgspec.Struct, frozen=True, gc=False):
    """A section a later version might add: one record of its own."""

    busy: Percent
    memory: int


class WithGpu(Sample, frozen=True, gc=False, kw_only=True):
    """`Sample` with one field more, as a new field is added: one field of one record, nothing else edited."""

    LEFT_OUT_WHEN_NONE = frozenset({"pressure", "gpu"})
    gpu: Gpu | None = None


@given(records(WithGpu))
def test_a_field_added_to_the_line_is_written_and_read_with_no_other_edit(line: WithGpu) -> None:
    written = json.loads(encode_line(line))
    assert keys_of(written) == written_keys(line)
    if line.gpu is not None:
        assert list(written)[-1] == "gpu"
        assert written["gpu"] == {"busy": line.gpu.busy, "memory": line.gpu.memory}
    assert msgspec.json.decode(encode_line(line), type=WithGpu) == read_back(line)
