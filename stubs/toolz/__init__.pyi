# toolz ships no types; these are the functions orca-sample uses, typed so no Any leaks into the core.
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")
W = TypeVar("W")

def valmap(func: Callable[[V], W], d: Mapping[K, V]) -> dict[K, W]: ...
def keyfilter(predicate: Callable[[K], bool], d: Mapping[K, V]) -> dict[K, V]: ...
def unique(seq: Iterable[V], key: Callable[[V], Hashable] | None = ...) -> Iterator[V]: ...
