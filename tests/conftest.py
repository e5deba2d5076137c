"""Shared test settings: hypothesis's profiles."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# CI runs on a shared 2-core machine: no deadline per example, and a fixed example budget. Derandomized, so CI draws
# the same examples every run and an unrelated change never fails on a rare draw; exploring is `thorough`'s job.
settings.register_profile(
    "ci", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("dev", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
# Before a release, or after a parser change: ORCA_HYPOTHESIS_PROFILE=thorough draws new random examples, many of
# them, to shake out rare inputs that the fixed CI draws never reach.
settings.register_profile(
    "thorough", deadline=None, max_examples=5000, suppress_health_check=[HealthCheck.too_slow], derandomize=False
)
settings.load_profile(os.environ.get("ORCA_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
