"""The one gather: each run's lines read once, into everything `orca metrics` shows of it (`fold.py`): its times
(`times.py`), one fold per section of the line (`section.py` says what one is; `host.py`, `traffic.py`,
`pressure.py`, `containers.py`, `sampler.py`, `processes.py`, `limits.py`), and the chart's points (`points.py`).
What the fold gives is declared here too: a summary's records (`records.py`) and a run's series (`series.py`)."""
