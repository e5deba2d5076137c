"""The fields of a run's compact row (`fleet/rows.py`), by name and by place, and the bits of its `bits`: declared
below the rows, the table's columns (`fleet/columns.py`), its text and `--json`, so that each of them can read a row
by its fields without importing the rows' module."""

FIELDS = ("host", "start", "begin", "first_t", "last_t", "duration", "lines", "cpu_percent", "cpu_p95",
          "memory_peak_percent", "memory_percent", "cpus", "memory_bytes", "rss_peak", "disk_peak_percent", "io_bytes",
          "net_bytes", "core_seconds_used", "core_seconds_available", "byte_seconds_used", "byte_seconds_available",
          "host_cpu_saturated_percent", "host_memory_peak_percent", "memory_pressure", "bits", "exit", "flags")
"""A compact row's fields, in order: the fleet row's figures, the usage the totals add up, what the hosts saturated
are judged by, how the command ended (code, signal, error) and the run's flags but the straggler's (which the other
runs decide). `--json` reads a row's figures by these names (`fleet/as_json.py`'s `held`)."""
(HOST, START, BEGIN, FIRST_T, LAST_T, DURATION, LINES, CPU, P95, MEMORY_PEAK, MEMORY_PERCENT, CPUS, MEMORY_BYTES, RSS,
 DISK, IO, NET, CORES_USED, CORES_AVAILABLE, BYTES_USED, BYTES_AVAILABLE, HOST_CPU, HOST_MEMORY, PRESSURE, BITS, EXIT,
 FLAGS) = range(len(FIELDS))
BIT_NAMES = {"usage": 1, "cpu_limited": 2, "cpu_own": 4, "memory_limited": 8, "memory_own": 16, "own_io": 32}
"""The bits of a row's `bits`, by their names in `--json`'s reading of a row (`fleet/columns.py`'s `Held`): whether
the run has a usage, and what its figures are of."""
USAGE_BIT, CPU_LIMITED, CPU_OWN, MEMORY_LIMITED, MEMORY_OWN, OWN_IO = BIT_NAMES.values()
