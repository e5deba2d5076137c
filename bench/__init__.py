"""Benchmarks of orca-sample against a psutil sampler (bench/README.md); run with `python3 dev.py bench`."""
