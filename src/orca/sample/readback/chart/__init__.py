"""What `orca metrics --plot` draws, as data: each run's values over time (`series.py`, folded in
`readback/gather/points.py`), the panels (`panels.py`), the time axis's ticks (`ticks.py`) and the words
(`titles.py`). The drawing itself is `readback/shell/plot.py`'s."""
