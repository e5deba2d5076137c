"""What `orca metrics` reports, computed from decoded lines (`line_format.Sample`), with no I/O (README, "Looking at
a run"):

- `fold.py`: one instance's summary folded from its lines in one pass, in memory that does not grow with them, and
  mergeable with the fold of the lines after them (a file read in parts); `exact.py` its exact arithmetic,
  `figures.py` the running figures of traffic and of each container, `summary.py` the records it gives, `hosts.py`
  one fold per host of a source.
- `series.py`: what `--plot` draws: the values over time, thinned.
"""
