# toolz ships no types; these are the functions orca-sample uses, typed so no Any leaks into the core.
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")

def groupby(key: Callable[[A], B], seq: Iterable[A]) -> dict[B, list[A]]: ...
def unique(seq: Iterable[A], key: Callable[[A], Hashable] | None = ...) -> Iterator[A]: ...
def keyfilter(predicate: Callable[[K], bool], d: Mapping[K, V]) -> dict[K, V]: ...
@overload
def pipe(data: A, f1: Callable[[A], B], /) -> B: ...
@overload
def pipe(data: A, f1: Callable[[A], B], f2: Callable[[B], C], /) -> C: ...
@overload
def pipe(data: A, f1: Callable[[A], B], f2: Callable[[B], C], f3: Callable[[C], D], /) -> D: ...
