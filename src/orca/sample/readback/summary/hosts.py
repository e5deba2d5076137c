"""The summaries of one source's lines, one per instance: each host's lines of each run. A file or a log can hold
several hosts' lines (a pod's log collected with others, files joined with `cat`) and several runs' (a sampler
started again with the same `--out`): the lines' `start` tells one run of a host from another (docs/behaviour.md
§3.2), and lines of an older sampler, which have none, are one instance per host."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice

from orca.sample.line_format import Sample
from orca.sample.readback.summary.fold import InstanceFold
from orca.sample.readback.summary.records import InstanceSummary

BATCH_LINES = 1024
"""Lines `summarise` folds at a time."""


Instance = tuple[str, float | None]
"""A line's host and `start`: which instance it is of."""


class HostFolds:
    """The folds of one source's lines, one per instance (host and run) in the order each first appears.

    Parts of a source can be folded apart (by other processes) and merged in the order of their lines: the summaries
    are those of one fold over the whole source."""

    __slots__ = ("folds",)

    def __init__(self) -> None:
        self.folds: dict[Instance, InstanceFold] = {}

    def add(self, batch: Sequence[Sample]) -> None:
        """The next lines, in the order written."""
        if not batch:
            return
        hosts = [line.host for line in batch]
        starts = [line.start for line in batch]
        if hosts.count(hosts[0]) == len(hosts) and starts.count(starts[0]) == len(starts):  # the usual case
            self._fold_of((hosts[0], starts[0])).add_lines(batch)
            return
        per_instance: dict[Instance, list[Sample]] = {}
        for line, instance in zip(batch, zip(hosts, starts, strict=True), strict=True):
            per_instance.setdefault(instance, []).append(line)
        for instance, lines in per_instance.items():
            self._fold_of(instance).add_lines(lines)

    def merge(self, later: HostFolds) -> None:
        """Take in the folds of the lines that follow these (see `InstanceFold.merge`); `later` is not to be used
        again."""
        for instance, fold in later.folds.items():
            self._fold_of(instance).merge(fold)

    def summaries(self, name: str) -> list[InstanceSummary]:
        return [summary for fold in self.folds.values() if (summary := fold.summary(name)) is not None]

    def _fold_of(self, instance: Instance) -> InstanceFold:
        fold = self.folds.get(instance)
        if fold is None:
            fold = self.folds[instance] = InstanceFold()
        return fold


def fold_hosts(batches: Iterable[Sequence[Sample]]) -> HostFolds:
    """The folds of a source's lines, given in batches in the order written."""
    folds = HostFolds()
    for batch in batches:
        folds.add(batch)
    return folds


def summarise_hosts(name: str, batches: Iterable[Sequence[Sample]]) -> list[InstanceSummary]:
    """The summaries of one source's lines, one per instance (host and run) in the order each first appears (see
    `HostFolds`)."""
    return fold_hosts(batches).summaries(name)


def summarise(name: str, lines: Iterable[Sample]) -> InstanceSummary | None:
    """The summary of lines as one instance, whatever their hosts and runs, in the order written; None when there is
    none.

    >>> from orca.sample.line_format import CpuShare
    >>> lines = [Sample(v=1, t=10.0, dt=5.0, host="a", cpu=CpuShare(10.0, 2.0, 9.0, 0.0, 30.0), self_cpu=0.1),
    ...          Sample(v=1, t=15.0, dt=5.0, host="a", cpu=CpuShare(30.0, 4.0, 0.0, 0.0, 80.0), self_cpu=0.2)]
    >>> summary = summarise("a.jsonl", lines)
    >>> summary.cpu, summary.duration, summary.overhead_percent
    (CpuSummary(mean=23.0, p95=34.0, max=34.0, busiest_p95=80.0), 5.0, 2.0)
    """
    fold = InstanceFold()
    iterator = iter(lines)
    while batch := list(islice(iterator, BATCH_LINES)):
        fold.add_lines(batch)
    return fold.summary(name)
