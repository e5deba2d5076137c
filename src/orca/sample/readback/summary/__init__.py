"""A run's summary as `orca metrics` prints it, from the records the gather makes (`readback/gather/records.py`): for
a person (`text.py`) and for a script (`as_json.py`)."""
