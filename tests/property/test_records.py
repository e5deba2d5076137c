"""`quick_init`: the frozen records made every line keep their dataclass's behaviour with the cheaper `__init__`."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import InitVar, dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.line import Line, PressureShare
from orca.sample.compute.snapshot import Snapshot
from orca.sample.parse.proc_stat import CpuTimes
from orca.sample.records import quick_init


@dataclass(frozen=True, slots=True)
class _Plain:
    name: str
    count: int
    share: float | None = None
    tags: tuple[str, ...] = ()


@quick_init
@dataclass(frozen=True, slots=True)
class _Quick:
    name: str
    count: int
    share: float | None = None
    tags: tuple[str, ...] = ()


values = st.tuples(st.text(max_size=5), st.integers(), st.none() | st.floats(allow_nan=False), st.lists(st.text()))


@given(values, st.integers(min_value=2, max_value=4), st.booleans())
def test_the_quick_init_stores_what_the_dataclass_init_stores(
    given_values: tuple[str, int, float | None, list[str]], how_many: int, by_keyword: bool
) -> None:
    name, count, share, tags = given_values
    arguments = (name, count, share, tuple(tags))[:how_many]
    if by_keyword:
        keywords = dict(zip(("name", "count", "share", "tags"), arguments, strict=False))
        plain, quick = _Plain(**keywords), _Quick(**keywords)  # type: ignore[arg-type]
    else:
        plain, quick = _Plain(*arguments), _Quick(*arguments)  # type: ignore[arg-type]
    assert dataclasses.astuple(quick) == dataclasses.astuple(plain)
    assert quick == _Quick(*dataclasses.astuple(plain))
    assert hash(quick) == hash(_Quick(*dataclasses.astuple(plain)))
    assert repr(quick).removeprefix("_Quick") == repr(plain).removeprefix("_Plain")
    assert pickle.loads(pickle.dumps(quick)) == quick
    assert dataclasses.replace(quick, count=count + 1).count == count + 1


def test_a_record_with_the_quick_init_is_still_frozen() -> None:
    times = CpuTimes(1, 2, 3, 4, 5, 6, 7, 8)
    share = PressureShare(cpu=1.0, memory=None, io=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        times.user = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        share.io = 0.0  # type: ignore[misc]
    assert (times.steal, share.memory) == (8, None)


def test_missing_or_unknown_arguments_are_refused_as_by_the_dataclass() -> None:
    with pytest.raises(TypeError):
        _Quick("only a name")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Quick("name", 1, colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Quick("name", 1, None, (), "one too many")  # type: ignore[call-arg]


def test_the_records_a_line_makes_have_it() -> None:
    for record in (CpuTimes, Snapshot, Line):
        assert record.__init__.__qualname__ == f"{record.__qualname__}.__init__"
        assert "_store_" in " ".join(record.__init__.__code__.co_names)


def test_classes_whose_init_does_more_are_refused() -> None:
    @dataclass(frozen=True, slots=True)
    class WithPostInit:
        value: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class WithFactory:
        values: list[int] = field(default_factory=list)

    @dataclass(frozen=True, slots=True)
    class WithKeywordOnly:
        value: int = field(kw_only=True)

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        value: int
        scale: InitVar[int]

    @dataclass(frozen=True, slots=True)
    class WithoutInit:
        value: int = field(init=False, default=0)

    @dataclass(slots=True)
    class NotFrozen:
        value: int

    for cls in (WithPostInit, WithFactory, WithKeywordOnly, WithInitVar, WithoutInit, NotFrozen):
        with pytest.raises(TypeError):
            quick_init(cls)
