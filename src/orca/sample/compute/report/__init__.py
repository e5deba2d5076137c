"""What `orca metrics` reports, computed from decoded lines (`line_format.Sample`), with no I/O (README, "Looking at
a run"):

- `fold.py`: one instance's summary folded from its lines in one pass, in memory that does not grow with them, and
  mergeable with the fold of the lines after them (a file read in parts); `exact.py` its exact arithmetic,
  `figures.py` the running figures of traffic and of each container, `summary.py` the records it gives, `hosts.py`
  one fold per host of a source.
- `text.py` and `as_json.py`: the summaries as `orca metrics` prints them, for a person and for a script.
- `series.py` and `panels.py`: what `--plot` draws, as data: the values over time, thinned, and the panels.
- `parts.py`: how many parts a large file is read in.
"""
