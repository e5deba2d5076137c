"""proc(5)'s process states that mean a process has ended: the one list every reader of processes judges by."""

DEAD_STATES = frozenset({"Z", "X", "x"})
"""`Z` zombie, `X` dead; `x` is how 2.6.33-3.13 kernels printed dead."""
