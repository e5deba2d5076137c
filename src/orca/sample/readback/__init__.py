"""The read side: sample lines read back, summarised and drawn (`orca metrics`, `read_samples`,
`read_newest_minute`; docs/metrics.md).

Everything here but `shell/` is pure (no I/O, no clock: `tests/test_boundary.py`), in the shape of the write side
run the other way:

- `lines.py`: a stream's bytes cut into complete lines in bounded memory; `backwards.py`: a line's start found
  reading backwards; `minute.py`: the newest minute of a file's lines.
- `exact.py`, `distinct.py`: the exact arithmetic folds are made of (sums, percentiles, counters, distinct names),
  the same however the lines were batched or cut into parts.
- `runs.py`: a source's lines into runs (host and `start`), in memory bounded in their number; `gather/`: each run's
  lines read once into all that is shown of it, mergeable with the fold of the lines after them (a file read in
  parts).
- `summary/`: the summaries as text and JSON; `chart/`: what `--plot` draws, as data: the panels, ticks and title.
- `shell/`: the I/O: the sources (a file, a directory, standard input, S3 objects), a large file read in parts by
  several processes, each run's summary written as it closes, the newest minute read from a file's end, and the
  drawing (matplotlib).
"""
