"""The series of a source's runs: one `SeriesFold` per run (host and `start`), in the order each first appears."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from orca.sample.line_format import Sample
from orca.sample.readback.chart.series import MAX_POINTS, Series, SeriesFold

RunKey = tuple[str, float | None]
"""A run in a source: its host and its sampler's `start` (None for the lines of a sampler older than `start`)."""


class RunSeries:
    """The series folds of one source's lines, one per run (host and `start`) in the order each first appears.

    Parts of a source can be folded apart and merged in the order of their lines (`merge`): the series are those of
    one fold over the whole source."""

    __slots__ = ("folds", "max_points")

    def __init__(self, max_points: int = MAX_POINTS) -> None:
        self.folds: dict[RunKey, SeriesFold] = {}
        self.max_points = max_points

    def add(self, batch: Sequence[Sample]) -> None:
        """The next lines, in the order written."""
        if not batch:
            return
        host, start = batch[0].host, batch[0].start
        hosts, starts = [line.host for line in batch], [line.start for line in batch]
        if hosts.count(host) == len(batch) and starts.count(start) == len(batch):  # one run, the usual case
            self._fold_of((host, start)).add_lines(batch)
            return
        per_run: dict[RunKey, list[Sample]] = {}
        for line, key in zip(batch, zip(hosts, starts, strict=True), strict=True):
            per_run.setdefault(key, []).append(line)
        for key, lines in per_run.items():
            self._fold_of(key).add_lines(lines)

    def merge(self, later: RunSeries) -> None:
        """Take in the folds of the lines that follow these; `later` is not to be used again."""
        for key, fold in later.folds.items():
            self._fold_of(key).merge(fold)

    def series(self, name: str) -> list[Series]:
        """Each run's series, named `name`, and the host too when the source holds several."""
        hosts = {host for host, _ in self.folds}
        return [fold.series(name if len(hosts) == 1 else f"{name} ({host})") for (host, _), fold in self.folds.items()]

    def _fold_of(self, key: RunKey) -> SeriesFold:
        fold = self.folds.get(key)
        if fold is None:
            fold = self.folds[key] = SeriesFold(self.max_points)
        return fold


def run_series(batches: Iterable[Sequence[Sample]], max_points: int = MAX_POINTS) -> RunSeries:
    """The series folds of a source's lines, given in batches in the order written."""
    folds = RunSeries(max_points)
    for batch in batches:
        folds.add(batch)
    return folds
