"""A run's summary as `orca metrics` prints it: the records it is made of (`records.py`, each section's defined beside
its fold in `readback/gather/`), for a person (`text.py`) and for a script (`as_json.py`)."""
