"""Issue 4: `--cgroup`/`--names` containers and the host's pressure stall information."""
