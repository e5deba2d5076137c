"""The read side's I/O: where lines are read back from (`sources.py`, `s3_objects.py`), a large file read in parts
by several processes (`parts.py`), the newest minute read from a file's end (`newest.py`), and the chart drawn with
matplotlib (`plot.py`)."""
