"""/proc/<pid>/statm (proc(5)): sizes in pages; the second field is the resident set (docs/behaviour.md §3.4).

The kernel writes seven unsigned numbers on one line (fs/proc/array.c `proc_pid_statm`): size, resident, shared,
text, lib (always 0), data, dt (always 0). A zombie's is seven zeros. All seven must be there and be numbers: a
truncated read is a failure, not a smaller process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

from orca.sample.parse.numbers import U64_DIGITS, all_u64

_FIELDS = 7
_RESIDENT = itemgetter(1)


@dataclass(frozen=True, slots=True)
class Statm:
    size_pages: int
    resident_pages: int
    shared_pages: int


def _numbers(data: bytes) -> list[bytes] | None:
    """The seven fields, each checked to be an unsigned 64-bit decimal; None otherwise."""
    fields = data.split()
    return fields if len(fields) == _FIELDS and all_u64(fields) else None


def resident_pages(data: bytes) -> int | None:
    """The resident pages (second field) from the raw bytes of /proc/<pid>/statm; None exactly when `parse` fails.

    >>> resident_pages(b"730 448 420 5 0 89 0\\n")
    448
    >>> resident_pages(b"730 448") is None
    True
    """
    fields = _numbers(data)
    return None if fields is None else int(fields[1])


def resident_pages_each(datas: Sequence[bytes]) -> list[int] | None:
    """`resident_pages` of each of many statm files, when every one is seven decimals under 20 digits (as the kernel
    writes them: a tree's files, read in one batch); None when any is not, so the caller reads each through
    `resident_pages`, which tells the bad ones apart. The checks run over the whole batch at once, not per file.

    >>> resident_pages_each([b"730 448 420 5 0 89 0\\n", b"0 0 0 0 0 0 0\\n"]), resident_pages_each([])
    ([448, 0], [])
    >>> resident_pages_each([b"730 448 420 5 0 89 0\\n", b"730 448"]) is None
    True
    """
    fields = list(map(bytes.split, datas))
    if not fields:
        return []
    if set(map(len, fields)) != {_FIELDS}:
        return None
    every = list(chain.from_iterable(fields))
    if not b"".join(every).isdigit() or max(map(len, every)) >= U64_DIGITS:
        return None
    return list(map(int, map(_RESIDENT, fields)))


def parse(text: str) -> Statm | None:
    """Size, resident and shared pages; None unless the text is seven numbers of pages. A plain union, not a
    `Result`: nothing chains a process's statm, and the shell reads it by `resident_pages`.

    >>> parse("0 0 0 0 0 0 0\\n")
    Statm(size_pages=0, resident_pages=0, shared_pages=0)
    """
    fields = _numbers(text.encode("utf-8", "surrogatepass"))
    if fields is None:
        return None
    return Statm(size_pages=int(fields[0]), resident_pages=int(fields[1]), shared_pages=int(fields[2]))
