"""Benchmarks of orca-sample against a psutil sampler (issue 5); run with `python3 dev.py bench`."""
