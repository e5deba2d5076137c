"""Pure functions over snapshots: differences, rates, sums and the line encoder. No I/O, no clock: every value is
computed from readings passed in, so it can be tested from records alone (docs/behaviour.md §7)."""
