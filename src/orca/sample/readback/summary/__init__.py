"""One run's summary, folded from its lines in one pass (`fold.py`, `hosts.py`), the records it gives
(`records.py`), and the summaries as `orca metrics` prints them, for a person (`text.py`) and for a script
(`as_json.py`)."""
