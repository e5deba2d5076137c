"""What a fleet calls each of its rows (docs/metrics.md, "A fleet"): the shortest end of its source's path that tells
the sources apart, then its host and start where one source holds several runs. The table, the lists, the chart and
`--json` all say this label."""

from __future__ import annotations

from collections.abc import Sequence

from orca.sample.readback.summary.text import utc


def run_labels(runs: Sequence[tuple[str, str, float | None]], names: Sequence[str] = ()) -> list[str]:
    """Each run's label, from its source's name, host and start (see `FleetRow.label`), told apart from the sources
    `names` too.

    >>> run_labels([("m/a.jsonl", "h", 1.0), ("m/b.jsonl", "h", 1.0)])
    ['a', 'b']
    >>> run_labels([("x/a.jsonl", "h", 1.0), ("y/a.jsonl", "h", 1.0)])
    ['x/a', 'y/a']
    >>> run_labels([("s3://l/n/7/metrics/w-3.jsonl", "h", 1.0), ("s3://l/n/8/metrics/w-3.jsonl", "h", 1.0)])
    ['7/w-3', '8/w-3']
    >>> run_labels([("a.jsonl", "h1", 1.0), ("a.jsonl", "h2", 1.0), ("a.jsonl", "h2", 3600.0)])
    ['a (h1)', 'a (h2) 00:00:01', 'a (h2) 01:00:00']
    """
    short = shortest_names(sorted({*names, *(name for name, _, _ in runs)}))
    hosts: dict[str, set[str]] = {}
    starts: dict[tuple[str, str], int] = {}
    for name, host, _ in runs:
        hosts.setdefault(name, set()).add(host)
        starts[(name, host)] = starts.get((name, host), 0) + 1
    labels = []
    for name, host, start in runs:
        label = short[name]
        if len(hosts[name]) > 1:
            label += f" ({host})"
        if starts[(name, host)] > 1:
            label += " " + ("before start" if start is None else utc(start)[11:19])
        labels.append(label)
    return labels


def shortest_names(names: Sequence[str]) -> dict[str, str]:
    """Each of `names` (distinct) by the fewest parts of its path, from its file's name up, that tell it from the
    others, without `.jsonl`: a directory is named only where it tells this name from those that share every part
    named so far (`.../7/metrics/w-3.jsonl` is `7/w-3` beside `.../8/metrics/w-3.jsonl`). Should two come out alike,
    each is its whole name.

    >>> shortest_names(["a/m/x.jsonl", "b/m/x.jsonl", "a/n/x.jsonl", "x.jsonl", "y.jsonl"])
    {'a/m/x.jsonl': 'a/m/x', 'b/m/x.jsonl': 'b/m/x', 'a/n/x.jsonl': 'n/x', 'x.jsonl': 'x', 'y.jsonl': 'y'}
    """
    parts = {name: name.removesuffix(".jsonl").split("/")[::-1] for name in names}
    # Only names of the same file name are rivals: grouped once, so a fleet of many instances is not a square.
    by_file: dict[str, list[str]] = {}
    for name, mine in parts.items():
        by_file.setdefault(mine[0], []).append(name)
    short: dict[str, str] = {}
    for name, mine in parts.items():
        rivals = [parts[other] for other in by_file[mine[0]] if other != name]
        kept = [mine[0]]
        level = 1
        while rivals and level < max(len(mine), *(len(theirs) for theirs in rivals)):
            part = mine[level] if level < len(mine) else None
            if any((theirs[level] if level < len(theirs) else None) != part for theirs in rivals):
                if part is not None:
                    kept.append(part)
                rivals = [theirs for theirs in rivals if (theirs[level] if level < len(theirs) else None) == part]
            level += 1
        short[name] = "/".join(kept[::-1])
    if len(set(short.values())) < len(short):
        return {name: name.removesuffix(".jsonl") for name in names}
    return short
