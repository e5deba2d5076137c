"""What `orca metrics --plot` draws, as data, from each run's values over time (`readback/gather/series.py`): the
panels (`panels.py`), the time axis's ticks (`ticks.py`) and the words (`titles.py`). The drawing itself is
`readback/shell/plot.py`'s."""
