"""Pure functions over snapshots: differences, rates, sums and the line encoder. No I/O (STYLE.md)."""
