"""A source's runs kept as the rows of its table (docs/metrics.md, "A file of many runs"): each run, as it closes,
made one compact row (`fleet/rows.py`), and what only `--json` or `--each` prints of it (its summary's document,
its block) written aside to a temporary file, so that memory grows by a row's 200 bytes or so a run. The first run is
kept whole too: a source of one run prints its block, not a table."""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import tempfile
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, TypeVar

from orca.sample.line_format import Sample
from orca.sample.readback.fleet.fields import BEGIN, LAST_T
from orca.sample.readback.fleet.line_row import line_rows, plain
from orca.sample.readback.fleet.records import Run
from orca.sample.readback.fleet.rows import Columns, Rows, compact
from orca.sample.readback.fleet.usage import USAGE, UsageSection
from orca.sample.readback.gather.records import InstanceSummary
from orca.sample.readback.gather.series import Series
from orca.sample.readback.runs import Run as FoldedRun
from orca.sample.readback.shell.shown import Shown, Totals

ASIDE_PIECE = 1 << 16
"""The texts aside are written a piece of this many bytes at a time."""
File = TypeVar("File", bound=IO[Any])
Done = TypeVar("Done")


def file_or_memory(stack: contextlib.ExitStack, on_disk: Callable[[], File], in_memory: Callable[[], File],
                   work: Callable[[File], Done]) -> tuple[File, Done]:
    """`work` done into a temporary file (`on_disk`), which `stack` then closes; done again into memory
    (`in_memory`) where no temporary file can hold it (none can be made, the disk is full), the file that failed
    closed at once, what it could not write dropped."""
    try:
        file = on_disk()
        try:
            done = work(file)
        except BaseException:
            with contextlib.suppress(OSError):
                file.close()
            raise
        stack.callback(file.close)
        return file, done
    except OSError:
        memory = in_memory()
        return memory, work(memory)


def nothing(_: InstanceSummary) -> str:
    """What is written aside of a run when only the table is printed."""
    return ""


def summary_document(summary: InstanceSummary) -> str:
    """What is written aside of a run for `--json`: its summary's document, encoded."""
    from orca.sample.readback.summary.as_json import document, encoded

    return encoded(document(summary))


class Aside:
    """Texts written to a temporary file one after the other, each read back by its number. Where no temporary file
    can hold them (none can be made: a read-only file system; the disk is full), they are held in memory from there
    on, those written before read back into it: what is shown is the same, at the cost of memory."""

    __slots__ = ("_empty", "_file", "_held", "_lengths", "_offsets", "_pending", "_size", "_written")

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._held: bytearray | None = None
        """Every text's bytes, once they are held in memory."""
        self._pending = bytearray()
        """The texts' bytes after those in the file, written in pieces of `ASIDE_PIECE` bytes."""
        self._written = 0
        """How many bytes the file holds: `os.write` says how many it took."""
        self._offsets, self._lengths = array("q"), array("q")
        self._size = 0
        self._empty = 0
        """How many texts, all empty, were added before the first that was not."""

    def add(self, text: str) -> None:
        if not text and not self._size:  # none written yet: nothing kept either
            self._empty += 1
            return
        if self._empty:
            self._offsets.extend(array("q", bytes(8 * self._empty)))
            self._lengths.extend(array("q", bytes(8 * self._empty)))
            self._empty = 0
        data = text.encode("utf-8", "surrogateescape")
        self._offsets.append(self._size)
        self._lengths.append(len(data))
        self._size += len(data)
        (self._pending if self._held is None else self._held).extend(data)
        if len(self._pending) >= ASIDE_PIECE:
            self._write()

    def __getitem__(self, index: int) -> str:
        if index < self._empty or not (length := self._lengths[index]):
            return ""
        at = self._offsets[index]
        if self._held is not None:
            data = bytes(self._held[at : at + length])
        else:
            in_file = max(0, min(length, self._written - at))  # a text may begin in the file and end pending
            data = b"" if not in_file or self._file is None else os.pread(self._file.fileno(), in_file, at)
            if in_file < length:
                data += self._pending[at + in_file - self._written : at + length - self._written]
        return data.decode("utf-8", "surrogateescape")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def _write(self) -> None:
        """The pending bytes written to the file (made at the first); held in memory with the file's when it fails."""
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile(buffering=0)  # noqa: SIM115 (closed by `close`)
            while self._pending:
                taken = os.write(self._file.fileno(), self._pending)
                del self._pending[:taken]
                self._written += taken
        except OSError:
            held = bytearray()
            if self._file is not None:
                held += os.pread(self._file.fileno(), self._written, 0) if self._written else b""
                self._file.close()
                self._file = None
            self._held = held + self._pending
            self._pending = bytearray()


@dataclass(slots=True)
class RowsKept(Shown):
    """Each run as it closes, kept as a row of `rows`, with `render(summary)` written aside (`aside`), and its series
    when drawn; the first run whole (`first`). In a part of a file read by another process (`elsewhere`), each run's
    row and text are written instead, one line each, and taken back in (`follow`)."""

    rows: Rows = field(default_factory=Rows)
    aside: Aside = field(default_factory=Aside)
    first: Run | None = None
    spilled: bool = False

    def show(self, name: str, run: FoldedRun) -> None:
        held = run.fold.held
        if held is not None and self.render is nothing and run.drawn is None and (self.first or self.spilled) \
                and plain(held):  # a run of one line, of the table alone
            self._plain(name, [held], lambda _: run)
            return
        self._folded(name, run)

    def _folded(self, name: str, run: FoldedRun) -> None:
        usage = next((section for section in run.fold.sections if section.key == USAGE), None)
        kept = run.fold.summary(name)
        if kept is None:
            return
        self.totals.add(kept)
        # Without the usage folded (a source read as one run's): no figure of a table, which one run does not print.
        whole = Run(kept, usage.usage() if isinstance(usage, UsageSection) else None)
        text = self.render(kept)
        if self.spilled:
            self.rows.add(compact(whole))
            if text:
                self.write(_record(_TEXT, text.encode("utf-8", "surrogateescape")))
        else:
            if self.first is None:
                self.first = whole
            self.rows.add(compact(whole))
            self.aside.add(text)
        if run.drawn is not None and (series := run.fold.series(name)) is not None:
            self.series.append((run.drawn, series))

    def takes_lines(self) -> bool:
        return self.render is nothing

    def clear(self) -> None:
        """Nothing shown: what was, forgotten (a source read again)."""
        self.aside.close()
        self.rows, self.aside, self.first = Rows(), Aside(), None
        self.totals, self.series = Totals(), []

    def show_lines(self, name: str, lines: Sequence[Sample], whole: Callable[[Sample], FoldedRun]) -> None:
        """Each a row made from its line alone when it can be (`line_rows`), else from its run's fold; the first run
        of the source is kept whole."""
        if self.render is not nothing:
            Shown.show_lines(self, name, lines, whole)
            return
        if self.first is None and not self.spilled:
            self.show(name, whole(lines[0]))
            lines = lines[1:]
        at = 0
        for place, ok in enumerate(list(map(plain, lines))):
            if not ok:
                self._plain(name, lines[at:place], whole)
                self._folded(name, whole(lines[place]))
                at = place + 1
        self._plain(name, lines[at:], whole)

    def _plain(self, name: str, lines: Sequence[Sample], whole: Callable[[Sample], FoldedRun]) -> None:
        """Runs of one line each, all `plain`, kept as rows; each with a rate too large to round, from its fold."""
        if not lines:
            return
        columns = _line_rows(lines)
        if columns is None:
            for line in lines:
                self.show(name, whole(line))
            return
        self.totals.count(len(lines), min(columns.floats[BEGIN]), max(columns.floats[LAST_T]), runs=len(lines))
        self.rows.extend(columns)

    def elsewhere(self, write: Callable[[bytes], None]) -> RowsKept:
        return RowsKept(self.render, write, spilled=True)

    def done(self) -> None:
        """In a part read by another process, its rows written after their texts, a piece of them a record."""
        if self.spilled:
            for piece in self.rows.pieces():
                self.write(_record(_ROWS, pickle.dumps(piece, pickle.HIGHEST_PROTOCOL)))

    def follow(self, totals: Totals, series: list[tuple[int, Series]], written: IO[bytes],
               places: dict[int, int]) -> None:
        """The runs another `RowsKept` wrote (each run's text, then the rows), kept after these (our own process's
        files: unpickled as written)."""
        offset = len(self.rows)
        while header := written.read(_HEADER.size):
            kind, length = _HEADER.unpack(header)
            data = written.read(length)
            if kind == _ROWS:
                self.rows.take(pickle.loads(data), offset)
            else:
                self.aside.add(data.decode("utf-8", "surrogateescape"))
        self.totals.merge(totals)
        self.series += [(places[order], one) for order, one in series if order in places]


_HEADER = struct.Struct("<cQ")
"""Before each record of a part's file: its kind and its length in bytes. The records are bytes as they are: C
arrays pickled, not said in text."""
_TEXT, _ROWS = b"t", b"r"
"""A run's text (UTF-8); a piece of the rows (`Rows.pieces`, pickled)."""


def _record(kind: bytes, data: bytes) -> bytes:
    return _HEADER.pack(kind, len(data)) + data


def _line_rows(lines: Sequence[Sample]) -> Columns | None:
    try:
        return line_rows(lines)
    except (OverflowError, ValueError):  # a rate too large to round: said as the fold says it
        return None
