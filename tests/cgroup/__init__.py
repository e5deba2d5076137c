"""The sampler's own cgroup against its limits: fixture trees of v2 and v1, and live cgroups."""
