"""`orca metrics`: its flags and sources (`metrics.py`), and a fleet's table (`fleet.py`)."""
