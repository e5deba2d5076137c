"""Benchmarks of orca-sample against a psutil sampler (README, Performance); run with `python3 dev.py bench`."""
